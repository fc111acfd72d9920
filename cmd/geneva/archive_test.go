package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/internal/dbtest"
)

// movedWorkflows makes three ended workflows of type "Archived" at the
// test clock's 2030-01-01 (one finished, one canceled by an operator, one
// finished after an event) and moves them into history as housekeeping's
// move does (geneva._move_to_history, as the owner). It returns their ids.
func movedWorkflows(t *testing.T, url string) []int64 {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	require.NoError(t, err)
	defer conn.Close(ctx)
	exec := func(sql string, args ...any) {
		t.Helper()
		_, err := conn.Exec(ctx, sql, args...)
		require.NoError(t, err, sql)
	}
	exec("select set_config('geneva.fake_now', '2030-01-01T12:00:00Z', false)")
	exec(`select geneva.define_workflow('Archived', '{"steps": [{"name": "only"}]}')`)
	var ids []int64
	for i := range 3 {
		var id int64
		require.NoError(t, conn.QueryRow(ctx, "select geneva.create_workflow('Archived', 'User', $1)", fmt.Sprint(i)).Scan(&id))
		ids = append(ids, id)
	}
	exec("select geneva.send_event($1, 'note', '{\"n\": 1}')", ids[2])
	exec("select geneva.cancel_workflow($1)", ids[1])
	for _, id := range []int64{ids[0], ids[2]} {
		exec(`select geneva.complete_step(s.execution_id) from geneva.start_step(
			(select id from geneva.step_executions where workflow_id = $1 and state = 'scheduled')) s`, id)
	}
	var moved []int64
	require.NoError(t, conn.QueryRow(ctx, "select geneva._move_to_history($1)", ids).Scan(&moved))
	require.ElementsMatch(t, ids, moved)
	return ids
}

// withClock returns url with the test clock set to at for its sessions.
func withClock(url string, at string) string {
	separator := "?"
	if strings.Contains(url, "?") {
		separator = "&"
	}
	return url + separator + "geneva.fake_now=" + at
}

