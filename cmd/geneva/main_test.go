package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/spf13/cobra"
	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/goclient"
	"github.com/geneva-dev/geneva/internal/dbtest"
	"github.com/geneva-dev/geneva/internal/protocol"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

// geneva runs the command line against databaseURL and returns what it
// printed.
func cli(t *testing.T, databaseURL string, args ...string) (string, error) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if databaseURL != "" {
		args = append([]string{"--database-url", databaseURL}, args...)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := run(ctx, args, &stdout, &stderr)
	return stdout.String() + stderr.String(), err
}

// migrated returns the URL of a new database with Geneva's schema.
func migrated(t *testing.T) string {
	t.Helper()
	return dbtest.NewConfig(t).URL()
}

// empty returns the URL of a new database without Geneva's schema.
func empty(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dbtest.ServerURL())
	require.NoError(t, err)
	defer conn.Close(ctx)
	name := fmt.Sprintf("geneva_cli_empty_%d", time.Now().UnixNano())
	_, err = conn.Exec(ctx, "create database "+name)
	require.NoError(t, err)
	t.Cleanup(func() {
		conn, err := pgx.Connect(ctx, dbtest.ServerURL())
		if err == nil {
			_, _ = conn.Exec(ctx, "drop database if exists "+name+" with (force)")
			conn.Close(ctx)
		}
	})
	config, err := pgx.ParseConfig(dbtest.ServerURL())
	require.NoError(t, err)
	return fmt.Sprintf("postgres://%s@%s:%d/%s?sslmode=disable", config.User, config.Host, config.Port, name)
}

func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"help"}, {"--help"}, {"-h"}, {}, {"help", "show"}, {"show", "--help"}, {"ls", "-h"}} {
		out, err := cli(t, "", args...)
		require.NoError(t, err, "geneva %v", args)
		require.Contains(t, out, "Usage:", "geneva %v", args)
	}

	// every command has a usage line and a sentence
	for _, cmd := range newRootCmd(nil).Commands() {
		if cmd.Hidden || cmd.Name() == "help" {
			continue
		}
		require.NotEmpty(t, cmd.Short, cmd.Name())
		require.True(t, strings.HasPrefix(cmd.Use, cmd.Name()), cmd.Use)
		require.NotNil(t, cmd.Args, "%s checks its arguments", cmd.Name())
	}

	// Go workers are programs of their own: the operator's tool runs only
	// HTTP steps (it links no example)
	out, _ := cli(t, "", "help")
	require.Contains(t, out, "go run ./examples/demo --worker")
	require.Contains(t, out, "examples/myworker")
	out, err := cli(t, "", "worker", "--help")
	require.NoError(t, err)
	require.Contains(t, out, "Run a worker for HTTP steps")
	require.Contains(t, out, "GENEVA_HTTP_SECRET")
}

func TestUsageErrors(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"show"}, "show takes one workflow id"},
		{[]string{"show", "1", "2"}, "show takes one workflow id"},
		{[]string{"pause"}, "pause takes one workflow id"},
		{[]string{"run-now"}, "run-now takes a workflow id and, optionally, a step name"},
		{[]string{"migrate", "now"}, "migrate takes no arguments"},
		{[]string{"stuck", "x"}, "stuck takes no arguments"},
		{[]string{"bogus"}, `unknown command "bogus"`},
		{[]string{"ls", "--bogus"}, "unknown flag: --bogus"},
		{[]string{"ls"}, "no database: set DATABASE_URL or pass --database-url"},
	} {
		t.Setenv("DATABASE_URL", "")
		_, err := cli(t, "", tt.args...)
		require.ErrorContains(t, err, tt.want, "geneva %v", tt.args)
		var usage usageError
		require.True(t, errors.As(err, &usage), "geneva %v: a usage error (exit status 2)", tt.args)
	}

	url := migrated(t)
	_, err := cli(t, url, "show", "abc")
	require.ErrorContains(t, err, `"abc" is not a workflow id`)
	_, err = cli(t, url, "show", "12345")
	require.ErrorContains(t, err, "workflow 12345 not found")
}

