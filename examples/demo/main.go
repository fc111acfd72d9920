// Command demo runs the manual's example workflows (user onboarding,
// payments, webhooks, user erasure, expense approval; see package examples)
// with a worker on a throwaway PostgreSQL server, printing each step's
// outcome, playing a manager who approves an expense from SQL
// (geneva.send_event) while another's approval window passes, and an
// operator who resumes a paused payment, firing a schedule (a team digest
// every minute), and printing what `geneva ls`, `stats` and `show` say at
// the end; then tenants syncing accounts
// (TenantSync, at most 2 steps at once per tenant): a noisy tenant queues
// 40 syncs, three small ones 4 each, and the small ones finish while the
// noisy one still works (`geneva limits` shows its queue); then a workflow
// defined in SQL whose steps are a Python program's HTTP endpoint
// (examples/http/python, run with python3 when it is installed).
//
//	go run ./examples/demo                         # or: make demo
//	go run ./examples/demo --dashboard 127.0.0.1:8080   # or: make demo/dashboard
//	DATABASE_URL=postgres://localhost/app go run ./examples/demo
//
// With --worker, it only runs a worker for the example workflows
// (UserOnboarding, PaymentProcessing, WebhookDelivery, ExpenseApproval,
// TenantSync) until
// interrupted, for workflows created by others (geneva's SQL API, psql, an
// application), and events sent by them (an expense's approval:
// `select geneva.send_event(id, 'expense_approved', '{"approved_by": "mia"}')`):
//
//	DATABASE_URL=postgres://localhost/app go run ./examples/demo --worker
//
// Against a database of yours, run `geneva migrate` first; the demo can run
// there again and again (its workflows allow several per hero).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/geneva-dev/geneva"
	"github.com/geneva-dev/geneva/dashboard"
	"github.com/geneva-dev/geneva/examples"
	"github.com/geneva-dev/geneva/goclient"
	"github.com/geneva-dev/geneva/internal/pgtemp"
	"github.com/geneva-dev/geneva/internal/report"
	"github.com/geneva-dev/geneva/promgeneva"
	"github.com/geneva-dev/geneva/worker"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout)
	interrupted := ctx.Err() != nil
	stop()
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if interrupted && (err == nil || errors.Is(err, context.Canceled)) {
		// Ctrl-C is how the demo ends (with --dashboard, the only way): the
		// worker, the dashboard and the throwaway database have stopped
		fmt.Println("Stopped.")
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

// demoOptions are the demo's flags.
type demoOptions struct {
	databaseURL string
	dayLasts    time.Duration
	timeout     time.Duration
	dashboard   string
	// --worker: only a worker for the example workflows
	worker     bool
	maxWorkers int
	grace      time.Duration
}

// environment is what the demo runs with: its output and its database.
type environment struct {
	stdout io.Writer
	pool   *pgxpool.Pool
	client *goclient.Client
}

func (env *environment) printf(format string, args ...any) {
	fmt.Fprintf(env.stdout, format, args...)
}

func run(ctx context.Context, args []string, stdout io.Writer) error {
	demo := &demoOptions{}
	flags := flag.NewFlagSet("demo", flag.ContinueOnError)
	flags.SetOutput(stdout)
	flags.StringVar(&demo.databaseURL, "database-url", "", "libpq URL of a database with Geneva's schema; default: from $DATABASE_URL, else a throwaway server")
	flags.DurationVar(&demo.dayLasts, "day", 300*time.Millisecond, "how long a day of the workflows' waits lasts")
	flags.DurationVar(&demo.timeout, "timeout", 2*time.Minute, "give up after this long")
	flags.StringVar(&demo.dashboard, "dashboard", "", "afterwards, serve the web dashboard (and /metrics) at this loopback address, e.g. 127.0.0.1:8080, until interrupted")
	flags.BoolVar(&demo.worker, "worker", false, "instead of the demo, run a worker for the example workflows only (UserOnboarding, PaymentProcessing, WebhookDelivery, ExpenseApproval, TenantSync) until interrupted")
	flags.IntVar(&demo.maxWorkers, "max-workers", 10, "with --worker: steps run at once per queue")
	flags.DurationVar(&demo.grace, "grace", 30*time.Second, "with --worker: on interrupt, let running steps finish this long")
	if err := flags.Parse(args); err != nil {
		return err
	}
	if flags.NArg() > 0 {
		return fmt.Errorf("demo takes no arguments, only flags (-h lists them)")
	}
	if demo.databaseURL == "" { // (not the flag's default: -h would print its password)
		demo.databaseURL = os.Getenv("DATABASE_URL")
	}

	env := &environment{stdout: stdout}
	databaseURL := demo.databaseURL
	if databaseURL == "" {
		server, err := pgtemp.Start(ctx, nil)
		if err != nil {
			return err
		}
		defer server.Stop()
		databaseURL = server.URL("postgres")
		env.printf("PostgreSQL: started a throwaway server at %s (removed on exit)\n", databaseURL)
	}
	pool, err := pgxpool.New(ctx, databaseURL)
	if err != nil {
		return err
	}
	defer pool.Close()
	env.pool, env.client = pool, goclient.New(pool)
	if demo.databaseURL == "" {
		if _, err := geneva.Migrate(ctx, pool, nil); err != nil {
			return err
		}
		env.printf("Schema: installed River's and Geneva's\n")
	} else if err := requireSchema(ctx, pool); err != nil {
		return err
	}
	if demo.worker {
		return runWorker(ctx, env, demo)
	}
	if demo.dashboard == "" {
		return runDemo(ctx, env, demo, nil)
	}
	// afterwards, the database, the worker and the dashboard stay up for a
	// person to look at and act on
	cfg := &dashboard.Config{Metrics: promgeneva.Handler(pool)}
	if err := dashboard.CheckAddr(demo.dashboard, cfg); err != nil {
		return err
	}
	return runDemo(ctx, env, demo, func(ctx context.Context) error {
		err := dashboard.ListenAndServe(ctx, pool, demo.dashboard, cfg, func(url string) {
			env.printf("\nDashboard: %s (metrics at %smetrics); the worker still runs. Interrupt (Ctrl-C) to stop and remove the database.\n", url, url)
		})
		if err == nil {
			env.printf("\nStopping the dashboard, the worker and the database.\n")
		}
		return err
	})
}

// requireSchema says to run geneva migrate when the database lacks Geneva's
// schema.
func requireSchema(ctx context.Context, pool *pgxpool.Pool) error {
	var installed bool
	err := pool.QueryRow(ctx, "select to_regprocedure('geneva.create_workflow(text, text, text, boolean, text, text, text, bigint)') is not null").Scan(&installed)
	if err != nil {
		return err
	}
	if !installed {
		return errors.New("the database lacks Geneva's schema: run `geneva migrate` first")
	}
	return nil
}

// runWorker runs a worker for the example workflows until interrupted: it
// makes the heroes it does not know (users, "ok" payments, webhooks
// delivered at once, expenses of $100).
func runWorker(ctx context.Context, env *environment, demo *demoOptions) error {
	world := examples.NewWorld()
	world.AutoCreate = true
	w, err := worker.New(env.pool, &worker.Config{
		Workflows:  append(examples.Workflows(world, nil), examples.TenantSync(examples.NewTenants(50*time.Millisecond))),
		MaxWorkers: demo.maxWorkers,
	})
	if err != nil {
		return err
	}
	if err := w.Start(ctx); err != nil {
		return err
	}
	env.printf("worker running (UserOnboarding, PaymentProcessing, WebhookDelivery, ExpenseApproval, TenantSync); interrupt to stop\n")
	<-ctx.Done()

	env.printf("stopping: running steps have %s to finish\n", demo.grace)
	stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), demo.grace)
	defer cancel()
	return w.Stop(stopCtx)
}

