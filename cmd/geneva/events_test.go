package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/goclient"
	"github.com/geneva-dev/geneva/internal/dbtest"
	"github.com/geneva-dev/geneva/internal/protocol"
)

// setUpAwaiting defines Expense, whose first step awaits "approved" for two
// days (then pauses), and creates two expenses of hero Claim 1 and 2,
// returning their ids.
func setUpAwaiting(t *testing.T, url string) (first, second int64) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	require.NoError(t, err)
	defer conn.Close(ctx)
	client := goclient.New(conn)
	require.NoError(t, protocol.New(conn).DefineWorkflow(ctx, "Expense", json.RawMessage(`{"steps":[
		{"name":"approve","await":{"event":"approved","timeout":"2 days","on_timeout":"pause"}},
		{"name":"reimburse"}]}`)))
	first, err = client.CreateWorkflow(ctx, "Expense", "Claim", "1", nil)
	require.NoError(t, err)
	second, err = client.CreateWorkflow(ctx, "Expense", "Claim", "2", nil)
	require.NoError(t, err)
	return first, second
}

// eventPayloads returns the payloads of the events sent to a workflow, in
// order ("" for none).
func eventPayloads(t *testing.T, url string, workflowID int64) []string {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	require.NoError(t, err)
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, "select coalesce(payload::text, '') from geneva.events where workflow_id = $1 order by id", workflowID)
	require.NoError(t, err)
	payloads, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	return payloads
}

