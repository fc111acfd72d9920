package tests

import (
	"encoding/json"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// archiveLine is one line of an archive (geneva.archive_partition_rows).
type archiveLine struct {
	Workflow   map[string]any   `json:"workflow"`
	EndedOn    string           `json:"ended_on"`
	Executions []map[string]any `json:"executions"`
	Events     []map[string]any `json:"events"`
	Actions    []map[string]any `json:"actions"`
}

// archiveRows reads a page of a partition's lines.
func (b *testBundle) archiveRows(t *testing.T, name string, afterID int64, limit int) ([]int64, []archiveLine) {
	t.Helper()
	rows, err := b.conn.Query(b.ctx, "select workflow_id, line from geneva.archive_partition_rows($1, $2, $3)", name, afterID, limit)
	require.NoError(t, err)
	type row struct {
		WorkflowID int64
		Line       string
	}
	all, err := pgx.CollectRows(rows, pgx.RowToStructByPos[row])
	require.NoError(t, err)
	var ids []int64
	var lines []archiveLine
	for _, r := range all {
		var line archiveLine
		require.NoError(t, json.Unmarshal([]byte(r.Line), &line))
		require.Equal(t, float64(r.WorkflowID), line.Workflow["id"])
		ids = append(ids, r.WorkflowID)
		lines = append(lines, line)
	}
	return ids, lines
}

func TestArchivePartitionRows(t *testing.T) {
	t.Parallel()

	// One line a workflow, in id order: its row as get_workflow shows it,
	// its executions as step_history, its events, the actions naming it.
	t.Run("WritesEachWorkflowWhole", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		ids, name := archiveFixture(t, b)
		got, lines := b.archiveRows(t, name, 0, 1000)
		require.Equal(t, ids, got)

		for i, id := range ids {
			var workflow, history string
			require.NoError(t, b.conn.QueryRow(b.ctx, "select to_jsonb(geneva.get_workflow($1))::text", id).Scan(&workflow))
			require.NoError(t, b.conn.QueryRow(b.ctx,
				"select coalesce(jsonb_agg(to_jsonb(e) order by e.id), '[]')::text from geneva.step_history($1) e", id).Scan(&history))
			wantWorkflow, _ := json.Marshal(lines[i].Workflow)
			require.JSONEq(t, workflow, string(wantWorkflow))
			wantHistory, _ := json.Marshal(lines[i].Executions)
			require.JSONEq(t, history, string(wantHistory))
			require.Equal(t, "2030-01-01", lines[i].EndedOn)
		}
		require.Len(t, lines[0].Events, 1) // the event "go"
		require.Equal(t, "go", lines[0].Events[0]["name"])
		require.Len(t, lines[4].Actions, 1) // the operator's cancel
		require.Equal(t, "cancel_workflow", lines[4].Actions[0]["verb"])
	})

	// Pages by id; a partition detached by retention reads the same.
	t.Run("PagesAndReadsDetached", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		ids, name := archiveFixture(t, b)
		first, _ := b.archiveRows(t, name, 0, 2)
		require.Equal(t, ids[:2], first)
		rest, _ := b.archiveRows(t, name, first[1], 1000)
		require.Equal(t, ids[2:], rest)

		_, before := b.archiveRows(t, name, 0, 1000)
		b.detachByHand(t, name)
		_, after := b.archiveRows(t, name, 0, 1000)
		require.Equal(t, before, after)
	})

	t.Run("RefusesBadArguments", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		for sql, code := range map[string]string{
			"select * from geneva.archive_partition_rows('workflows_history_20000101')":       "P0002",
			"select * from geneva.archive_partition_rows('workflows')":                        "22023",
			"select * from geneva.archive_partition_rows('events_history_20000101')":          "22023",
			"select * from geneva.archive_partition_rows(null)":                               "22004",
			"select * from geneva.archive_partition_rows('workflows_history_20000101', null)": "22004",
			"select * from geneva.archive_partition_rows('workflows_history_20000101', 0, 0)": "22023",
		} {
			_, err := b.conn.Exec(b.ctx, sql)
			requireCode(t, err, code)
		}
	})
}