// runDemo creates the example workflows, runs them with a worker while
// printing each step's outcome, plays an operator, and prints the dashboard.
func runDemo(outer context.Context, env *environment, demo *demoOptions, then func(ctx context.Context) error) error {
	ctx, cancel := context.WithTimeout(outer, demo.timeout)
	defer cancel()

	world := demoWorld()
	tenants := examples.NewTenants(50 * time.Millisecond)
	compress := float64(24*time.Hour) / float64(demo.dayLasts)
	opts := &examples.Options{Compress: compress}
	// the manager playing in the demo gets at least 3 seconds to approve
	approvalOpts := &examples.Options{Compress: min(compress, float64(examples.ApprovalWindow)/float64(3*time.Second))}
	start := time.Now()
	w, err := worker.New(env.pool, &worker.Config{
		Workflows: []*worker.Workflow{
			examples.UserOnboarding(world, opts),
			examples.PaymentProcessing(world, opts),
			examples.WebhookDelivery(world, opts),
			examples.ExpenseApproval(world, approvalOpts),
			examples.UserErasure(env.pool, world, opts),
			examples.TenantSync(tenants),
			teamDigest(),
		},
		Logger:        slog.New(storyHandler{slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})}),
		Hooks:         []worker.Hook{progress(env, start)},
		ErrorReporter: reportError(env, start),
		River:         &river.Config{FetchPollInterval: 50 * time.Millisecond, FetchCooldown: 10 * time.Millisecond},
		// and the HTTP steps, as `geneva worker --allow-hosts 127.0.0.1` runs
		// them (httpDemo: its endpoint is on the loopback address, which a
		// worker refuses unless allowed)
		HTTP: &worker.HTTPConfig{Secret: []byte(httpSecret), AllowHosts: []string{"127.0.0.1"}},
	})
	if err != nil {
		return err
	}
	if err := w.Start(outer); err != nil { // (it outlives the timeout while then runs)
		return err
	}
	defer func() {
		stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		_ = w.Stop(stopCtx)
	}()

	// The erasure's users are rows of a table of the application's, tracked
	// as heroes (geneva.track_hero).
	if _, err := env.pool.Exec(ctx, examples.ErasureSchema+`;
		insert into erasure_users values (7001, 'dee@example.com') on conflict do nothing;
		insert into erasure_posts values (7001, 'my first post')`); err != nil {
		return fmt.Errorf("creating the erasure example's tables: %w", err)
	}

	// Create every workflow in one transaction, as an application would with
	// its own writes. They allow several per hero, so that the demo can run
	// again in the same database.
	ids := map[string]int64{}
	var order []int64
	err = pgx.BeginFunc(ctx, env.pool, func(tx pgx.Tx) error {
		txClient := goclient.New(tx)
		for _, hero := range demoHeroes {
			id, err := txClient.CreateWorkflow(ctx, hero.workflowType, hero.heroType, hero.heroID,
				&goclient.CreateWorkflowOpts{AllowMultiple: true})
			if err != nil {
				return err
			}
			ids[hero.heroType+" "+hero.heroID] = id
			order = append(order, id)
		}
		return nil
	})
	if err != nil {
		return err
	}
	env.printf("Created %d workflows in one transaction; a day of waits lasts %s (an expense's 48 h approval window, %s).\n",
		len(demoHeroes), demo.dayLasts, time.Duration(float64(examples.ApprovalWindow)/approvalOpts.Compress).Round(10*time.Millisecond))
	slot, due, err := createDigestSchedule(ctx, env, demo.databaseURL == "")
	if err != nil {
		return fmt.Errorf("creating the digest's schedule: %w", err)
	}
	env.printf("\n")

	// A manager approves expense 2001 from SQL, as psql (or a trigger on the
	// application's own table) would; expense 2002's manager stays silent.
	if err := approve(ctx, env, start, ids["Expense 2001"]); err != nil {
		return err
	}
	if err := waitSettled(ctx, env, order); err != nil {
		return err
	}
	env.printf("\nAll workflows are finished, canceled or paused (%s).\n", time.Since(start).Round(10*time.Millisecond))

	// The operator clears the payment held for fraud review and resumes it.
	fraudID := ids["Payment 1004"]
	world.Do(func() { world.Payments["1004"].FraudCleared = true })
	env.printf("\nOperator: payment 1004 passed its fraud review: geneva resume %d\n\n", fraudID)
	if _, err := env.client.ResumeWorkflow(ctx, fraudID); err != nil {
		return err
	}
	if err := waitSettled(ctx, env, order); err != nil {
		return err
	}

	if err := showDigestSchedule(ctx, env, slot, due); err != nil {
		return err
	}

	erasure, err := env.client.GetWorkflow(ctx, ids["User 7001"])
	if err != nil {
		return err
	}
	env.printf("\nUser 7001's erasure is %s: its last step deleted the user's own row, a hero tracked with geneva.track_hero.\n", erasure.State)
	world.Do(func() {
		for _, id := range []string{"2001", "2002"} {
			e := world.Expenses[id]
			switch {
			case e.Reimbursed:
				env.printf("Expense %s: approved by %s, reimbursed.\n", id, e.ApprovedBy)
			case e.Escalated:
				env.printf("Expense %s: no approval within 48 h: escalated to the finance director.\n", id)
			default:
				env.printf("Expense %s: undecided.\n", id)
			}
		}
	})

	env.printf("\nDashboard (geneva ls):\n\n")
	counts, err := env.client.WorkflowCounts(ctx)
	if err != nil {
		return err
	}
	if err := report.Counts(env.stdout, counts); err != nil {
		return err
	}
	var workflows []*goclient.Workflow
	for _, id := range order {
		workflow, err := env.client.GetWorkflow(ctx, id)
		if err != nil {
			return err
		}
		workflows = append(workflows, workflow)
	}
	env.printf("\nThis run's workflows:\n\n")
	report.Workflows(env.stdout, workflows)

	env.printf("\ngeneva ls --state paused\n\n")
	paused, err := env.client.PausedWorkflows(ctx, nil)
	if err != nil {
		return err
	}
	paused = slices.DeleteFunc(paused, func(p *goclient.PausedWorkflow) bool { return !slices.Contains(order, p.WorkflowID) })
	if err := report.Paused(env.stdout, paused); err != nil {
		return err
	}

	env.printf("\ngeneva stats PaymentProcessing\n\n")
	stats, err := env.client.StepStats(ctx, &goclient.StepStatsParams{WorkflowTypes: []string{"PaymentProcessing"}})
	if err != nil {
		return err
	}
	if err := report.Stats(env.stdout, stats); err != nil {
		return err
	}

	for _, hero := range []string{"Payment 1004", "Payment 1006", "Expense 2001", "Expense 2002"} {
		if _, err := showWorkflow(ctx, env, ids[hero]); err != nil {
			return err
		}
	}
	if err := tenantsDemo(ctx, env, tenants); err != nil {
		return err
	}
	if err := httpDemo(ctx, env, start); err != nil {
		return fmt.Errorf("steps in any language: %w", err)
	}
	env.printf("\nDone in %s. Drive workflows from psql too: see examples/psql/walkthrough.sql.\n",
		time.Since(start).Round(10*time.Millisecond))
	if then != nil {
		return then(outer)
	}
	return nil
}

