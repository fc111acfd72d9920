package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/goclient"
	"github.com/geneva-dev/geneva/internal/dbtest"
)

func TestMain(m *testing.M) {
	// the test binary runs as the demo itself for TestInterruptStopsCleanly
	if os.Getenv(runAsDemo) == "1" {
		main()
		os.Exit(0)
	}
	dbtest.Main(m)
}

// runAsDemo, set to 1, makes the test binary the demo (its main).
const runAsDemo = "GENEVA_TEST_RUN_AS_DEMO"

func demo(t *testing.T, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out bytes.Buffer
	err := run(ctx, args, &out)
	return out.String(), err
}

// The demo runs again in the same database: its heroes may have several
// workflows.
func TestRunsTwice(t *testing.T) {
	url := dbtest.NewConfig(t).URL()
	for range 2 {
		out, err := demo(t, "--database-url", url, "--day", "100ms")
		require.NoError(t, err, out)
		require.Contains(t, out, "All workflows are finished, canceled or paused")
		// a chained step leaves its workflow performing: no news for a person
		require.NotContains(t, out, "workflow performing")
		require.Contains(t, out, "geneva show")
		// a manager approves one expense from SQL; the other's window passes
		require.Regexp(t, `Manager \(psql\): select geneva.send_event\(\d+, 'expense_approved', '\{"approved_by": "mia@example.com"\}'\) -> true`, out)
		require.Contains(t, out, `record_decision            -> success (event expense_approved, {"approved_by": "mia@example.com"})`)
		require.Contains(t, out, "record_decision            -> success (no approval in 48 h: to escalate)")
		require.Contains(t, out, "Expense 2001: approved by mia@example.com, reimbursed.")
		require.Contains(t, out, "Expense 2002: no approval within 48 h: escalated to the finance director.")
		// limits: the small tenants finish while the noisy one still works,
		// never more than 2 calls of a tenant at once
		tenantsOut := out[strings.Index(out, "Limits: TenantSync"):]
		for _, tenant := range []string{"acme", "globex", "initech"} {
			m := regexp.MustCompile(`tenant ` + tenant + ` +synced its 4 accounts; noisy-co so far: (\d+) of its 80 calls`).FindStringSubmatch(tenantsOut)
			require.NotNil(t, m, tenantsOut)
			require.Less(t, atoi(t, m[1]), 80, tenantsOut)
			require.Less(t, strings.Index(tenantsOut, m[0]), strings.Index(tenantsOut, "tenant noisy-co synced its 40 accounts"), tenantsOut)
		}
		require.Regexp(t, `TenantSync concurrency noisy-co in progress \d/2, waiting \d+`, tenantsOut)
		require.Contains(t, tenantsOut, "At most 2 calls of one tenant were in flight at once (noisy-co 2, acme 2)")
		// a digest every minute: its first slot fired once, by the worker
		require.Contains(t, out, "select geneva.create_schedule('team-digest', '* * * * *', 'TeamDigest', 'Team', 'ops')")
		require.Regexp(t, `TeamDigest +#\d+ +Team +ops +send +-> success, workflow finished`, out)
		require.Regexp(t, `team-digest  \* \* \* \* \*  UTC  TeamDigest for Team ops: slot \d\d:\d\d:00 fired \d+\.\ds after it`, out)
		require.Contains(t, out, "select geneva.fire_schedules() -> 0")
		// steps in any language: a Python endpoint runs py_invoice's three
		// steps (python3 is on every machine that runs the tests)
		require.Regexp(t, `Invoice 1001 is finished`, out)
		require.Regexp(t, `py_invoice +#\d+ +Invoice +1001 +charge +-> reattempted_by_exception`, out)
		require.Contains(t, out, "HTTP steps:\n  collect_lines: POST http://127.0.0.1:")
	}
}

func TestMissingSchema(t *testing.T) {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dbtest.ServerURL())
	require.NoError(t, err)
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, "drop database if exists geneva_demo_empty")
	require.NoError(t, err)
	_, err = conn.Exec(ctx, "create database geneva_demo_empty")
	require.NoError(t, err)
	config, err := pgx.ParseConfig(dbtest.ServerURL())
	require.NoError(t, err)

	url := fmt.Sprintf("postgres://%s@%s:%d/geneva_demo_empty?sslmode=disable", config.User, config.Host, config.Port)
	_, err = demo(t, "--database-url", url)
	require.ErrorContains(t, err, "run `geneva migrate` first")
}