func TestMissingSchema(t *testing.T) {
	url := empty(t)
	for _, args := range [][]string{{"ls"}, {"show", "1"}, {"stuck"}, {"stats"}, {"pause", "1"}} {
		_, err := cli(t, url, args...)
		require.ErrorContains(t, err, "the database lacks Geneva's schema", "geneva %v", args)
		require.ErrorContains(t, err, "run `geneva migrate`", "geneva %v", args)
	}
	out, err := cli(t, url, "migrate")
	require.NoError(t, err)
	require.Contains(t, out, "functions installed")
	out, err = cli(t, url, "ls")
	require.NoError(t, err)
	require.Contains(t, out, "No workflows.")
}

func TestEmptyResultsSaySo(t *testing.T) {
	url := migrated(t)
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"ls"}, "No workflows.\n\nNo workflows match."},
		{[]string{"ls", "--state", "paused"}, "No paused workflows."},
		{[]string{"stuck"}, "No stuck executions."},
		{[]string{"stats"}, "No step executions ended in the last 24 hours."},
	} {
		out, err := cli(t, url, tt.args...)
		require.NoError(t, err)
		require.Contains(t, out, tt.want, "geneva %v", tt.args)
	}
	_, err := cli(t, url, "stats", "NoSuchType")
	require.ErrorContains(t, err, `no workflows of type "NoSuchType"`)
}

// setUp defines two types and creates a workflow of each, returning their
// ids.
func setUp(t *testing.T, url string) (welcome, payment int64) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	require.NoError(t, err)
	defer conn.Close(ctx)
	client := goclient.New(conn)
	require.NoError(t, protocol.New(conn).DefineWorkflow(ctx, "Welcome", json.RawMessage(`{"steps":[{"name":"hello","wait":"1 hour"}]}`)))
	require.NoError(t, protocol.New(conn).DefineWorkflow(ctx, "Payment", json.RawMessage(`{"steps":[{"name":"charge"}]}`)))
	welcome, err = client.CreateWorkflow(ctx, "Welcome", "User", "1", nil)
	require.NoError(t, err)
	payment, err = client.CreateWorkflow(ctx, "Payment", "Order", "7", nil)
	require.NoError(t, err)
	return welcome, payment
}

func TestListAndShow(t *testing.T) {
	url := migrated(t)
	welcome, payment := setUp(t, url)

	// --type filters the counts too
	out, err := cli(t, url, "ls", "--type", "Welcome")
	require.NoError(t, err)
	require.Contains(t, out, "Welcome")
	require.NotContains(t, out, "Payment")

	// timestamps name their zone
	out, err = cli(t, url, "show", fmt.Sprint(welcome))
	require.NoError(t, err)
	require.Regexp(t, `created \d{4}-\d\d-\d\d \d\d:\d\d:\d\d [A-Z+\-0-9]+, definition version 1\n`, out)
	// its one step, an hour away, is its last
	require.Regexp(t, `\nearliest start of the final step: \d{4}-\d\d-\d\d \d\d:\d\d:\d\d [A-Z+\-0-9]+ \(in (1h0m0s|59m[0-5]\ds)\)\n`, out)

	// a workflow paused with its next step an hour away is not "overdue by 0s"
	_, err = cli(t, url, "pause", fmt.Sprint(welcome))
	require.NoError(t, err)
	out, err = cli(t, url, "ls", "--state", "paused")
	require.NoError(t, err)
	require.NotContains(t, out, "overdue")
	require.Contains(t, out, "its next step is due ")

	var list struct {
		Counts []map[string]any `json:"counts"`
		Paused []map[string]any `json:"paused"`
	}
	out, err = cli(t, url, "ls", "--state", "paused", "--json")
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal([]byte(out), &list), out)
	require.Len(t, list.Paused, 1)
	require.EqualValues(t, welcome, list.Paused[0]["workflow_id"])
	require.Len(t, list.Counts, 2)

	var shown struct {
		Workflow map[string]any   `json:"workflow"`
		Timeline []map[string]any `json:"timeline"`
	}
	out, err = cli(t, url, "show", fmt.Sprint(payment), "--json")
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal([]byte(out), &shown), out)
	require.Equal(t, "ready", shown.Workflow["state"])
	require.Equal(t, "Order", shown.Workflow["hero_type"])
	require.Len(t, shown.Timeline, 1)
	require.Equal(t, "charge", shown.Timeline[0]["step_name"])
	require.NotNil(t, shown.Workflow["final_step_at"], "its one step is its last")

	out, err = cli(t, url, "stuck", "--json")
	require.NoError(t, err)
	require.JSONEq(t, "[]", out)
	out, err = cli(t, url, "stats", "--json")
	require.NoError(t, err)
	require.JSONEq(t, "[]", out)
}