// showWorkflow prints what `geneva show ID` prints, and returns the workflow.
func showWorkflow(ctx context.Context, env *environment, id int64) (*goclient.Workflow, error) {
	workflow, err := env.client.GetWorkflow(ctx, id)
	if err != nil {
		return nil, err
	}
	timeline, err := env.client.Timeline(ctx, id)
	if err != nil {
		return nil, err
	}
	env.printf("\ngeneva show %d\n\n", id)
	report.Workflow(env.stdout, workflow, nil, timeline)
	return workflow, nil
}

// demoHeroes are the demo's workflows: a hero each.
var demoHeroes = []struct{ workflowType, heroType, heroID string }{
	{"UserOnboarding", "User", "ann"},
	{"UserOnboarding", "User", "bo"},
	{"UserOnboarding", "User", "cy"},
	{"PaymentProcessing", "Payment", "1001"},
	{"PaymentProcessing", "Payment", "1002"},
	{"PaymentProcessing", "Payment", "1003"},
	{"PaymentProcessing", "Payment", "1004"},
	{"PaymentProcessing", "Payment", "1005"},
	{"PaymentProcessing", "Payment", "1006"},
	{"WebhookDelivery", "Webhook", "w1"},
	{"WebhookDelivery", "Webhook", "w2"},
	{"WebhookDelivery", "Webhook", "w3"},
	{"UserErasure", "User", "7001"},
	{"ExpenseApproval", "Expense", "2001"},
	{"ExpenseApproval", "Expense", "2002"},
}

