package worker_test

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/geneva-dev/geneva/goclient"
	"github.com/geneva-dev/geneva/internal/dbtest"
	"github.com/geneva-dev/geneva/worker"
)

func must(err error) {
	if err != nil {
		panic(err)
	}
}

// A workflow defined in Go, created in the application's own transaction,
// and run to its end by a worker.
func Example() {
	ctx := context.Background()
	pool := dbtest.NewPool(dbtest.ExampleTB()) // a database with Geneva's schema (geneva.Migrate)
	_, err := pool.Exec(ctx, "create table users (id bigint primary key)")
	must(err)

	// quickstart:begin
	welcome := worker.NewWorkflow("Welcome", nil).
		Step("send_email", func(ctx context.Context, step *worker.Step) error {
			fmt.Println("welcome email to user", step.HeroID)
			return nil
		}, nil).
		Step("send_tips", func(ctx context.Context, step *worker.Step) error {
			fmt.Println("tips to user", step.HeroID)
			return nil
		}, &worker.StepOpts{Wait: time.Second})

	w, err := worker.New(pool, &worker.Config{Workflows: []*worker.Workflow{welcome}})
	must(err)
	must(w.Start(ctx)) // registers the definition, starts River
	defer func() { must(w.Stop(ctx)) }()

	// The workflow commits with the application's own writes, or not at all.
	var id int64
	must(pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "insert into users (id) values (42)"); err != nil {
			return err
		}
		id, err = goclient.New(tx).CreateWorkflow(ctx, "Welcome", "User", "42", nil)
		return err
	}))

	for {
		workflow, err := w.Client().GetWorkflow(ctx, id)
		must(err)
		if workflow.State == goclient.StateFinished {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	fmt.Println("workflow finished")
	// quickstart:end

	// Output:
	// welcome email to user 42
	// tips to user 42
	// workflow finished
}