// geneva show prints a resumable step's chain: each execution's cursor and
// the execution it continues.
func TestShowResumable(t *testing.T) {
	url := migrated(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	require.NoError(t, err)
	defer conn.Close(ctx)
	client := goclient.New(conn)
	require.NoError(t, protocol.New(conn).DefineWorkflow(ctx, "Import", json.RawMessage(`{"steps":[{"name":"rows"}]}`)))
	id, err := client.CreateWorkflow(ctx, "Import", "File", "1", nil)
	require.NoError(t, err)
	var first, second int64
	require.NoError(t, conn.QueryRow(ctx, `select execution_id from geneva.start_step(
		(select id from geneva.step_executions where workflow_id = $1))`, id).Scan(&first))
	_, err = conn.Exec(ctx, `select geneva.checkpoint_step($1, '{"after": 500}')`, first)
	require.NoError(t, err)
	_, err = conn.Exec(ctx, `select geneva.complete_step($1, 'suspend')`, first)
	require.NoError(t, err)
	require.NoError(t, conn.QueryRow(ctx, `select max(id) from geneva.step_history($1)`, id).Scan(&second))

	out, err := cli(t, url, "show", fmt.Sprint(id))
	require.NoError(t, err)
	require.Contains(t, out, "continues")
	require.Regexp(t, fmt.Sprintf(`(?m)^%d .*<- %d +\{"after": 500\}`, second, first), out)
}

// An unknown state is refused by name, and the command fails.
func TestUnknownState(t *testing.T) {
	url := migrated(t)
	_, err := cli(t, url, "ls", "--state", "bogus")
	require.ErrorContains(t, err, `bogus`)
	require.ErrorContains(t, err, "state")
}

// A zero retention moves every ended workflow into history at once, and
// deletes it with its day; no flag keeps the default.
func TestHousekeepZeroRetention(t *testing.T) {
	url := migrated(t)
	_, payment := setUp(t, url)
	_, err := cli(t, url, "cancel", fmt.Sprint(payment))
	require.NoError(t, err)

	out, err := cli(t, url, "housekeep")
	require.NoError(t, err)
	require.Contains(t, out, "deleted 0 workflows")

	out, err = cli(t, url, "housekeep", "--retention", "0s")
	require.NoError(t, err)
	require.Contains(t, out, "moved 1 ended workflows into history")
	out, err = cli(t, tomorrow(url), "housekeep", "--retention", "0s")
	require.NoError(t, err)
	require.Contains(t, out, "deleted 1 workflows", "with its day's partition")
	_, err = cli(t, url, "show", fmt.Sprint(payment))
	require.ErrorContains(t, err, "not found")
}

// The operator's commands need no more than the geneva_operator role.
func TestUnderOperatorRole(t *testing.T) {
	conf := dbtest.NewConfig(t)
	welcome, _ := setUp(t, conf.URL()) // (definitions are the owner's or a worker's)
	url := dbtest.URLAs(conf, dbtest.Operator)
	for _, args := range [][]string{
		{"ls"}, {"ls", "--state", "ready", "--json"}, {"show", fmt.Sprint(welcome)}, {"stuck"}, {"stats"},
		{"pause", fmt.Sprint(welcome)}, {"ls", "--state", "paused"}, {"resume", fmt.Sprint(welcome)},
		{"run-now", fmt.Sprint(welcome)}, {"housekeep"}, {"cancel", fmt.Sprint(welcome)},
	} {
		out, err := cli(t, url, args...)
		require.NoError(t, err, "geneva %v as geneva_operator:\n%s", args, out)
	}
}

// No help page prints a credential: the database's URL, the dashboard's
// token and password, the HTTP steps' secrets come from the environment, and a flag's default shown
// in --help would print them (issue 47).
func TestHelpPrintsNoCredential(t *testing.T) {
	t.Setenv("DATABASE_URL", "postgres://ops:db-pw-7f3a9@db.example.com/prod")
	t.Setenv("GENEVA_DASHBOARD_TOKEN", "token-7f3a9")
	t.Setenv("GENEVA_DASHBOARD_BASIC_AUTH", "admin:basic-pw-7f3a9")
	t.Setenv("GENEVA_HTTP_SECRET", "http-secret-7f3a9")
	t.Setenv("GENEVA_HTTP_SECRET_NEXT", "next-secret-7f3a9")
	var paths [][]string
	var walk func(cmd *cobra.Command, path []string)
	walk = func(cmd *cobra.Command, path []string) {
		paths = append(paths, path)
		for _, sub := range cmd.Commands() {
			walk(sub, append(slices.Clone(path), sub.Name()))
		}
	}
	walk(newRootCmd(nil), nil)
	require.Greater(t, len(paths), 30, "every command and subcommand")
	for _, path := range paths {
		for _, args := range [][]string{append(slices.Clone(path), "--help"), append([]string{"help"}, path...)} {
			out, err := cli(t, "", args...)
			require.NoError(t, err, "geneva %v", args)
			require.NotContains(t, out, "7f3a9", "geneva %v prints a credential:\n%s", args, out)
		}
	}
	out, err := cli(t, "", "ls", "--help")
	require.NoError(t, err)
	require.Contains(t, out, "from $DATABASE_URL")
	out, err = cli(t, "", "dashboard", "--help")
	require.NoError(t, err)
	require.Contains(t, out, "from $GENEVA_DASHBOARD_TOKEN")
}

// geneva stuck takes the thresholds the dashboard's Stuck page offers; a
// negative one is a usage error.
func TestStuckThresholds(t *testing.T) {
	url := migrated(t)
	_, payment := setUp(t, url) // Payment's charge is due now; Welcome's hello in an hour
	out, err := cli(t, url, "stuck")
	require.NoError(t, err)
	require.Contains(t, out, "No stuck executions.")

	time.Sleep(10 * time.Millisecond) // (overdue by more than 0s)
	out, err = cli(t, url, "stuck", "--stuck-scheduled", "0s", "--json")
	require.NoError(t, err)
	var stuck []map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &stuck), out)
	require.Len(t, stuck, 1, "Payment's step, overdue; not Welcome's, due in an hour")
	require.EqualValues(t, payment, stuck[0]["workflow_id"])

	out, err = cli(t, url, "stuck", "--stuck-in-progress", "0s")
	require.NoError(t, err)
	require.Contains(t, out, "No stuck executions.", "nothing is in progress")

	_, err = cli(t, url, "stuck", "--stuck-scheduled", "-1m")
	require.ErrorContains(t, err, "--stuck-scheduled takes a duration of 0 or more")
}