func demoWorld() *examples.World {
	world := examples.NewWorld()
	world.Users["ann"] = &examples.User{Email: "ann@example.com"}
	world.Users["bo"] = &examples.User{Email: "bo@example.com", ProfileComplete: true, EmailVerified: true, Connections: 2}
	world.Users["cy"] = &examples.User{Email: "cy@example.com", AccountClosed: true}
	world.Payments["1001"] = &examples.Payment{Amount: 4200, Scenario: "ok"}
	world.Payments["1002"] = &examples.Payment{Amount: 990, Scenario: "declined"}
	world.Payments["1003"] = &examples.Payment{Amount: 1250, Scenario: "rate_limited"}
	world.Payments["1004"] = &examples.Payment{Amount: 98000, Scenario: "fraud"}
	world.Payments["1005"] = &examples.Payment{Amount: 3100, Scenario: "inventory_timeout"}
	world.Payments["1006"] = &examples.Payment{Amount: 700, Scenario: "gateway_down"}
	world.Webhooks["w1"] = &examples.Webhook{Endpoint: "https://a.example/hook", FailuresBeforeSuccess: 0}
	world.Webhooks["w2"] = &examples.Webhook{Endpoint: "https://b.example/hook", FailuresBeforeSuccess: 5}
	world.Webhooks["w3"] = &examples.Webhook{Endpoint: "https://c.example/hook", FailuresBeforeSuccess: -1}
	world.Expenses["2001"] = &examples.Expense{Submitter: "ann@example.com", Manager: "mia@example.com", Amount: 12050, Description: "train to Lyon"}
	world.Expenses["2002"] = &examples.Expense{Submitter: "bo@example.com", Manager: "max@example.com", Amount: 4590, Description: "team lunch"}
	return world
}

