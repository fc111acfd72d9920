package protocol_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/goclient"
	"github.com/geneva-dev/geneva/internal/dbtest"
	"github.com/geneva-dev/geneva/internal/protocol"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

// setup returns the owner's pool (to look at or change the tables directly),
// a client connected as a member of geneva_operator (to create and operate
// workflows) and a protocol client connected as a member of geneva_worker,
// which has defined the workflow type Two.
func setup(t *testing.T) (context.Context, *pgxpool.Pool, *goclient.Client, *protocol.Client) {
	t.Helper()
	ctx := context.Background()
	conf := dbtest.NewConfig(t)
	pool := dbtest.NewPoolConfig(t, conf)
	client := goclient.New(dbtest.NewPoolAs(t, conf, dbtest.Operator))
	worker := protocol.New(dbtest.NewPoolAs(t, conf, dbtest.Worker))
	require.NoError(t, worker.DefineWorkflow(ctx, "Two", []byte(`{"steps": [{"name": "a"}, {"name": "b", "wait": "1 hour"}]}`)))
	return ctx, pool, client, worker
}

func ptr[T any](v T) *T { return &v }

func TestProtocol(t *testing.T) {
	t.Parallel()

	t.Run("RunsAStep", func(t *testing.T) {
		t.Parallel()
		ctx, _, client, worker := setup(t)
		id, err := client.CreateWorkflow(ctx, "Two", "User", "1", nil)
		require.NoError(t, err)
		history, err := client.StepHistory(ctx, id)
		require.NoError(t, err)

		started, err := worker.StartStep(ctx, history[0].ID, protocol.PreconditionNone)
		require.NoError(t, err)
		require.Equal(t, "a", started.StepName)
		again, err := worker.StartStep(ctx, history[0].ID, protocol.PreconditionNone)
		require.NoError(t, err)
		require.Nil(t, again, "nothing to run twice")

		result, err := worker.FailStep(ctx, started.ExecutionID, &protocol.Failure{Classes: []string{"Boom"}, Message: "boom"})
		require.NoError(t, err)
		require.Equal(t, protocol.FailResult{Action: ptr("pause"), Outcome: ptr("paused_by_exception"), Report: true, WorkflowState: "paused"}, *result)

		_, err = client.ResumeWorkflow(ctx, id)
		require.NoError(t, err)
		history, err = client.StepHistory(ctx, id)
		require.NoError(t, err)
		started, err = worker.StartStep(ctx, history[1].ID, protocol.PreconditionNone)
		require.NoError(t, err)
		stop, err := worker.CheckpointStep(ctx, started.ExecutionID, []byte(`{"n": 1}`))
		require.NoError(t, err)
		require.False(t, stop)
		completed, err := worker.CompleteStep(ctx, started.ExecutionID, protocol.SignalReattempt, time.Minute, nil)
		require.NoError(t, err)
		require.Equal(t, protocol.StepResult{Outcome: ptr("reattempted"), WorkflowState: "ready"}, *completed)
	})

	t.Run("ContinuesAndInterrupts", func(t *testing.T) {
		t.Parallel()
		ctx, _, client, worker := setup(t)
		require.NoError(t, worker.DefineWorkflow(ctx, "Now", []byte(`{"steps": [{"name": "a"}, {"name": "b"}]}`)))
		id, err := client.CreateWorkflow(ctx, "Now", "User", "1", nil)
		require.NoError(t, err)
		history, err := client.StepHistory(ctx, id)
		require.NoError(t, err)
		started, err := worker.StartStep(ctx, history[0].ID, protocol.PreconditionNone)
		require.NoError(t, err)

		completed, err := worker.CompleteStep(ctx, started.ExecutionID, protocol.SignalSuccess, 0, &protocol.ReportOpts{Continue: true})

		require.NoError(t, err)
		require.Equal(t, "success", *completed.Outcome)
		require.NotNil(t, completed.Next, "b is due now: started for this job")
		require.Equal(t, "b", completed.Next.StepName)
		require.Equal(t, 1, completed.Next.Attempt)

		interrupted, err := worker.InterruptStep(ctx, completed.Next.ExecutionID, nil)
		require.NoError(t, err)
		require.Equal(t, protocol.StepResult{Outcome: ptr("recovered"), WorkflowState: "ready"}, *interrupted)
	})

	t.Run("ErrorsMatchGoclientsSentinels", func(t *testing.T) {
		t.Parallel()
		ctx, _, _, worker := setup(t)

		for _, c := range []struct {
			err  error
			want error
			code string
		}{
			{worker.DefineWorkflow(ctx, "Bad", []byte(`{"steps": {}}`)), goclient.ErrInvalidArgument, "22023"},
			{second(worker.StartStep(ctx, 404, protocol.PreconditionNone)), goclient.ErrNotFound, "P0002"},
			{second(worker.CompleteStep(ctx, 404, protocol.SignalSuccess, 0, nil)), goclient.ErrNotFound, "P0002"},
		} {
			require.ErrorIs(t, c.err, c.want)
			var mapped *goclient.Error
			require.ErrorAs(t, c.err, &mapped)
			var pgErr *pgconn.PgError
			require.ErrorAs(t, c.err, &pgErr)
			require.Equal(t, c.code, pgErr.Code)
		}
	})

	t.Run("HeartbeatStepTouchesOnlyARunningExecution", func(t *testing.T) {
		t.Parallel()
		ctx, pool, client, worker := setup(t)
		id, err := client.CreateWorkflow(ctx, "Two", "User", "1", nil)
		require.NoError(t, err)
		history, err := client.StepHistory(ctx, id)
		require.NoError(t, err)
		executionID := history[0].ID

		running, err := worker.HeartbeatStep(ctx, executionID)
		require.NoError(t, err)
		require.False(t, running, "still scheduled")

		started, err := worker.StartStep(ctx, executionID, protocol.PreconditionNone)
		require.NoError(t, err)
		_, err = pool.Exec(ctx, "update geneva.step_executions set updated_at = updated_at - interval '1 hour' where id = $1", executionID)
		require.NoError(t, err)
		tx, err := pool.Begin(ctx)
		require.NoError(t, err)
		running, err = protocol.New(tx).HeartbeatStep(ctx, executionID)
		require.NoError(t, err)
		require.True(t, running)
		require.NoError(t, tx.Commit(ctx))
		execution, err := client.GetStepExecution(ctx, executionID)
		require.NoError(t, err)
		require.False(t, execution.UpdatedAt.Before(started.StartedAt), "touched")

		_, err = worker.CompleteStep(ctx, executionID, protocol.SignalSuccess, 0, nil)
		require.NoError(t, err)
		running, err = worker.HeartbeatStep(ctx, executionID)
		require.NoError(t, err)
		require.False(t, running, "ended")
	})

	t.Run("StepDefined", func(t *testing.T) {
		t.Parallel()
		ctx, _, _, worker := setup(t)
		for _, c := range []struct {
			workflowType, step string
			want               bool
		}{{"Two", "a", true}, {"Two", "b", true}, {"Two", "c", false}, {"Three", "a", false}} {
			defined, err := worker.StepDefined(ctx, c.workflowType, c.step)
			require.NoError(t, err)
			require.Equal(t, c.want, defined, "%s.%s", c.workflowType, c.step)
		}
	})

	t.Run("OperatorsMayNotDefine", func(t *testing.T) {
		t.Parallel()
		ctx := context.Background()
		conf := dbtest.NewConfig(t)
		operator := protocol.New(dbtest.NewPoolAs(t, conf, dbtest.Operator))

		err := operator.DefineWorkflow(ctx, "Two", []byte(`{"steps": [{"name": "a"}]}`))

		var pgErr *pgconn.PgError
		require.ErrorAs(t, err, &pgErr)
		require.Equal(t, "42501", pgErr.Code, "the worker protocol is geneva_worker's")
	})
}

func second[T any](_ T, err error) error { return err }