// Every command that lists has --json, for scripts (issue 47: keep it so).
func TestListCommandsHaveJSON(t *testing.T) {
	var check func(cmd *cobra.Command)
	listed := 0
	check = func(cmd *cobra.Command) {
		lists := cmd.GroupID == "inspect" && cmd.Name() != "dashboard" || cmd.Name() == "ls" || cmd.Name() == "settings"
		if lists {
			listed++
			require.NotNil(t, cmd.Flags().Lookup("json"), "%s has no --json", cmd.CommandPath())
		}
		for _, sub := range cmd.Commands() {
			check(sub)
		}
	}
	check(newRootCmd(nil))
	require.GreaterOrEqual(t, listed, 9)
}

// geneva show prints the event a step received: its name, who sent it and
// its payload's start (issue 47).
func TestShowEventReceived(t *testing.T) {
	url := migrated(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	require.NoError(t, err)
	defer conn.Close(ctx)
	require.NoError(t, protocol.New(conn).DefineWorkflow(ctx, "Expense", json.RawMessage(
		`{"steps":[{"name":"decide","await":{"event":"approved","timeout":"1 day"}},{"name":"pay"}]}`)))
	id, err := goclient.New(conn).CreateWorkflow(ctx, "Expense", "Claim", "1", nil)
	require.NoError(t, err)
	_, err = conn.Exec(ctx, `select geneva.send_event($1, 'approved',
		'{"approved_by": "mia@example.com", "note": "a long note that the table cuts short"}')`, id)
	require.NoError(t, err)
	var execution int64
	require.NoError(t, conn.QueryRow(ctx, `select execution_id from geneva.start_step(
		(select id from geneva.step_executions where workflow_id = $1))`, id).Scan(&execution))
	var user string
	require.NoError(t, conn.QueryRow(ctx, "select session_user").Scan(&user))

	out, err := cli(t, url, "show", fmt.Sprint(id))
	require.NoError(t, err)
	require.Regexp(t, `(?m)^execution +step +state +outcome +scheduled for +waited +ran +event received +error$`, out)
	require.Regexp(t, fmt.Sprintf(`(?m)^%d +decide +in_progress .* approved from %s: \{"note": "a long note that the table cu… *$`,
		execution, regexp.QuoteMeta(user)), out)

	var shown struct {
		Timeline []map[string]any `json:"timeline"`
	}
	out, err = cli(t, url, "show", fmt.Sprint(id), "--json")
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal([]byte(out), &shown), out)
	require.Equal(t, "approved", shown.Timeline[0]["event_name"])
	require.Equal(t, user, shown.Timeline[0]["event_sent_by"])
	require.Equal(t, map[string]any{"approved_by": "mia@example.com", "note": "a long note that the table cuts short"},
		shown.Timeline[0]["event_payload"])
}

