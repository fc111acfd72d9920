package worker_test

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/geneva-dev/geneva/goclient"
	"github.com/geneva-dev/geneva/internal/dbtest"
	"github.com/geneva-dev/geneva/worker"
	"github.com/geneva-dev/geneva/worker/workertest"
)

// The seeds' cron pattern, as a fan-out: a nightly schedule creates one
// NightlySync; its first step starts an AccountSync child for every active
// account a query returns (100 of them), with its success; a child whose
// account still has a sync running is skipped, not refused. The children
// run 20 at a time per night (a concurrency by parent), and the second step
// joins them all.
func ExampleStep_StartChildren_everyAccount() {
	ctx := context.Background()
	tb := dbtest.ExampleTB()
	conn := dbtest.NewConn(tb, dbtest.NewConfig(tb)) // a database with Geneva's schema
	// the application's own table
	_, err := conn.Exec(ctx, `create table accounts (id integer primary key, active boolean not null);
		insert into accounts select g, true from generate_series(1, 100) g`)
	must(err)

	// docs:fanout:begin
	nightly := worker.NewWorkflow("NightlySync", nil).
		Step("fan_out", func(ctx context.Context, step *worker.Step) error {
			rows, err := conn.Query(ctx, "select id::text from accounts where active order by id")
			if err != nil {
				return err
			}
			accounts, err := pgx.CollectRows(rows, pgx.RowTo[string])
			if err != nil {
				return err
			}
			for _, account := range accounts {
				step.StartChildren(worker.Child{Type: "AccountSync", HeroType: "Account", HeroID: account})
			}
			return nil
		}, nil).
		Step("report", func(ctx context.Context, step *worker.Step) error {
			counts, _, err := worker.EventPayload[worker.ChildCounts](step)
			if err != nil {
				return err
			}
			fmt.Printf("%d accounts synced of %d started\n", counts.Finished, counts.Children)
			return nil
		}, &worker.StepOpts{Await: &worker.Await{Children: worker.JoinAll, Timeout: 12 * time.Hour}})
	accountSync := worker.NewWorkflow("AccountSync", &worker.WorkflowOpts{
		Concurrency: &worker.Concurrency{By: worker.ByParent, Limit: 20},
	}).Step("sync", ok, nil)
	// docs:fanout:end

	h := workertest.New(tb, conn, &worker.Config{Workflows: []*worker.Workflow{nightly, accountSync}})
	h.SetNow(ctx, time.Date(2031, 1, 1, 1, 0, 0, 0, time.UTC))
	_, err = h.Client().CreateSchedule(ctx, "nightly-sync", "0 2 * * *", "NightlySync", "Job", "nightly", nil)
	must(err)
	h.Create(ctx, "AccountSync", "Account", "42") // yesterday's, still running

	h.SetNow(ctx, time.Date(2031, 1, 1, 2, 0, 0, 0, time.UTC))
	_, err = conn.Exec(ctx, "select geneva.fire_schedules()") // what every worker does each second
	must(err)
	runs, err := h.Client().ListWorkflows(ctx, &goclient.WorkflowFilter{WorkflowType: "NightlySync"}, 1)
	must(err)
	run := runs[0].ID
	h.PerformNextStep(ctx, run) // fan_out: 99 syncs start with its success
	h.PerformNextStep(ctx, run) // report's first claim: it waits for them

	children, err := h.Client().ListWorkflows(ctx, &goclient.WorkflowFilter{ParentID: run}, 1000)
	must(err)
	for _, child := range children {
		h.Speedrun(ctx, child.ID, nil) // the last one's end makes the join due
	}
	h.PerformNextStep(ctx, run) // report
	workflow, err := h.Client().GetWorkflow(ctx, run)
	must(err)
	fmt.Println(len(children), "children; the run", workflow.State)
	// Output:
	// 99 accounts synced of 99 started
	// 99 children; the run finished
}