// syncBuffer is a bytes.Buffer safe for the demo's writes and the test's
// reads at once.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// With --dashboard, the demo leaves its database and the dashboard up, with
// the engine's metrics, until interrupted.
func TestDashboardStaysUp(t *testing.T) {
	url := dbtest.NewConfig(t).URL()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := &syncBuffer{}
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"--database-url", url, "--day", "100ms", "--dashboard", "127.0.0.1:0"}, out)
	}()

	served := regexp.MustCompile(`Dashboard: (http://127\.0\.0\.1:\d+/)`)
	var page string
	require.Eventually(t, func() bool {
		m := served.FindStringSubmatch(out.String())
		if m != nil {
			page = m[1]
		}
		return m != nil
	}, time.Minute, 50*time.Millisecond, "the demo prints the dashboard's URL:\n%s", out)

	for path, want := range map[string]string{"": "PaymentProcessing", "metrics": "geneva_workflows"} {
		res, err := http.Get(page + path)
		require.NoError(t, err)
		body, err := io.ReadAll(res.Body)
		res.Body.Close()
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, res.StatusCode, path)
		require.Contains(t, string(body), want, path)
	}

	cancel()
	require.NoError(t, <-done)
}

// With --worker, the demo only runs a worker for the example workflows,
// until interrupted: it runs those others create (its role before `geneva
// worker` left the operator's tool).
func TestWorker(t *testing.T) {
	url := dbtest.NewConfig(t).URL()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := &syncBuffer{}
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"--database-url", url, "--worker", "--max-workers", "2", "--grace", "5s"}, out)
	}()
	require.Eventually(t, func() bool { return strings.Contains(out.String(), "worker running") },
		time.Minute, 50*time.Millisecond, "the worker says it runs:\n%s", out)

	pool, err := pgxpool.New(ctx, url)
	require.NoError(t, err)
	defer pool.Close()
	client := goclient.New(pool)
	// a webhook the worker does not know: it makes one, delivered at once
	id, err := client.CreateWorkflow(ctx, "WebhookDelivery", "Webhook", "from-elsewhere", nil)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		workflow, err := client.GetWorkflow(ctx, id)
		return err == nil && workflow.State == goclient.StateFinished
	}, time.Minute, 50*time.Millisecond)

	// an expense the worker does not know, approved from SQL once it awaits
	// its approval
	id, err = client.CreateWorkflow(ctx, "ExpenseApproval", "Expense", "from-elsewhere", nil)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		n, err := client.CountAwaitingEvents(ctx, &goclient.AwaitingEventsParams{WorkflowType: "ExpenseApproval"})
		require.NoError(t, err)
		return n == 1
	}, time.Minute, 50*time.Millisecond)
	_, err = pool.Exec(ctx, `select geneva.send_event($1, 'expense_approved', '{"approved_by": "mia"}')`, id)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		workflow, err := client.GetWorkflow(ctx, id)
		return err == nil && workflow.State == goclient.StateFinished
	}, time.Minute, 50*time.Millisecond)
	timeline, err := client.Timeline(ctx, id)
	require.NoError(t, err)
	require.Equal(t, "reimburse", timeline[len(timeline)-1].StepName)

	cancel()
	require.NoError(t, <-done)
	require.Contains(t, out.String(), "stopping: running steps have 5s to finish")
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	require.NoError(t, err)
	return n
}

// -h prints no credential: the database's URL comes from DATABASE_URL when
// --database-url is not given, and is not the flag's default (issue 47).
func TestHelpPrintsNoPassword(t *testing.T) {
	t.Setenv("DATABASE_URL", "postgres://ops:db-pw-7f3a9@db.example.com/prod")
	out, err := demo(t, "-h")
	require.ErrorIs(t, err, flag.ErrHelp)
	require.Contains(t, out, "from $DATABASE_URL")
	require.NotContains(t, out, "7f3a9")
}

// Ctrl-C on the demo with --dashboard (make demo/dashboard) stops it
// cleanly: it says so, exits 0, and the story's expected failures were
// printed as story lines, not logged as errors (issue 47).
func TestInterruptStopsCleanly(t *testing.T) {
	url := dbtest.NewConfig(t).URL()
	cmd := exec.Command(os.Args[0], "--database-url", url, "--day", "100ms", "--dashboard", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), runAsDemo+"=1")
	stdout, stderr := &syncBuffer{}, &syncBuffer{}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	require.NoError(t, cmd.Start())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	exited := false
	t.Cleanup(func() {
		if !exited {
			_ = cmd.Process.Kill()
			t.Logf("the demo, killed: %v", <-done)
		}
	})
	require.Eventually(t, func() bool { return strings.Contains(stdout.String(), "Dashboard: http://") },
		2*time.Minute, 50*time.Millisecond, "the demo serves its dashboard:\n%s\n%s", stdout, stderr)

	require.NoError(t, cmd.Process.Signal(os.Interrupt))
	select {
	case err := <-done:
		exited = true
		require.NoError(t, err, "exit status 0:\n%s\n%s", stdout, stderr)
	case <-time.After(time.Minute):
		t.Fatalf("the demo did not stop within a minute of Ctrl-C:\n%s", stdout)
	}
	require.True(t, strings.HasSuffix(stdout.String(), "\nStopping the dashboard, the worker and the database.\nStopped.\n"), stdout.String())
	// the gateway that is down, the provider's 429: story lines, no log
	require.Contains(t, stdout.String(), "! reported to the error tracker: PaymentProcessing")
	require.NotContains(t, stderr.String(), "level=ERROR", "stderr:\n%s", stderr)
}
