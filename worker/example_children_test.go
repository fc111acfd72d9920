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

// A month's invoicing fans out: its first step starts an Invoice child per
// customer, created with the step's success (in the transaction that
// records it); its second step joins, awaiting every child, and reads their
// counts and list.
func ExampleStep_StartChildren() {
	ctx := context.Background()
	tb := dbtest.ExampleTB()
	conn := dbtest.NewConn(tb, dbtest.NewConfig(tb)) // a database with Geneva's schema

	invoiceRun := worker.NewWorkflow("InvoiceRun", nil).
		Step("fan_out", func(ctx context.Context, step *worker.Step) error {
			for _, customer := range []string{"7", "8", "9"} {
				step.StartChildren(worker.Child{Type: "Invoice", HeroType: "Customer", HeroID: customer})
			}
			return nil
		}, nil).
		Step("report", func(ctx context.Context, step *worker.Step) error {
			counts, _, err := worker.EventPayload[worker.ChildCounts](step)
			if err != nil {
				return err
			}
			fmt.Printf("%d children, %d finished\n", counts.Children, counts.Finished)
			children, err := step.Children(ctx)
			if err != nil {
				return err
			}
			for _, child := range children {
				fmt.Println(" ", child.WorkflowType, child.HeroType, child.HeroID, child.State)
			}
			return nil
		}, &worker.StepOpts{Await: &worker.Await{Children: worker.JoinAll, Timeout: 24 * time.Hour}})
	invoice := worker.NewWorkflow("Invoice", nil).Step("send", ok, nil)

	h := workertest.New(tb, conn, &worker.Config{Workflows: []*worker.Workflow{invoiceRun, invoice}})
	run := h.Create(ctx, "InvoiceRun", "Month", "2031-01")
	h.PerformNextStep(ctx, run) // fan_out: the three invoices start with its success
	h.PerformNextStep(ctx, run) // report's first claim: its children run, it waits

	children, err := h.Client().ListWorkflows(ctx, &goclient.WorkflowFilter{ParentID: run}, 100)
	must(err)
	for _, child := range children {
		h.Speedrun(ctx, child.ID, nil) // the last one's end makes the join due
	}
	h.PerformNextStep(ctx, run) // report
	workflow, err := h.Client().GetWorkflow(ctx, run)
	must(err)
	fmt.Println("run", workflow.State)
	// Output:
	// 3 children, 3 finished
	//   Invoice Customer 7 finished
	//   Invoice Customer 8 finished
	//   Invoice Customer 9 finished
	// run finished
}
