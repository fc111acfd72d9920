package tests

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

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

	// A filter of a type, an ended state, both or neither is answered from
	// the folded counts (docs/history.md "What reads across it"): it is the
	// real count, with the same newest id, while the workflows are live,
	// after their move into history (some ended live since), after
	// retention drops a day, and after the fold.
	t.Run("FoldedCountsAreRealCounts", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.define(t, "One", `{"steps": [{"name": "only"}]}`)
		b.define(t, "Two", `{"steps": [{"name": "only"}]}`)
		end := func(workflowType, hero string, cancel bool) {
			id := b.create(t, workflowType, hero)
			if cancel {
				b.call(t, "cancel_workflow", id)
				return
			}
			b.complete(t, b.run(t, id).ExecutionID, "success", nil)
		}
		end("One", "a", false)
		end("One", "b", false)
		end("One", "c", true)
		end("Two", "d", false)
		b.setNow(t, t0.Add(24*time.Hour))
		end("One", "e", false)
		end("Two", "f", true)
		b.create(t, "One", "ongoing1")
		b.create(t, "Two", "ongoing2")

		filters := []string{`{}`, `{"type": "One"}`, `{"type": "Two"}`, `{"type": "Nope"}`,
			`{"state": "finished"}`, `{"state": "canceled"}`,
			`{"type": "One", "state": "finished"}`, `{"type": "One", "state": "canceled"}`, `{"type": "Two", "state": "canceled"}`}
		type rowQueryer interface {
			queryer
			QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
		}
		check := func(stage string, q rowQueryer) {
			t.Helper()
			for _, filter := range filters {
				var f struct {
					Type  *string `json:"type"`
					State *string `json:"state"`
				}
				require.NoError(t, json.Unmarshal([]byte(filter), &f))
				var want int64
				var wantNewest *int64
				require.NoError(t, q.QueryRow(b.ctx, `select count(*), max(w.id) from geneva._workflows_all w
					where ($1::text is null or w.workflow_type = $1) and ($2::text is null or w.state = $2)`,
					f.Type, f.State).Scan(&want, &wantNewest))
				n, newest := countOf(t, b, q, filter)
				require.Equal(t, want, n, "%s: %s", stage, filter)
				require.Equal(t, wantNewest, newest, "%s: %s", stage, filter)
			}
		}
		check("live", b.conn)

		b.setNow(t, t0.Add(26*time.Hour))
		require.Equal(t, 6, b.histRound(t, "").WorkflowsMoved)
		end("Two", "g", false) // ended, live
		check("moved", b.conn)

		// the first day's partition ended over a day ago (see TestHistory's
		// CountsFollowTheDropNotTheMove): its four workflows go
		b.setNow(t, t0.Add(38*time.Hour))
		require.Equal(t, 4, b.histRound(t, "p_retention => interval '1 day'").WorkflowsCleanedUp)
		check("dropped", b.conn)
		_, err := b.conn.Exec(b.ctx, "select geneva.housekeep()")
		require.NoError(t, err)
		check("folded", b.conn)

		// a workflow that ends is counted at once, in its transaction
		tx, err := b.conn.Begin(b.ctx)
		require.NoError(t, err)
		defer tx.Rollback(b.ctx) //nolint:errcheck
		var ongoing int64
		require.NoError(t, tx.QueryRow(b.ctx, "select id from geneva.workflows where hero_id = 'ongoing2'").Scan(&ongoing))
		_, err = tx.Exec(b.ctx, "select geneva.cancel_workflow($1)", ongoing)
		require.NoError(t, err)
		check("ended in the transaction", tx)
		n, newest := countOf(t, b, tx, `{"type": "Two", "state": "canceled"}`)
		require.Equal(t, ongoing, deref(newest))
		require.Equal(t, int64(2), n) // f, in history, and this one
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
