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
		require.Equal(t, protocol.FailResult{Action: ptr("pause"), Outcome: ptr(goclient.OutcomePausedByException), Report: true, WorkflowState: "paused"}, *result)

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
		require.Equal(t, protocol.StepResult{Outcome: ptr(goclient.OutcomeReattempted), WorkflowState: "ready"}, *completed)
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
		require.Equal(t, goclient.OutcomeSuccess, *completed.Outcome)
		require.NotNil(t, completed.Next, "b is due now: started for this job")
		require.Equal(t, "b", completed.Next.StepName)
		require.Equal(t, 1, completed.Next.Attempt)

		interrupted, err := worker.InterruptStep(ctx, completed.Next.ExecutionID, nil)
		require.NoError(t, err)
		require.Equal(t, protocol.StepResult{Outcome: ptr(goclient.OutcomeRecovered), WorkflowState: "ready"}, *interrupted)
	})

	t.Run("CompleteStepsAnswersByPosition", func(t *testing.T) {
		t.Parallel()
		ctx, _, client, worker := setup(t)
		require.NoError(t, worker.DefineWorkflow(ctx, "Now", []byte(`{"steps": [{"name": "a"}, {"name": "b"}]}`)))
		// executions started in one order, reported in another, with
		// different signals, waits and continue flags
		var started []*protocol.Execution
		for i, workflowType := range []string{"Now", "Two", "Now", "Two"} {
			id, err := client.CreateWorkflow(ctx, workflowType, "User", string(rune('1'+i)), nil)
			require.NoError(t, err)
			history, err := client.StepHistory(ctx, id)
			require.NoError(t, err)
			s, err := worker.StartStep(ctx, history[0].ID, protocol.PreconditionNone)
			require.NoError(t, err)
			started = append(started, s)
		}
		reports := []protocol.CompleteReport{
			{ExecutionID: started[3].ExecutionID, Signal: protocol.SignalReattempt, Wait: time.Minute},
			{ExecutionID: started[0].ExecutionID, Signal: protocol.SignalSuccess, Continue: true},
			{ExecutionID: started[1].ExecutionID, Signal: protocol.SignalSuccess},
			{ExecutionID: started[2].ExecutionID, Signal: protocol.SignalSuccess},
		}

		results, err := worker.CompleteSteps(ctx, reports)

		require.NoError(t, err)
		require.Len(t, results, 4)
		require.Equal(t, protocol.StepResult{Outcome: ptr(goclient.OutcomeReattempted), WorkflowState: "ready"}, *results[0])
		require.Equal(t, goclient.OutcomeSuccess, *results[1].Outcome)
		require.Equal(t, goclient.WorkflowState("performing"), results[1].WorkflowState)
		require.NotNil(t, results[1].Next, "b of the first Now is due now and was offered to this job")
		require.Equal(t, "b", results[1].Next.StepName)
		require.Equal(t, 1, results[1].Next.Attempt)
		require.Equal(t, protocol.StepResult{Outcome: ptr(goclient.OutcomeSuccess), WorkflowState: "ready"}, *results[2], "b of Two waits an hour")
		require.Equal(t, protocol.StepResult{Outcome: ptr(goclient.OutcomeSuccess), WorkflowState: "ready"}, *results[3], "not offered: b gets a job")

		// reported again (a lost reply): nothing is recorded twice, and the
		// step the first call started is handed over again
		again, err := worker.CompleteSteps(ctx, reports)
		require.NoError(t, err)
		for i, result := range again {
			require.Nil(t, result.Outcome, "report %d", i)
		}
		require.NotNil(t, again[1].Next)
		require.Equal(t, results[1].Next.ExecutionID, again[1].Next.ExecutionID)

		none, err := worker.CompleteSteps(ctx, nil)
		require.NoError(t, err)
		require.Empty(t, none)
	})

	t.Run("CompleteStepsRecordsNothingWhenOneReportIsBad", func(t *testing.T) {
		t.Parallel()
		ctx, pool, client, worker := setup(t)
		id, err := client.CreateWorkflow(ctx, "Two", "User", "1", nil)
		require.NoError(t, err)
		history, err := client.StepHistory(ctx, id)
		require.NoError(t, err)
		started, err := worker.StartStep(ctx, history[0].ID, protocol.PreconditionNone)
		require.NoError(t, err)

		for _, c := range []struct {
			bad  protocol.CompleteReport
			want error
			code string
		}{
			{protocol.CompleteReport{ExecutionID: 404, Signal: protocol.SignalSuccess}, goclient.ErrNotFound, "P0002"},
			{protocol.CompleteReport{ExecutionID: 404, Signal: "explode"}, goclient.ErrInvalidArgument, "22023"},
		} {
			_, err := worker.CompleteSteps(ctx, []protocol.CompleteReport{
				{ExecutionID: started.ExecutionID, Signal: protocol.SignalSuccess}, c.bad,
			})
			require.ErrorIs(t, err, c.want)
			var pgErr *pgconn.PgError
			require.ErrorAs(t, err, &pgErr)
			require.Equal(t, c.code, pgErr.Code)
		}
		var state string
		require.NoError(t, pool.QueryRow(ctx, "select state from geneva.step_executions where id = $1", started.ExecutionID).Scan(&state))
		require.Equal(t, "in_progress", state, "nothing recorded")
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
		require.NotNil(t, started)
		// an hour later (on the test clock: a running execution's updated_at
		// cannot be aged by hand, step_executions_guard_times)
		tx, err := pool.Begin(ctx)
		require.NoError(t, err)
		defer func() { _ = tx.Rollback(ctx) }()
		_, err = tx.Exec(ctx, "select set_config('geneva.fake_now', (now() + interval '1 hour')::text, true)")
		require.NoError(t, err)
		running, err = protocol.New(tx).HeartbeatStep(ctx, executionID)
		require.NoError(t, err)
		require.True(t, running)
		require.NoError(t, tx.Commit(ctx))
		execution, err := client.GetStepExecution(ctx, executionID)
		require.NoError(t, err)
		require.True(t, execution.UpdatedAt.After(started.StartedAt.Add(30*time.Minute)), "touched")

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
