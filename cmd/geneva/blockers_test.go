package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/goclient"
	"github.com/geneva-dev/geneva/internal/protocol"
)

// geneva show says why a ready workflow's step has not started, with its
// numbers: a concurrency key's, a wait's due time, a queue no worker serves.
func TestShowWhyNotStarted(t *testing.T) {
	url := migrated(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	require.NoError(t, err)
	defer conn.Close(ctx)
	for name, definition := range map[string]string{
		"Sync":    `{"concurrency": {"by": "type", "limit": 1}, "steps": [{"name": "a"}]}`,
		"Later":   `{"steps": [{"name": "a", "wait": "1 hour"}]}`,
		"Billing": `{"steps": [{"name": "charge"}], "queue": "billing"}`,
	} {
		require.NoError(t, protocol.New(conn).DefineWorkflow(ctx, name, json.RawMessage(definition)))
	}
	client := goclient.New(conn)
	create := func(workflowType, heroID string) int64 {
		id, err := client.CreateWorkflow(ctx, workflowType, "User", heroID, nil)
		require.NoError(t, err)
		return id
	}
	running, waiter := create("Sync", "1"), create("Sync", "2")
	later, billing := create("Later", "1"), create("Billing", "1")
	for _, id := range []int64{running, waiter} {
		_, err := conn.Exec(ctx, `select geneva.start_step((select id from geneva.step_executions where workflow_id = $1))`, id)
		require.NoError(t, err)
	}
	// a worker serves the default queue, not billing
	_, err = conn.Exec(ctx, `insert into public.river_queue (name, created_at, updated_at, metadata)
		values ('default', now(), now(), '{}')`)
	require.NoError(t, err)

	out, err := cli(t, url, "show", fmt.Sprint(waiter))
	require.NoError(t, err)
	const line = "not started: held by the concurrency of Sync (key Sync): 1 in progress of 1, it is 1st of 1 waiting for a slot"
	require.Contains(t, out, line+"\n")
	operating, err := os.ReadFile("../../docs/operating.md")
	require.NoError(t, err)
	require.Contains(t, string(operating), "`"+line+"`", "docs/operating.md quotes it")
	out, err = cli(t, url, "show", fmt.Sprint(later))
	require.NoError(t, err)
	require.Regexp(t, `not started: its wait has not passed: due \d{4}-\d\d-\d\d \d\d:\d\d:\d\d \S+ \(in (59m5\ds|1h0m0s)\)\n`, out)
	out, err = cli(t, url, "show", fmt.Sprint(billing))
	require.NoError(t, err)
	require.Contains(t, out, "not started: due, but no worker serves the queue billing: no worker ever reported it; no fetch recorded\n")
	out, err = cli(t, url, "show", fmt.Sprint(running))
	require.NoError(t, err)
	require.NotContains(t, out, "not started")

	var shown struct {
		Blockers []map[string]any `json:"blockers"`
	}
	out, err = cli(t, url, "show", fmt.Sprint(waiter), "--json")
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal([]byte(out), &shown), out)
	require.Len(t, shown.Blockers, 1)
	require.Equal(t, "concurrency", shown.Blockers[0]["reason"])
	require.EqualValues(t, 1, shown.Blockers[0]["position"])

	// geneva stuck lists the queue no worker serves after the stuck
	// executions; --unserved lists those only
	out, err = cli(t, url, "stuck")
	require.NoError(t, err)
	require.Contains(t, out, "No stuck executions.\n")
	require.Regexp(t, fmt.Sprintf(`Due on a queue no worker serves:\nexecution .*\n\d+ +%d +Billing +User 1 +charge +billing +.*no worker ever reported it`, billing), out)
	out, err = cli(t, url, "stuck", "--unserved")
	require.NoError(t, err)
	require.NotContains(t, out, "stuck executions")
	require.Regexp(t, fmt.Sprintf(`\n\d+ +%d +Billing `, billing), out)
	out, err = cli(t, url, "stuck", "--unserved", "--json")
	require.NoError(t, err)
	var unserved []map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &unserved), out)
	require.Len(t, unserved, 1)
	require.EqualValues(t, billing, unserved[0]["workflow_id"])
	require.Equal(t, "billing", unserved[0]["queue"])
	_, err = cli(t, url, "stuck", "--unserved", "--runaways")
	require.ErrorContains(t, err, "give one")
}