// progress is a hook printing each step's outcome as the worker records it.
func progress(env *environment, start time.Time) worker.Hook {
	var mu sync.Mutex
	return func(ctx context.Context, event worker.HookEvent, step *worker.Step, next func(context.Context) error) error {
		err := next(ctx)
		if step.WorkflowType == "TenantSync" {
			return err // (too many steps to print: tenantsDemo tells how the tenants fare)
		}
		what := ""
		switch {
		case event == worker.EventPreconditions && step.Precondition != "":
			what = map[worker.Precondition]string{
				worker.PreconditionCancel: "cancel_if held", worker.PreconditionSkip: "skip_if held",
				worker.PreconditionHeroMissing: "hero missing",
			}[step.Precondition]
		case event == worker.EventFinalize && step.Outcome != "":
			what = string(step.Outcome)
			if e := step.Event(); e != nil {
				what += fmt.Sprintf(" (event %s, %s)", e.Name, e.Payload)
			} else if step.WorkflowType == "ExpenseApproval" && step.Name == "record_decision" {
				what += " (no approval in 48 h: to escalate)"
			}
			// (ready or performing: the workflow goes on, its next step
			// scheduled or, chained, already running)
			if step.WorkflowState != goclient.StateReady && step.WorkflowState != goclient.StatePerforming {
				what += ", workflow " + string(step.WorkflowState)
			}
		default:
			return err
		}
		mu.Lock()
		defer mu.Unlock()
		env.printf("%8s  %-18s #%-3d %-8s %-5s %-26s -> %s\n", time.Since(start).Round(10*time.Millisecond),
			step.WorkflowType, step.WorkflowID, step.HeroType, step.HeroID, step.Name, what)
		return err
	}
}

