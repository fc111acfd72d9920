package main

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/geneva-dev/geneva/examples"
	"github.com/geneva-dev/geneva/worker"
)

// workerOptions are the flags of the worker command.
type workerOptions struct {
	maxWorkers int
	grace      time.Duration
}

func newWorkerCmd(opts *options) *cobra.Command {
	wo := &workerOptions{}
	cmd := &cobra.Command{
		Use:   "worker",
		Short: "Run a worker for the example workflows until interrupted",
		Long: `Run a worker for the example workflows only (UserOnboarding,
PaymentProcessing, WebhookDelivery from examples/), until interrupted.

Your own workflows run in your own worker binary: a few lines around
worker.New, as examples/myworker/main.go shows (README, "Your own worker").`,
		Args: noArgs,
		RunE: withEnv(opts, true, func(ctx context.Context, env *environment, args []string) error {
			return runWorker(ctx, env, wo)
		}),
	}
	cmd.Flags().IntVar(&wo.maxWorkers, "max-workers", 10, "steps run at once per queue")
	cmd.Flags().DurationVar(&wo.grace, "grace", 30*time.Second, "on interrupt, let running steps finish this long")
	return cmd
}

// runWorker runs a worker for the example workflows until interrupted.
func runWorker(ctx context.Context, env *environment, wo *workerOptions) error {
	world := examples.NewWorld()
	world.AutoCreate = true
	w, err := worker.New(env.pool, &worker.Config{
		Workflows:  examples.Workflows(world, nil),
		MaxWorkers: wo.maxWorkers,
	})
	if err != nil {
		return err
	}
	if err := w.Start(ctx); err != nil {
		return err
	}
	env.printf("worker running (UserOnboarding, PaymentProcessing, WebhookDelivery); interrupt to stop\n")
	<-ctx.Done()

	env.printf("stopping: running steps have %s to finish\n", wo.grace)
	stopCtx, cancel := context.WithTimeout(context.Background(), wo.grace)
	defer cancel()
	return w.Stop(stopCtx)
}
