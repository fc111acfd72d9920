// Command myworker is the shape of a worker binary of your own: your
// workflows, defined in Go, run by worker.New until the process is told to
// stop. Copy it into your application and replace the workflow.
//
//	DATABASE_URL=postgres://localhost/app go run ./examples/myworker
//
// The database needs Geneva's schema first (geneva migrate, or psql -f
// dist/geneva.sql).
package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/geneva-dev/geneva/worker"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Getenv("DATABASE_URL")); err != nil {
		log.Fatal(err)
	}
}

// workflows are the workflows this binary runs: every worker that shares the
// database must define the same ones.
func workflows() []*worker.Workflow {
	return []*worker.Workflow{
		worker.NewWorkflow("Welcome", nil).
			Step("send_welcome_email", func(ctx context.Context, step *worker.Step) error {
				fmt.Println("welcome email to user", step.HeroID)
				return nil
			}, nil).
			Step("send_tips", func(ctx context.Context, step *worker.Step) error {
				fmt.Println("tips to user", step.HeroID)
				return nil
			}, &worker.StepOpts{Wait: 2 * 24 * time.Hour}),
	}
}

// run runs the worker until ctx ends, then lets running steps finish for up
// to 30 seconds.
func run(ctx context.Context, databaseURL string) error {
	pool, err := pgxpool.New(ctx, databaseURL)
	if err != nil {
		return err
	}
	defer pool.Close()

	w, err := worker.New(pool, &worker.Config{Workflows: workflows()})
	if err != nil {
		return err
	}
	if err := w.Start(ctx); err != nil { // registers the definitions, starts River
		return err
	}
	<-ctx.Done()

	stopCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return w.Stop(stopCtx)
}
