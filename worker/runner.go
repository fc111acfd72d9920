package worker

import (
	"context"

	"github.com/geneva-dev/geneva/goclient"
	"github.com/geneva-dev/geneva/internal/protocol"
)

// Runner runs step executions in the calling goroutine, without River: the
// same preconditions, SQL calls and outcome as the worker, for test helpers
// (package workertest) and tools. It uses the Workflows, Logger, Hooks,
// ErrorReporter and StepTimeout of its config.
type Runner struct {
	exec *executor
}

// NewRunner makes a runner for the workflows in config.
func NewRunner(config *Config) (*Runner, error) {
	exec, err := newExecutor(config)
	if err != nil {
		return nil, err
	}
	return &Runner{exec: exec}, nil
}

// Register writes the workflows' definitions to the database on db.
func (r *Runner) Register(ctx context.Context, db DB) error {
	return register(ctx, protocol.New(db), r.exec.registry)
}

// Perform runs one step execution on db, as the worker would when its River
// job arrives: nothing happens unless it is due and its workflow ready.
func (r *Runner) Perform(ctx context.Context, db DB, executionID int64) error {
	client := goclient.New(db)
	execution, err := client.GetStepExecution(ctx, executionID)
	if err != nil {
		return err
	}
	workflow, err := client.GetWorkflow(ctx, execution.WorkflowID)
	if err != nil {
		return err
	}
	return r.exec.perform(ctx, db, &protocol.Execution{
		ExecutionID:  execution.ID,
		WorkflowID:   workflow.ID,
		WorkflowType: workflow.WorkflowType,
		HeroType:     workflow.HeroType,
		HeroID:       workflow.HeroID,
		StepName:     execution.StepName,
	}, 0, "")
}
