package worker

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/internal/dbtest"
)

// SQL owns the defaults of a definition and writes the step jobs' arguments;
// these tests pin what the worker mirrors of them to what the database does.

// A workflow without a Queue runs in the queue geneva.define_workflow gives
// it, which is the one the worker listens on; without a Priority it gets
// SQL's default, the 1 WorkflowOpts.Priority documents.
func TestDefinitionDefaultsMatchSQL(t *testing.T) {
	ctx := context.Background()
	conn := dbtest.NewConn(t, dbtest.NewConfig(t))
	noop := func(context.Context, *Step) error { return nil }
	reg, err := newRegistry([]*Workflow{NewWorkflow("Plain", nil).Step("only", noop, nil)})
	require.NoError(t, err)

	_, err = conn.Exec(ctx, "select geneva.define_workflow($1, $2)", "Plain", reg["Plain"].definition)
	require.NoError(t, err)
	var (
		queue    string
		priority int
	)
	require.NoError(t, conn.QueryRow(ctx,
		"select queue, priority from geneva.workflow_definitions where workflow_type = 'Plain'").Scan(&queue, &priority))
	require.Equal(t, []string{queue}, reg.queues(nil), "the worker listens on another queue than SQL's default")
	require.Equal(t, 1, priority, "SQL's default priority is no longer the one WorkflowOpts.Priority documents")
}

// An HTTP step without a Queue has its jobs in the queue SQL gives it
// (geneva._step_queue), the one a worker running HTTP steps listens on.
func TestHTTPQueueDefaultMatchesSQL(t *testing.T) {
	ctx := context.Background()
	conn := dbtest.NewConn(t, dbtest.NewConfig(t))
	noop := func(context.Context, *Step) error { return nil }
	reg, err := newRegistry([]*Workflow{NewWorkflow("Mixed", nil).
		Step("go", noop, nil).
		Step("http", nil, &StepOpts{HTTP: &HTTP{URL: "https://x.example.com/a"}})})
	require.NoError(t, err)
	_, err = conn.Exec(ctx, "select geneva.define_workflow($1, $2)", "Mixed", reg["Mixed"].definition)
	require.NoError(t, err)
	var queues []string
	require.NoError(t, conn.QueryRow(ctx,
		"select step_queues from geneva.workflow_definitions where workflow_type = 'Mixed'").Scan(&queues))
	require.Equal(t, []string{"default", DefaultHTTPQueue}, queues)
	require.Equal(t, []string{"default", DefaultHTTPQueue}, reg.queues(&HTTPConfig{}))
	require.Equal(t, []string{"default"}, reg.queues(nil), "a worker without HTTP leaves the HTTP step's queue")
}

// StepArgs has exactly the fields of the arguments geneva._enqueue_step
// writes, under the same names, and the job's kind.
func TestStepArgsMatchSQL(t *testing.T) {
	ctx := context.Background()
	conn := dbtest.NewConn(t, dbtest.NewConfig(t))
	_, err := conn.Exec(ctx, `select geneva.define_workflow('Plain', '{"steps": [{"name": "only"}]}')`)
	require.NoError(t, err)
	_, err = conn.Exec(ctx, "select geneva.create_workflow('Plain', 'User', '7')")
	require.NoError(t, err)

	var (
		kind string
		args []byte
	)
	require.NoError(t, conn.QueryRow(ctx, "select kind, args from public.river_job").Scan(&kind, &args))
	require.Equal(t, StepArgs{}.Kind(), kind)

	decoder := json.NewDecoder(bytes.NewReader(args))
	decoder.DisallowUnknownFields() // no argument SQL writes is unknown to StepArgs
	var decoded StepArgs
	require.NoError(t, decoder.Decode(&decoded), "StepArgs lacks an argument SQL writes: %s", args)
	back, err := json.Marshal(decoded)
	require.NoError(t, err)
	// and no field of StepArgs is missing from SQL's, or decoded from another name
	require.JSONEq(t, string(args), string(back))
}
