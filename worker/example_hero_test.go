package worker_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/geneva-dev/geneva/goclient"
	"github.com/geneva-dev/geneva/internal/dbtest"
	"github.com/geneva-dev/geneva/worker"
	"github.com/geneva-dev/geneva/worker/workertest"
)

// A hero loader reads the workflow's hero from the application's tables
// before each step; the step, its conditions and hooks get it with
// step.Hero(). A hero that is gone cancels the workflow
// (canceled_hero_missing), as the type does not say it may proceed without
// it.
func ExampleStep_Hero() {
	ctx := context.Background()
	tb := dbtest.ExampleTB()
	conf := dbtest.NewConfig(tb)
	pool := dbtest.NewPoolConfig(tb, conf) // the application's
	_, err := pool.Exec(ctx, `create table users (id bigint primary key, email text not null, closed boolean not null default false);
		insert into users (id, email) values (42, 'ann@example.com')`)
	must(err)

	// docs:hero:begin
	type User struct {
		Email  string
		Closed bool
	}
	loadUser := func(ctx context.Context, step *worker.Step) (any, error) {
		var user User
		err := pool.QueryRow(ctx, "select email, closed from users where id = $1", step.HeroID).Scan(&user.Email, &user.Closed)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil, worker.ErrHeroMissing // the type's policy applies: cancel
		}
		return &user, err // another error fails the step (its policies apply)
	}
	onboarding := worker.NewWorkflow("Onboarding", &worker.WorkflowOpts{LoadHero: loadUser}).
		CancelIf("account_closed", func(ctx context.Context, step *worker.Step) (bool, error) {
			return step.Hero().(*User).Closed, nil
		}).
		Step("send_welcome", func(ctx context.Context, step *worker.Step) error {
			fmt.Println("welcome to", step.Hero().(*User).Email)
			return nil
		}, nil)
	// docs:hero:end

	h := workertest.New(tb, dbtest.NewConnAs(tb, conf, dbtest.Harness), &worker.Config{Workflows: []*worker.Workflow{onboarding}})
	for _, userID := range []string{"42", "43"} {
		id := h.Create(ctx, "Onboarding", "User", userID)
		workflow := h.Speedrun(ctx, id, nil)
		fmt.Println("user", userID, workflow.State, *h.History(ctx, id)[0].Outcome)
	}
	// Output:
	// welcome to ann@example.com
	// user 42 finished success
	// user 43 canceled canceled_hero_missing
}

// An extension takes its base's steps, conditions, policies and options;
// the options it gives override the base's, the others are the base's.
func ExampleWorkflow_Extend() {
	send := func(ctx context.Context, step *worker.Step) error { return nil }

	// docs:extend:begin
	base := worker.NewWorkflow("Billing", &worker.WorkflowOpts{Queue: "billing", Priority: 2}).
		OnException(worker.ExceptionPolicy{Action: worker.ActionReattempt, Wait: time.Minute, MaxReattempts: 3})
	invoice := base.Extend("Invoice", nil).Step("send_invoice", send, nil)
	refund := base.Extend("Refund", &worker.WorkflowOpts{Queue: "refunds"}).
		OnException(worker.ExceptionPolicy{Action: worker.ActionPause}). // tried before the base's
		Step("send_refund", send, nil)
	// docs:extend:end

	for _, wf := range []*worker.Workflow{invoice, refund} {
		definition, err := wf.Definition()
		must(err)
		fmt.Println(wf.Type(), string(definition))
	}
	// Output:
	// Invoice {"on_exception":[{"action":"reattempt","max_reattempts":3,"wait":60}],"priority":2,"queue":"billing","steps":[{"name":"send_invoice"}]}
	// Refund {"on_exception":[{"action":"reattempt","max_reattempts":3,"wait":60},{"action":"pause"}],"priority":2,"queue":"refunds","steps":[{"name":"send_refund"}]}
}

// A type's hooks run for its steps only, inside the worker's: here the
// manual's before_step_starts, which sees the hero the loader loaded.
func ExampleWorkflowOpts_hooks() {
	ctx := context.Background()

	// docs:hooks:begin
	beforeStepStarts := func(ctx context.Context, event worker.HookEvent, step *worker.Step, next func(context.Context) error) error {
		if event == worker.EventStep {
			fmt.Printf("  %s starts for %s\n", step.Name, step.Hero())
		}
		return next(ctx)
	}
	invoice := worker.NewWorkflow("Invoice", &worker.WorkflowOpts{
		LoadHero: func(ctx context.Context, step *worker.Step) (any, error) { return "invoice " + step.HeroID, nil },
		Hooks:    []worker.Hook{beforeStepStarts},
	}).
		Step("send", func(ctx context.Context, step *worker.Step) error { return nil }, nil)
	receipt := worker.NewWorkflow("Receipt", nil).
		Step("send", func(ctx context.Context, step *worker.Step) error { return nil }, nil)
	timing := func(ctx context.Context, event worker.HookEvent, step *worker.Step, next func(context.Context) error) error {
		if event == worker.EventStep {
			fmt.Printf("worker-wide: %s %s\n", step.WorkflowType, step.Name) // (every type's steps)
		}
		return next(ctx)
	}
	config := &worker.Config{Workflows: []*worker.Workflow{invoice, receipt}, Hooks: []worker.Hook{timing}}
	// docs:hooks:end

	tb := dbtest.ExampleTB()
	h := workertest.New(tb, dbtest.NewConnAs(tb, dbtest.NewConfig(tb), dbtest.Harness), config)
	for _, workflowType := range []string{"Invoice", "Receipt"} {
		id := h.Create(ctx, workflowType, "Invoice", "7")
		h.Speedrun(ctx, id, nil)
		h.AssertWorkflowState(ctx, id, goclient.StateFinished)
	}
	// Output:
	// worker-wide: Invoice send
	//   send starts for invoice 7
	// worker-wide: Receipt send
}