// approve plays expense 2001's manager: once the workflow awaits the approval
// (geneva.awaiting_events, what `geneva events` lists), it sends it with
// geneva.send_event, as psql would.
func approve(ctx context.Context, env *environment, start time.Time, id int64) error {
	for {
		var awaiting bool
		err := env.pool.QueryRow(ctx, `select exists (select from geneva.awaiting_events
			where workflow_id = $1 and event = 'expense_approved')`, id).Scan(&awaiting)
		if err != nil {
			return err
		}
		if awaiting {
			break
		}
		select {
		case <-ctx.Done():
			return errors.New("expense 2001 never awaited its approval")
		case <-time.After(10 * time.Millisecond):
		}
	}
	query := fmt.Sprintf(`select geneva.send_event(%d, 'expense_approved', '{"approved_by": "mia@example.com"}')`, id)
	var sent bool
	if err := env.pool.QueryRow(ctx, query).Scan(&sent); err != nil {
		return err
	}
	env.printf("%8s  Manager (psql): %s -> %t\n", time.Since(start).Round(10*time.Millisecond), query, sent)

	// what still awaits (the inbox of `geneva events` and the dashboard's
	// Waiting page)
	awaiting, err := env.client.AwaitingEvents(ctx, &goclient.AwaitingEventsParams{WorkflowType: "ExpenseApproval"})
	if err != nil {
		return err
	}
	for _, a := range awaiting {
		timeout := "never"
		if a.TimeoutAt != nil {
			timeout = "in " + time.Until(*a.TimeoutAt).Round(10*time.Millisecond).String()
		}
		env.printf("%8s  geneva events: #%d %s %s %s awaits %s, timeout %s (then %s)\n", time.Since(start).Round(10*time.Millisecond),
			a.WorkflowID, a.HeroType, a.HeroID, a.StepName, a.Event, timeout, a.OnTimeout)
	}
	return nil
}

// storyHandler is the worker's log for the demo: the failures of the
// story's steps (a declined card, a gateway down, a provider's 429) are
// printed as part of the story, by reportError, so their log records are
// left out; every other record is logged.
type storyHandler struct{ slog.Handler }

func (h storyHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Message == "geneva: step failed" {
		reported := false
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == "reported" {
				reported = a.Value.Kind() == slog.KindBool && a.Value.Bool()
				return false
			}
			return true
		})
		if reported {
			return nil
		}
	}
	return h.Handler.Handle(ctx, r)
}

func (h storyHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return storyHandler{h.Handler.WithAttrs(attrs)}
}

func (h storyHandler) WithGroup(name string) slog.Handler {
	return storyHandler{h.Handler.WithGroup(name)}
}

// reportError stands in for an error tracker.
func reportError(env *environment, start time.Time) func(ctx context.Context, step *worker.Step, err error) {
	return func(ctx context.Context, step *worker.Step, err error) {
		env.printf("%8s  ! reported to the error tracker: %s #%d %s: %v\n", time.Since(start).Round(10*time.Millisecond),
			step.WorkflowType, step.WorkflowID, step.Name, err)
	}
}

