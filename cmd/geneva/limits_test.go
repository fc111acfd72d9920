package main

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/goclient"
	"github.com/geneva-dev/geneva/internal/protocol"
)

func TestLimitsAndLimitDefine(t *testing.T) {
	url := migrated(t)

	out, err := cli(t, url, "limits")
	require.NoError(t, err)
	require.Contains(t, out, "No limit is in use.")
	out, err = cli(t, url, "limits", "--json")
	require.NoError(t, err)
	require.JSONEq(t, "[]", out)

	// usage errors, before connecting
	for args, message := range map[string][]string{
		"limit define needs --concurrency, --rate (with --per) or both": {"limit", "define", "api"},
		"--rate needs --per":                        {"limit", "define", "api", "--rate", "10"},
		"--per goes with --rate":                    {"limit", "define", "api", "--concurrency", "1", "--per", "1s"},
		"--by is none, group, hero, type or parent": {"limit", "define", "api", "--concurrency", "1", "--by", "tenant"},
		"limit define takes one limit name":         {"limit", "define", "--concurrency", "1"},
		"--concurrency must be at least 1":          {"limit", "define", "api", "--concurrency", "-1"},
	} {
		_, err := cli(t, "", message...)
		require.ErrorContains(t, err, args)
		require.ErrorAs(t, err, new(usageError))
	}

	out, err = cli(t, url, "limit", "define", "payments_api", "--rate", "100", "--per", "2400h", "--concurrency", "5", "--by", "group")
	require.NoError(t, err)
	require.Equal(t, "limit payments_api: at most 5 in progress and 100 starts per 2400h0m0s, per group\n", out)
	out, err = cli(t, url, "limit", "define", "smtp", "--concurrency", "1")
	require.NoError(t, err)
	require.Equal(t, "limit smtp: at most 1 in progress, for all (one key)\n", out)

	// a type of its own concurrency 1 per group whose step names
	// payments_api: acme runs one and waits for one; globex runs one
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	require.NoError(t, err)
	defer conn.Close(ctx)
	client, worker := goclient.New(conn), protocol.New(conn)
	require.NoError(t, worker.DefineWorkflow(ctx, "TenantSync", json.RawMessage(`{
		"concurrency": {"by": "group", "limit": 1},
		"steps": [{"name": "charge", "limits": ["payments_api"]}]}`)))
	var ids []int64
	for i, group := range []string{"acme", "acme", "globex"} {
		id, err := client.CreateWorkflow(ctx, "TenantSync", "Account", fmt.Sprint(i), &goclient.CreateWorkflowOpts{Group: group})
		require.NoError(t, err)
		history, err := client.StepHistory(ctx, id)
		require.NoError(t, err)
		_, err = worker.StartStep(ctx, history[0].ID, protocol.PreconditionNone)
		require.NoError(t, err)
		ids = append(ids, id)
	}

	out, err = cli(t, url, "limits")
	require.NoError(t, err)
	require.Regexp(t, `limit +kind +key +in progress +waiting +waiting since +starts in window +window ends`, out)
	require.Regexp(t, `(?m)^TenantSync +concurrency +acme +1/1 +1 +\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \S+ *$`, out)
	require.Regexp(t, `(?m)^TenantSync +concurrency +globex +1/1 +0 *$`, out)
	require.Regexp(t, `(?m)^payments_api +limit +acme +1/5 +0 +1/100 +\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \S+ \(in \d+d\d\dh\)$`, out)

	out, err = cli(t, url, "limits", "--json")
	require.NoError(t, err)
	var usage []map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &usage))
	require.Len(t, usage, 4)
	// by kind (concurrency, limit, rate_limit), limit and key
	require.Equal(t, "TenantSync", usage[0]["limit_name"])
	require.Equal(t, "acme", usage[0]["key"])
	require.EqualValues(t, 1, usage[0]["waiting"])
	require.Equal(t, "payments_api", usage[2]["limit_name"])
	require.EqualValues(t, 1, usage[2]["starts_in_window"])
	require.EqualValues(t, 100, usage[2]["rate"])

	// ls and show name the group
	out, err = cli(t, url, "ls")
	require.NoError(t, err)
	require.Regexp(t, `id +type +hero +group +state`, out)
	require.Regexp(t, fmt.Sprintf(`(?m)^%d +TenantSync +Account 2 +globex +performing`, ids[2]), out)
	out, err = cli(t, url, "ls", "--group", "acme")
	require.NoError(t, err)
	require.Regexp(t, fmt.Sprintf(`(?m)^%d +TenantSync +Account 1 +acme +ready +charge +`, ids[1]), out)
	require.Regexp(t, fmt.Sprintf(`(?m)^%d +TenantSync +Account 0 +acme +performing +charge \(running\)`, ids[0]), out)
	require.NotContains(t, out, "globex")
	out, err = cli(t, url, "ls", "--group", "acme", "--state", "ready", "--json")
	require.NoError(t, err)
	var listed struct{ Workflows []map[string]any }
	require.NoError(t, json.Unmarshal([]byte(out), &listed))
	require.Len(t, listed.Workflows, 1)
	require.EqualValues(t, ids[1], listed.Workflows[0]["id"], "as ls --json has them")
	require.Equal(t, "acme", listed.Workflows[0]["group_name"])
	out, err = cli(t, url, "show", fmt.Sprint(ids[0]))
	require.NoError(t, err)
	require.Contains(t, out, fmt.Sprintf("workflow %d: TenantSync for Account 0 of group acme — performing", ids[0]))
}