// geneva stuck lists the runaway chains housekeeping flagged, after the
// stuck executions; --runaways lists them only, --json for scripts.
func TestStuckRunaways(t *testing.T) {
	url := migrated(t)
	_, payment := setUp(t, url)
	out, err := cli(t, url, "stuck", "--runaways")
	require.NoError(t, err)
	require.Contains(t, out, "No runaway workflows.")

	// Payment's charge reattempted past a threshold of 2 in a row
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	require.NoError(t, err)
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, "select geneva.set_housekeeping_settings(p_runaway_repeats => 2)")
	require.NoError(t, err)
	for range 2 {
		var execution int64
		require.NoError(t, conn.QueryRow(ctx, `select execution_id from geneva.start_step(
			(select id from geneva.step_executions where workflow_id = $1 and state = 'scheduled'), null)`, payment).Scan(&execution))
		_, err = conn.Exec(ctx, "select geneva.complete_step($1, 'reattempt')", execution)
		require.NoError(t, err)
	}
	out, err = cli(t, url, "stuck", "--runaways")
	require.NoError(t, err)
	require.Contains(t, out, "No runaway workflows.", "housekeeping flags them")
	out, err = cli(t, url, "housekeep")
	require.NoError(t, err)
	require.Contains(t, out, "flagged 1 runaway workflows")

	out, err = cli(t, url, "stuck")
	require.NoError(t, err)
	require.Contains(t, out, "No stuck executions.")
	require.Regexp(t, fmt.Sprintf(`Runaway workflows .*\n.*\n%d +Payment +Order 7 +ready +3 +charge +3 `, payment), out)

	out, err = cli(t, url, "stuck", "--runaways", "--json")
	require.NoError(t, err)
	var runaways []map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &runaways), out)
	require.Len(t, runaways, 1)
	require.EqualValues(t, payment, runaways[0]["workflow_id"])
	require.EqualValues(t, 3, runaways[0]["executions"])
	require.Equal(t, "charge", runaways[0]["step_name"])
	require.EqualValues(t, 3, runaways[0]["repeats"])
}
