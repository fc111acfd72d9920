package worker_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/geneva-dev/geneva/internal/dbtest"
	"github.com/geneva-dev/geneva/worker"
	"github.com/geneva-dev/geneva/worker/workertest"
)

// A transactional step writes on step.Tx(): its writes commit together with
// the record of its end, or not at all. Here the first run fails after its
// write, which is rolled back; the policy reattempts the step, whose second
// run commits its row with its success.
func ExampleStepOpts_transactional() {
	ctx := context.Background()
	tb := dbtest.ExampleTB()
	conf := dbtest.NewConfig(tb)
	pool := dbtest.NewPoolConfig(tb, conf) // the application's
	_, err := pool.Exec(ctx, `create table invoices (workflow_id bigint primary key, amount_cents bigint not null);
		grant select, insert on invoices to geneva_worker`)
	must(err)
	errGateway := errors.New("payment gateway timed out")

	// docs:transactional:begin
	billing := worker.NewWorkflow("Billing", nil).
		Step("invoice", func(ctx context.Context, step *worker.Step) error {
			_, err := step.Tx().Exec(ctx, "insert into invoices (workflow_id, amount_cents) values ($1, 4200)", step.WorkflowID)
			if err != nil {
				return err
			}
			if step.Attempt == 1 {
				return errGateway // the insert is rolled back; the policy reattempts
			}
			return nil // the insert commits with the step's success
		}, &worker.StepOpts{
			Transactional: true,
			OnException:   &worker.ExceptionPolicy{Action: worker.ActionReattempt, MaxReattempts: 3},
		})
	// docs:transactional:end

	h := workertest.New(tb, dbtest.NewConnAs(tb, conf, dbtest.Harness), &worker.Config{Workflows: []*worker.Workflow{billing}})
	id := h.Create(ctx, "Billing", "Account", "7")
	workflow := h.Speedrun(ctx, id, nil)
	for _, e := range h.History(ctx, id) {
		fmt.Println(e.StepName, *e.Outcome)
	}
	var invoices int
	must(pool.QueryRow(ctx, "select count(*) from invoices where workflow_id = $1", id).Scan(&invoices))
	fmt.Println(workflow.State, "with", invoices, "invoice")
	// Output:
	// invoice reattempted_by_exception
	// invoice success
	// finished with 1 invoice
}
