package otelgeneva_test

import (
	"context"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/geneva-dev/geneva/goclient"
	"github.com/geneva-dev/geneva/otelgeneva"
	"github.com/geneva-dev/geneva/worker"
)

// The hook traces every step and records its metrics with the global
// providers; a workflow created with CreateOpts links each of its steps to
// the request that created it.
func Example() {
	ctx := context.Background() // a traced request's context
	var pool *pgxpool.Pool      // the application's pool
	var workflows []*worker.Workflow

	w, err := worker.New(pool, &worker.Config{
		Workflows: workflows,
		Hooks:     []worker.Hook{otelgeneva.NewHook(nil)},
	})
	if err != nil {
		return
	}
	_ = w

	client := goclient.New(pool)
	_, _ = client.CreateWorkflow(ctx, "Signup", "User", "42", otelgeneva.CreateOpts(ctx))
}
