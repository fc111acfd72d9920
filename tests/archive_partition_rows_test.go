package tests

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

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

// The recipe of docs/history.md ("Archive"): an archive file loaded back
// into another database by examples/psql/archive_load.sql, and read there.
func TestArchiveLoadRecipe(t *testing.T) {
	t.Parallel()
	psql := requirePsql(t)
	b := setup(t)
	ids, name := archiveFixture(t, b)

	// the file, as geneva archive writes it: one line a workflow
	rows, err := b.conn.Query(b.ctx, "select line from geneva.archive_partition_rows($1)", name)
	require.NoError(t, err)
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	file := filepath.Join(t.TempDir(), "workflows_2030-01-01.jsonl")
	require.NoError(t, os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o600))

	const script = "../examples/psql/archive_load.sql"
	doc, err := os.ReadFile("../docs/history.md")
	require.NoError(t, err)
	require.Contains(t, string(doc), "psql -X -d inspect -f examples/psql/archive_load.sql < workflows_2026-11-28.jsonl")
	text, err := os.ReadFile(script)
	require.NoError(t, err)
	s := string(text)
	quoted := s[strings.Index(s, "-- 2. Views"):strings.Index(s, "create or replace view archive.executions")]
	require.Contains(t, string(doc), strings.TrimSpace(quoted), "docs/history.md no longer quotes %s", script)

	inspect := setup(t) // another database
	ctx, cancel := context.WithTimeout(b.ctx, time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, psql, "-X", "-d", inspect.conf.URL(), "-f", script)
	in, err := os.Open(file)
	require.NoError(t, err)
	defer in.Close()
	cmd.Stdin = in
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Contains(t, string(out), "COPY 5")
	require.Regexp(t, `Hist\s+\|\s+finished\s+\|\s+1`, string(out))
	require.Regexp(t, `Boom\s+\|\s+first try`, string(out))

	var workflows, executions, events, actions int
	require.NoError(t, inspect.conn.QueryRow(b.ctx, `select (select count(*) from archive.workflows),
		(select count(*) from archive.executions), (select count(*) from archive.events),
		(select count(*) from archive.actions)`).Scan(&workflows, &executions, &events, &actions))
	// events: "go" and the parent's join (geneva:children); actions: the
	// send_event and the cancel
	require.Equal(t, []int{len(ids), 8, 2, 2}, []int{workflows, executions, events, actions})
	var canceled string
	require.NoError(t, inspect.conn.QueryRow(b.ctx,
		"select state from archive.workflows where id = $1", ids[4]).Scan(&canceled))
	require.Equal(t, "canceled", canceled)
}