// waitSettled waits until none of the workflows is ready or performing.
func waitSettled(ctx context.Context, env *environment, ids []int64) error {
	for {
		var active int
		err := env.pool.QueryRow(ctx, `select count(*) from unnest($1::bigint[]) as t(id),
			lateral geneva.get_workflow(t.id) w where w.state in ('ready', 'performing')`, ids).Scan(&active)
		if err != nil {
			return err
		}
		if active == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return errors.New("the workflows did not settle in time")
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// The tenants of tenantsDemo: a noisy one with many accounts to sync, then
// small ones.
const (
	noisyTenant   = "noisy-co"
	noisyAccounts = 40
	smallAccounts = 4
)

var smallTenants = []string{"acme", "globex", "initech"}

// tenantsDemo shows the limits' fairness: the noisy tenant queues its
// syncs, then the small tenants theirs, in one transaction; TenantSync runs
// at most 2 steps at once per tenant. It prints when each small tenant is
// done and how far the noisy one is then, what `geneva limits` says
// meanwhile, and when the noisy one is done.
func tenantsDemo(ctx context.Context, env *environment, tenants *examples.Tenants) error {
	start := time.Now()
	err := pgx.BeginFunc(ctx, env.pool, func(tx pgx.Tx) error {
		client := goclient.New(tx)
		create := func(tenant string, n int) error {
			for i := range n {
				_, err := client.CreateWorkflow(ctx, "TenantSync", "Account", fmt.Sprintf("%s/%d", tenant, i+1),
					&goclient.CreateWorkflowOpts{Group: tenant, AllowMultiple: true})
				if err != nil {
					return err
				}
			}
			return nil
		}
		if err := create(noisyTenant, noisyAccounts); err != nil {
			return err
		}
		for _, tenant := range smallTenants {
			if err := create(tenant, smallAccounts); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	env.printf("\nLimits: TenantSync (fetch, store) runs at most %d steps at once per tenant, its group\n"+
		"(WorkflowOpts.Concurrency{By: ByGroup}). %s queued %d account syncs, then %d small tenants %d each, in one transaction.\n\n",
		examples.TenantConcurrency, noisyTenant, noisyAccounts, len(smallTenants), smallAccounts)

	done := map[string]bool{}
	shown := false
	for tenants.Synced(noisyTenant) < noisyAccounts {
		for _, tenant := range smallTenants {
			if !done[tenant] && tenants.Synced(tenant) == smallAccounts {
				done[tenant] = true
				env.printf("%8s  tenant %-8s synced its %d accounts; %s so far: %d of its %d calls, %d accounts synced\n",
					time.Since(start).Round(10*time.Millisecond), tenant, smallAccounts, noisyTenant,
					tenants.Calls(noisyTenant), 2*noisyAccounts, tenants.Synced(noisyTenant))
			}
		}
		if len(done) == len(smallTenants) && !shown {
			shown = true
			if err := showLimits(ctx, env, start); err != nil {
				return err
			}
		}
		select {
		case <-ctx.Done():
			return errors.New("the tenants' syncs did not finish in time")
		case <-time.After(10 * time.Millisecond):
		}
	}
	env.printf("%8s  tenant %-8s synced its %d accounts\n", time.Since(start).Round(10*time.Millisecond), noisyTenant, noisyAccounts)
	env.printf("At most %d calls of one tenant were in flight at once (%s %d, %s %d): the small tenants never waited behind %s's queue.\n",
		examples.TenantConcurrency, noisyTenant, tenants.MaxRunning(noisyTenant), smallTenants[0], tenants.MaxRunning(smallTenants[0]), noisyTenant)
	return nil
}

// showLimits prints what `geneva limits` says of TenantSync now.
func showLimits(ctx context.Context, env *environment, start time.Time) error {
	usage, err := env.client.LimitUsage(ctx)
	if err != nil {
		return err
	}
	usage = slices.DeleteFunc(usage, func(u *goclient.LimitUsage) bool { return u.LimitName != "TenantSync" })
	env.printf("%8s  geneva limits:\n", time.Since(start).Round(10*time.Millisecond))
	for _, u := range usage {
		bound := ""
		if u.Concurrency != nil {
			bound = fmt.Sprintf("/%d", *u.Concurrency)
		}
		env.printf("            %s %s %-8s in progress %d%s, waiting %d\n", u.LimitName, u.Kind, u.Key, u.InProgress, bound, u.Waiting)
	}
	return nil
}