// `geneva show` and `geneva ls` show a workflow moved into history as they
// did live.
func TestShowAndListMoved(t *testing.T) {
	conf := dbtest.NewConfig(t)
	ids := movedWorkflows(t, conf.URL())
	url := withClock(conf.URL(), "2030-01-01T13:00:00Z")

	out, err := cli(t, url, "show", fmt.Sprint(ids[1]))
	require.NoError(t, err)
	require.Contains(t, out, "canceled")
	require.Contains(t, out, "cancel_workflow") // its action, from the action log
	out, err = cli(t, url, "show", fmt.Sprint(ids[2]), "--json")
	require.NoError(t, err)
	var shown struct {
		Workflow map[string]any   `json:"workflow"`
		Timeline []map[string]any `json:"timeline"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &shown), out)
	require.Equal(t, "finished", shown.Workflow["state"])
	require.Len(t, shown.Timeline, 1)
	require.Equal(t, "only", shown.Timeline[0]["step_name"])

	out, err = cli(t, url, "ls", "--type", "Archived", "--json")
	require.NoError(t, err)
	for _, id := range ids {
		require.Contains(t, out, fmt.Sprintf(`"id": %d`, id))
	}
}

// geneva archive writes a partition, then drops it; a crash between the two
// leaves the partition, and the next run writes it again and drops it.
func TestArchive(t *testing.T) {
	conf := dbtest.NewConfig(t)
	ids := movedWorkflows(t, conf.URL())
	// forty days on: with the default retention of 30 days, the day has expired
	operator := withClock(dbtest.URLAs(conf, dbtest.Operator), "2030-02-10T12:00:00Z")
	dir := filepath.Join(t.TempDir(), "archive")
	file := filepath.Join(dir, "workflows_2030-01-01.jsonl")

	archiveAfterWrite = func(string) error { return errors.New("crashed") }
	t.Cleanup(func() { archiveAfterWrite = func(string) error { return nil } })
	_, err := cli(t, operator, "archive", "--before", "2030-01-02", "--to", dir)
	require.ErrorContains(t, err, "crashed")
	require.Equal(t, ids, archivedIDs(t, file))
	out, err := cli(t, withClock(conf.URL(), "2030-01-01T13:00:00Z"), "show", fmt.Sprint(ids[0]))
	require.NoError(t, err, "not dropped")
	require.Contains(t, out, "finished")

	archiveAfterWrite = func(string) error { return nil }
	out, err = cli(t, operator, "archive", "--before", "2030-01-02", "--to", dir, "--json")
	require.NoError(t, err)
	var done []map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &done), out)
	require.Len(t, done, 1)
	require.Equal(t, "workflows_history_20300101", done[0]["partition"])
	require.Equal(t, file, done[0]["file"])
	require.EqualValues(t, 3, done[0]["written"])
	require.Equal(t, true, done[0]["dropped"])
	require.Equal(t, ids, archivedIDs(t, file))
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1, "no temporary file left")

	_, err = cli(t, withClock(conf.URL(), "2030-02-10T12:00:00Z"), "show", fmt.Sprint(ids[0]))
	require.ErrorContains(t, err, "not found")
	out, err = cli(t, operator, "archive", "--before", "2030-01-02", "--to", dir)
	require.NoError(t, err)
	require.Contains(t, out, "No history partitions end on or before 2030-01-02.")

	// what retention keeps is not archived
	_, err = cli(t, operator, "archive", "--before", "2030-01-12", "--to", dir)
	require.ErrorContains(t, err, "history is kept until 2030-01-11")
	for _, args := range [][]string{{"archive", "--to", dir}, {"archive", "--before", "2030-01-02"}, {"archive", "--before", "yesterday", "--to", dir}} {
		_, err = cli(t, operator, args...)
		var usage usageError
		require.ErrorAs(t, err, &usage, "%v", args)
	}
}

// A reader of history holding its tables: geneva archive writes the file,
// does not drop the partition (the drop waits for no reader), says so and
// exits with an error saying to run it again; the next run drops it.
func TestArchiveReadersHoldHistory(t *testing.T) {
	conf := dbtest.NewConfig(t)
	ids := movedWorkflows(t, conf.URL())
	operator := withClock(dbtest.URLAs(conf, dbtest.Operator), "2030-02-10T12:00:00Z")
	dir := filepath.Join(t.TempDir(), "archive")
	file := filepath.Join(dir, "workflows_2030-01-01.jsonl")

	ctx := context.Background()
	reader, err := pgx.Connect(ctx, conf.URL())
	require.NoError(t, err)
	defer reader.Close(ctx)
	tx, err := reader.Begin(ctx)
	require.NoError(t, err)
	var n int
	require.NoError(t, tx.QueryRow(ctx, "select count(*) from geneva.workflows_history").Scan(&n))
	require.Equal(t, len(ids), n)

	out, err := cli(t, operator, "archive", "--before", "2030-01-02", "--to", dir)
	require.ErrorContains(t, err, "1 of 1 partitions written but not dropped")
	require.ErrorContains(t, err, "run geneva archive again")
	require.Contains(t, out, "3 workflows written to "+file+"; not dropped: readers of history held it")
	require.Equal(t, ids, archivedIDs(t, file))
	out, err = cli(t, operator, "archive", "--before", "2030-01-02", "--to", dir, "--json")
	require.Error(t, err)
	var done []map[string]any
	require.NoError(t, json.Unmarshal([]byte(out[:strings.LastIndex(out, "]")+1]), &done), out)
	require.Len(t, done, 1)
	require.Equal(t, true, done[0]["busy"])
	require.Equal(t, false, done[0]["dropped"])

	require.NoError(t, tx.Commit(ctx))
	out, err = cli(t, operator, "archive", "--before", "2030-01-02", "--to", dir)
	require.NoError(t, err)
	require.Contains(t, out, "3 workflows written to "+file+"; dropped")
	require.Equal(t, ids, archivedIDs(t, file))
}

// archivedIDs reads an archive's workflow ids, line by line.
func archivedIDs(t *testing.T, file string) []int64 {
	t.Helper()
	f, err := os.Open(file)
	require.NoError(t, err)
	defer f.Close()
	var ids []int64
	scanner := bufio.NewScanner(f)
	scanner.Buffer(nil, 16<<20)
	for scanner.Scan() {
		var line struct {
			Workflow struct {
				ID int64 `json:"id"`
			} `json:"workflow"`
			EndedOn    string            `json:"ended_on"`
			Executions []json.RawMessage `json:"executions"`
		}
		require.NoError(t, json.Unmarshal(scanner.Bytes(), &line))
		require.Equal(t, "2030-01-01", line.EndedOn)
		require.Len(t, line.Executions, 1)
		ids = append(ids, line.Workflow.ID)
	}
	require.NoError(t, scanner.Err())
	return ids
}
