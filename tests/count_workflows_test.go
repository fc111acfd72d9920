package tests

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/internal/dbtest"
)

// countOf is count_workflows' row for a filter.
func countOf(t *testing.T, b *testBundle, q queryer, filter string) (int64, *int64) {
	t.Helper()
	rows, err := q.Query(b.ctx, "select workflows, newest_id from geneva.count_workflows($1::jsonb)", filter)
	require.NoError(t, err)
	row, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByPos[struct {
		Workflows int64
		NewestID  *int64
	}])
	require.NoError(t, err)
	return row.Workflows, row.NewestID
}

// bulkIDs are the workflows a bulk call matched: those it acted on (the
// action log's rows that name the call) and those that refused, newest
// first.
func bulkIDs(t *testing.T, b *testBundle, q queryer, r bulkResult) []int64 {
	t.Helper()
	rows, err := q.Query(b.ctx, "select workflow_id from geneva.action_log where bulk_action_id = $1", r.ActionID)
	require.NoError(t, err)
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	require.NoError(t, err)
	for _, refused := range r.Refused {
		ids = append(ids, refused.WorkflowID)
	}
	slices.SortFunc(ids, func(a, b int64) int { return int(b - a) })
	if len(ids) == 0 {
		return nil
	}
	return ids
}

func TestCountWorkflows(t *testing.T) {
	t.Parallel()

	t.Run("CountsWhatTheListLists", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		w := newFilterWorld(t, b)
		for _, tc := range w.cases() {
			n, newest := countOf(t, b, b.conn, tc.filter)
			require.Equal(t, int64(len(tc.want)), n, tc.name)
			if len(tc.want) == 0 {
				require.Nil(t, newest, tc.name)
			} else {
				require.Equal(t, tc.want[0], deref(newest), tc.name)
			}
		}
	})

	// The three functions read one filter: for every key, the list, the
	// count and a bulk call select the same workflows.
	t.Run("ABulkCallActsOnWhatItCounts", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		w := newFilterWorld(t, b)
		for _, tc := range w.cases() {
			tx, err := b.conn.Begin(b.ctx)
			require.NoError(t, err)
			n, newest := countOf(t, b, tx, tc.filter)
			listed := listIDs(t, b, tx, tc.filter, 100)
			r := bulkOn(t, b, tx, "pause", tc.filter, 1000)
			require.Equal(t, tc.want, listed, tc.name)
			require.Equal(t, tc.want, bulkIDs(t, b, tx, r), tc.name)
			require.Equal(t, n, int64(r.Matched), tc.name)
			if n > 0 {
				require.Equal(t, *newest, *r.LastID, tc.name)
			}
			require.NoError(t, tx.Rollback(b.ctx))
		}
	})

	// The dashboard counts, then acts on the counted ones only (up_to_id),
	// in batches (after_id), with the same filter.
	t.Run("TheDashboardActsOnThoseItCounted", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		w := newFilterWorld(t, b)
		n, newest := countOf(t, b, b.conn, `{"state": "paused"}`)
		require.Equal(t, int64(3), n)
		later := b.create(t, "Other", "9")
		b.call(t, "pause_workflow", later)

		filter := map[string]any{"state": "paused", "up_to_id": *newest}
		var acted []int64
		for {
			encoded, err := json.Marshal(filter)
			require.NoError(t, err)
			r := bulkOn(t, b, b.conn, "resume", string(encoded), 2)
			acted = append(acted, bulkIDs(t, b, b.conn, r)...)
			if !r.More {
				break
			}
			filter["after_id"] = *r.LastID
		}
		slices.Sort(acted)
		require.Equal(t, []int64{w.paused, w.failed, w.twice}, acted)
		require.Equal(t, "paused", b.workflow(t, later).State, "created after the count")
		n, newest = countOf(t, b, b.conn, `{"state": "paused"}`)
		require.Equal(t, int64(1), n)
		require.Equal(t, later, *newest)
	})

	t.Run("BadInput", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		newFilterWorld(t, b)
		for _, tc := range badFilters {
			_, err := b.conn.Exec(b.ctx, "select * from geneva.count_workflows($1::jsonb)", tc.filter)
			pgErr := requireCode(t, err, tc.code)
			require.Contains(t, pgErr.Message, tc.names)
		}
		for _, tc := range injections {
			_, err := b.conn.Exec(b.ctx, "select * from geneva.count_workflows($1::jsonb)", tc.filter)
			if tc.code != "" {
				requireCode(t, err, tc.code)
				continue
			}
			require.NoError(t, err, tc.filter)
			n, _ := countOf(t, b, b.conn, tc.filter)
			require.Zero(t, n, tc.filter)
		}
		_, err := b.conn.Exec(b.ctx, "select * from geneva.count_workflows(null)")
		requireCode(t, err, "22004")
		n, _ := countOf(t, b, b.conn, `{}`)
		require.Equal(t, int64(7), n, "nothing deleted")
	})

	t.Run("AReaderMayCountButNotAct", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		newFilterWorld(t, b)
		reader := dbtest.NewConnAs(t, b.conf, dbtest.Reader)
		n, _ := countOf(t, b, reader, `{"type": "ThreeSteps"}`)
		require.Equal(t, int64(5), n)
		_, err := reader.Exec(b.ctx, `select geneva.bulk_workflows('pause', '{"type": "ThreeSteps"}')`)
		requireCode(t, err, "42501")
	})
}