func TestEventsAndSendEvent(t *testing.T) {
	url := migrated(t)

	out, err := cli(t, url, "events")
	require.NoError(t, err)
	require.Contains(t, out, "No step awaits an event.")
	out, err = cli(t, url, "events", "--json")
	require.NoError(t, err)
	require.JSONEq(t, "[]", out)

	first, second := setUpAwaiting(t, url)
	welcome, _ := setUp(t, url) // awaits nothing

	out, err = cli(t, url, "events")
	require.NoError(t, err)
	require.Regexp(t, `workflow +type +hero +state +step +event +waiting since +timeout at +then`, out)
	require.Regexp(t, fmt.Sprintf(`(?m)^%d +Expense +Claim 1 +ready +approve +approved +\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \S+ +`+
		`\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \S+ \(in (2d00h|47h59m)\) +pause$`, first), out)
	require.Contains(t, out, fmt.Sprintf("\n%d ", second))
	require.NotContains(t, out, "Welcome")

	out, err = cli(t, url, "events", "--limit", "1")
	require.NoError(t, err)
	require.Contains(t, out, "The 1 whose timeout comes first, of 2 (--limit).")
	out, err = cli(t, url, "events", "--event", "shipped")
	require.NoError(t, err)
	require.Contains(t, out, "No step awaits an event.")

	var listed []map[string]any
	out, err = cli(t, url, "events", "--type", "Expense", "--json")
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal([]byte(out), &listed), out)
	require.Len(t, listed, 2)
	require.EqualValues(t, first, listed[0]["workflow_id"])
	require.Equal(t, "approved", listed[0]["event"])
	require.Equal(t, "approve", listed[0]["step_name"])
	require.Equal(t, "pause", listed[0]["on_timeout"])
	waitingSince, err := time.Parse(time.RFC3339Nano, listed[0]["waiting_since"].(string))
	require.NoError(t, err)
	timeoutAt, err := time.Parse(time.RFC3339Nano, listed[0]["timeout_at"].(string))
	require.NoError(t, err)
	require.Equal(t, 48*time.Hour, timeoutAt.Sub(waitingSince))

	// to one workflow, with a payload
	out, err = cli(t, url, "send-event", fmt.Sprint(first), "approved", "--payload", `{"by": "ann"}`)
	require.NoError(t, err)
	require.Equal(t, fmt.Sprintf("sent approved to workflow %d\n", first), out)
	require.Equal(t, []string{`{"by": "ann"}`}, eventPayloads(t, url, first))
	out, err = cli(t, url, "events", "--json")
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal([]byte(out), &listed), out)
	require.Len(t, listed, 1, "the first no longer awaits")
	require.EqualValues(t, second, listed[0]["workflow_id"])

	// to every ongoing workflow of a hero, without a payload
	out, err = cli(t, url, "send-event", "--hero", "Claim:2", "approved", "--json")
	require.NoError(t, err)
	require.JSONEq(t, `{"hero_type": "Claim", "hero_id": "2", "event": "approved", "workflows_reached": 1}`, out)
	require.Equal(t, []string{""}, eventPayloads(t, url, second))
	out, err = cli(t, url, "send-event", "--hero", "User:1", "noted")
	require.NoError(t, err)
	require.Equal(t, "sent noted to 1 ongoing workflow of User 1\n", out)
	require.Equal(t, []string{""}, eventPayloads(t, url, welcome), "kept for a step that may await it later")
	out, err = cli(t, url, "events")
	require.NoError(t, err)
	require.Contains(t, out, "No step awaits an event.")

	// a delivery repeated, by its key; a workflow started on the event
	out, err = cli(t, url, "send-event", fmt.Sprint(second), "noted", "--key", "d-1")
	require.NoError(t, err)
	require.Equal(t, fmt.Sprintf("sent noted to workflow %d\n", second), out)
	out, err = cli(t, url, "send-event", fmt.Sprint(second), "noted", "--key", "d-1")
	require.NoError(t, err)
	require.Equal(t, fmt.Sprintf("workflow %d has an event with key d-1 already: nothing was sent\n", second), out)
	require.Len(t, eventPayloads(t, url, second), 2)
	for range 2 {
		out, err = cli(t, url, "send-event", "--hero", "Claim:9", "approved", "--key", "w-1", "--start", "Expense", "--json")
		require.NoError(t, err)
	}
	require.JSONEq(t, `{"hero_type": "Claim", "hero_id": "9", "event": "approved", "workflows_reached": 0}`, out,
		"the second delivery: nothing")
	out, err = cli(t, url, "ls", "--type", "Expense", "--json")
	require.NoError(t, err)
	var ls struct {
		Workflows []map[string]any `json:"workflows"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &ls), out)
	require.Len(t, ls.Workflows, 3, "the two, and the one started for Claim 9")

	// to an ended workflow: nothing, and it says so
	_, err = cli(t, url, "cancel", fmt.Sprint(welcome))
	require.NoError(t, err)
	out, err = cli(t, url, "send-event", fmt.Sprint(welcome), "noted")
	require.NoError(t, err)
	require.Equal(t, fmt.Sprintf("workflow %d has ended: nothing was sent\n", welcome), out)
	out, err = cli(t, url, "send-event", fmt.Sprint(welcome), "noted", "--json")
	require.NoError(t, err)
	require.JSONEq(t, fmt.Sprintf(`{"workflow_id": %d, "event": "noted", "sent": false}`, welcome), out)
	require.Len(t, eventPayloads(t, url, welcome), 1)

	// the engine's refusals, in its words
	_, err = cli(t, url, "send-event", "12345", "approved")
	require.ErrorContains(t, err, "12345")
	require.ErrorContains(t, err, "not found")
	_, err = cli(t, url, "send-event", fmt.Sprint(second), "")
	require.Error(t, err)
	var usage usageError
	require.False(t, errors.As(err, &usage), "refused by the engine, not the command line")
}

func TestSendEventUsageErrors(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"send-event"}, "send-event takes a workflow id and an event name"},
		{[]string{"send-event", "1"}, "send-event takes a workflow id and an event name"},
		{[]string{"send-event", "1", "approved", "more"}, "send-event takes a workflow id and an event name"},
		{[]string{"send-event", "--hero", "Claim:1"}, "send-event --hero TYPE:ID takes one event name"},
		{[]string{"send-event", "--hero", "Claim:1", "1", "approved"}, "send-event --hero TYPE:ID takes one event name"},
		{[]string{"send-event", "--hero", "Claim", "approved"}, "--hero takes TYPE:ID"},
		{[]string{"send-event", "1", "approved", "--start", "Expense"}, "--start takes --hero TYPE:ID"},
		{[]string{"send-event", "1", "approved", "--payload", "{not json"}, "--payload is not JSON: {not json"},
		{[]string{"send-event", "1", "approved"}, "no database"},
		{[]string{"events", "x"}, "events takes no arguments"},
	} {
		_, err := cli(t, "", tt.args...)
		require.ErrorContains(t, err, tt.want, "geneva %v", tt.args)
		var usage usageError
		require.True(t, errors.As(err, &usage), "geneva %v: a usage error (exit status 2)", tt.args)
	}
	_, err := cli(t, "", "send-event", "x", "approved")
	require.ErrorContains(t, err, `"x" is not a workflow id`)
}

// Listing and sending events needs no more than the geneva_operator role;
// a reader may list, not send.
func TestEventsUnderRoles(t *testing.T) {
	conf := dbtest.NewConfig(t)
	first, _ := setUpAwaiting(t, conf.URL())
	operator := dbtest.URLAs(conf, dbtest.Operator)
	for _, args := range [][]string{
		{"events"}, {"events", "--json"}, {"send-event", fmt.Sprint(first), "approved", "--payload", "1"},
		{"send-event", "--hero", "Claim:2", "approved"},
	} {
		out, err := cli(t, operator, args...)
		require.NoError(t, err, "geneva %v as geneva_operator:\n%s", args, out)
	}
	reader := dbtest.URLAs(conf, dbtest.Reader)
	_, err := cli(t, reader, "events")
	require.NoError(t, err)
	_, err = cli(t, reader, "send-event", fmt.Sprint(first), "approved")
	require.ErrorContains(t, err, "permission denied")
}
