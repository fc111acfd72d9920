package worker_test

import (
	"context"
	"fmt"
	"time"

	"github.com/geneva-dev/geneva/goclient"
	"github.com/geneva-dev/geneva/internal/dbtest"
	"github.com/geneva-dev/geneva/worker"
	"github.com/geneva-dev/geneva/worker/workertest"
)

// A resumable step sends a newsletter to every subscriber, 3 per query,
// handing over to a successor execution after 4 subscribers (MaxIterations;
// in production MaxRuntime is the usual budget). Each execution continues
// after the last subscriber the one before it got to.
func ExampleIterateQuery() {
	ctx := context.Background()
	tb := dbtest.ExampleTB()
	conn := dbtest.NewConn(tb, dbtest.NewConfig(tb)) // a database with Geneva's schema
	_, err := conn.Exec(ctx, `create table subscribers (id bigint primary key, email text not null);
		insert into subscribers select g, 'user' || g || '@example.com' from generate_series(1, 10) g`)
	must(err)

	type Subscriber struct {
		ID    int64  `db:"id"`
		Email string `db:"email"`
	}
	newsletter := worker.NewWorkflow("Newsletter", nil).
		ResumableStep("send", func(ctx context.Context, it *worker.Iteration) error {
			fmt.Println("execution", it.Attempt, "resumed:", it.Resumed())
			return worker.IterateQuery(ctx, it, conn,
				"select id, email from subscribers where id % 2 = 0", nil, &worker.QueryOpts{BatchSize: 3},
				func(ctx context.Context, s Subscriber) error {
					fmt.Println("  send to", s.Email)
					return nil
				})
		}, &worker.ResumableOpts{MaxIterations: 4})

	h := workertest.New(tb, conn, &worker.Config{Workflows: []*worker.Workflow{newsletter}})
	id := h.Create(ctx, "Newsletter", "Campaign", "1")
	h.SpeedrunCurrentStep(ctx, id, 10)

	history, err := h.Client().Timeline(ctx, id)
	must(err)
	for _, e := range history {
		fmt.Println(e.StepName, *e.Outcome, "cursor", string(e.Cursor))
	}
	// Output:
	// execution 1 resumed: false
	//   send to user2@example.com
	//   send to user4@example.com
	//   send to user6@example.com
	//   send to user8@example.com
	// execution 2 resumed: true
	//   send to user10@example.com
	// send suspended cursor 8
	// send success cursor 10
}

// Iterate goes through a fixed slice, the index of the next item as the
// cursor. Here an operator pauses the workflow while its step runs: the step
// stops at its next check and keeps its successor for resume_workflow.
func ExampleIterate() {
	ctx := context.Background()
	tb := dbtest.ExampleTB()
	var h *workertest.Harness
	var id int64
	regions := []string{"eu-west", "eu-north", "us-east", "us-west", "ap-south"}

	rollout := worker.NewWorkflow("Rollout", nil).
		ResumableStep("deploy", func(ctx context.Context, it *worker.Iteration) error {
			return worker.Iterate(ctx, it, regions, func(ctx context.Context, region string) error {
				fmt.Println("deploy to", region)
				if region == "eu-north" && !it.Resumed() {
					_, err := h.Client().PauseWorkflow(ctx, id) // an operator, meanwhile
					return err
				}
				return nil
			})
		}, &worker.ResumableOpts{CheckpointInterval: -1}) // write (and check) at every item

	h = workertest.New(tb, dbtest.NewConn(tb, dbtest.NewConfig(tb)), &worker.Config{Workflows: []*worker.Workflow{rollout}})
	id = h.Create(ctx, "Rollout", "Release", "v2")
	h.PerformNextStep(ctx, id)
	workflow, err := h.Client().GetWorkflow(ctx, id)
	must(err)
	fmt.Println("workflow", workflow.State)

	_, err = h.Client().ResumeWorkflow(ctx, id)
	must(err)
	workflow = h.Speedrun(ctx, id, nil)
	fmt.Println("workflow", workflow.State)
	// Output:
	// deploy to eu-west
	// deploy to eu-north
	// workflow paused
	// deploy to us-east
	// deploy to us-west
	// deploy to ap-south
	// workflow finished
}

// SkipTo hands over at once, optionally after a wait: here to wait out an
// API's rate limit, keeping the page to fetch as the cursor.
func ExampleIteration_SkipTo() {
	ctx := context.Background()
	tb := dbtest.ExampleTB()
	limited := map[int]bool{2: true} // page 2 is rate limited once

	sync := worker.NewWorkflow("Sync", nil).
		ResumableStep("fetch", func(ctx context.Context, it *worker.Iteration) error {
			page := 1
			if _, err := it.Cursor(&page); err != nil {
				return err
			}
			for ; page <= 3; page++ {
				if limited[page] {
					delete(limited, page)
					fmt.Println("page", page, "rate limited")
					return it.SkipTo(ctx, page, 30*time.Second)
				}
				fmt.Println("page", page)
				if err := it.Set(ctx, page+1); err != nil {
					return err
				}
			}
			return nil
		}, nil)

	h := workertest.New(tb, dbtest.NewConn(tb, dbtest.NewConfig(tb)), &worker.Config{Workflows: []*worker.Workflow{sync}})
	id := h.Create(ctx, "Sync", "Account", "1")
	h.SpeedrunCurrentStep(ctx, id, 10)

	history, err := h.Client().StepHistory(ctx, id)
	must(err)
	fmt.Println("successor waited", history[1].ScheduledFor.Sub(*history[0].FinishedAt))
	workflow, err := h.Client().GetWorkflow(ctx, id)
	must(err)
	fmt.Println("workflow", workflow.State == goclient.StateFinished)
	// Output:
	// page 1
	// page 2 rate limited
	// page 2
	// page 3
	// successor waited 30s
	// workflow true
}
