package tests

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/peterldowns/pgtestdb"
	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/internal/dbtest"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

// testBundle is one test's database: conf to open more connections, pool for
// concurrent work, and conn, one connection for sequential steps (the fake
// clock, geneva.fake_now, is a setting of a connection).
type testBundle struct {
	conf *pgtestdb.Config
	conn *pgx.Conn
	ctx  context.Context
	pool *pgxpool.Pool
	// reader is a connection as a member of geneva_reader, opened by viewRows
	reader *pgx.Conn
}

func setup(t *testing.T) *testBundle {
	t.Helper()
	conf := dbtest.NewConfig(t)
	return &testBundle{
		conf: conf,
		conn: dbtest.NewConn(t, conf),
		ctx:  context.Background(),
		pool: dbtest.NewPoolConfig(t, conf),
	}
}

// The clock of tests starts here unless a test says otherwise.
var t0 = time.Date(2030, 1, 1, 12, 0, 0, 0, time.Local) // pgx reads timestamptz in time.Local

// setNow sets geneva.fake_now on the bundle's connection.
func (b *testBundle) setNow(t *testing.T, at time.Time) {
	t.Helper()
	setNowOn(t, b.conn, at)
}

func setNowOn(t *testing.T, conn *pgx.Conn, at time.Time) {
	t.Helper()
	_, err := conn.Exec(context.Background(), "select set_config('geneva.fake_now', $1, false)", at.Format(time.RFC3339Nano))
	require.NoError(t, err)
}

// define registers a workflow type from a JSON definition.
func (b *testBundle) define(t *testing.T, workflowType, definition string) {
	t.Helper()
	_, err := b.conn.Exec(b.ctx, "select geneva.define_workflow($1, $2::jsonb)", workflowType, definition)
	require.NoError(t, err)
}

// threeSteps defines "ThreeSteps": a, then b after 1 hour, then c.
func (b *testBundle) defineThreeSteps(t *testing.T) {
	t.Helper()
	b.define(t, "ThreeSteps", `{"steps": [{"name": "a"}, {"name": "b", "wait": "1 hour"}, {"name": "c"}]}`)
}

func (b *testBundle) create(t *testing.T, workflowType, heroID string) int64 {
	t.Helper()
	id, err := b.tryCreate(workflowType, heroID)
	require.NoError(t, err)
	return id
}

func (b *testBundle) tryCreate(workflowType, heroID string) (int64, error) {
	var id int64
	err := b.conn.QueryRow(b.ctx, "select geneva.create_workflow($1, 'User', $2)", workflowType, heroID).Scan(&id)
	return id, err
}

type workflowRow struct {
	ID              int64
	WorkflowType    string
	State           string
	CurrentStepName *string
	NextStepName    *string
	RequestedAction *string
	StartedAt       *time.Time
	TransitionedAt  *time.Time
	PausedAt        *time.Time
	FinishedAt      *time.Time
	CanceledAt      *time.Time
	UpdatedAt       time.Time
}

func (b *testBundle) workflow(t *testing.T, id int64) workflowRow {
	t.Helper()
	rows, err := b.conn.Query(b.ctx, `
		select id, workflow_type, state, current_step_name, next_step_name, requested_action,
		  started_at, transitioned_at, paused_at, finished_at, canceled_at, updated_at
		from geneva.workflows where id = $1`, id)
	require.NoError(t, err)
	row, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByPos[workflowRow])
	require.NoError(t, err)
	return row
}

type executionRow struct {
	ID              int64
	StepName        string
	State           string
	Outcome         *string
	ScheduledFor    time.Time
	StartedAt       *time.Time
	CompletedAt     *time.Time
	FailedAt        *time.Time
	CanceledAt      *time.Time
	SkippedAt       *time.Time
	FinishedAt      *time.Time
	ErrorClassName  *string
	ErrorMessage    *string
	ErrorBacktrace  *string
	JobID           *int64
	Metadata        map[string]any
	Cursor          json.RawMessage
	ContinuesFromID *int64
}

const executionColumns = `id, step_name, state, outcome, scheduled_for, started_at, completed_at,
	failed_at, canceled_at, skipped_at, finished_at, error_class_name, error_message, error_backtrace,
	job_id, metadata, cursor, continues_from_id`

// executions returns a workflow's executions in order.
func (b *testBundle) executions(t *testing.T, workflowID int64) []executionRow {
	t.Helper()
	rows, err := b.conn.Query(b.ctx, "select "+executionColumns+
		" from geneva.step_executions where workflow_id = $1 order by id", workflowID)
	require.NoError(t, err)
	all, err := pgx.CollectRows(rows, pgx.RowToStructByPos[executionRow])
	require.NoError(t, err)
	return all
}

func (b *testBundle) execution(t *testing.T, id int64) executionRow {
	t.Helper()
	rows, err := b.conn.Query(b.ctx, "select "+executionColumns+" from geneva.step_executions where id = $1", id)
	require.NoError(t, err)
	row, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByPos[executionRow])
	require.NoError(t, err)
	return row
}

// active returns the workflow's scheduled or in_progress execution.
func (b *testBundle) active(t *testing.T, workflowID int64) executionRow {
	t.Helper()
	var id int64
	err := b.conn.QueryRow(b.ctx, `select id from geneva.step_executions
		where workflow_id = $1 and state in ('scheduled', 'in_progress')`, workflowID).Scan(&id)
	require.NoError(t, err, "workflow %d has no active execution", workflowID)
	return b.execution(t, id)
}

func (b *testBundle) noActive(t *testing.T, workflowID int64) {
	t.Helper()
	var n int
	require.NoError(t, b.conn.QueryRow(b.ctx, `select count(*) from geneva.step_executions
		where workflow_id = $1 and state in ('scheduled', 'in_progress')`, workflowID).Scan(&n))
	require.Zero(t, n, "workflow %d has an active execution", workflowID)
}

// startedStep is the row start_step returns.
type startedStep struct {
	ExecutionID     int64
	WorkflowID      int64
	WorkflowType    string
	HeroType        string
	HeroID          string
	StepName        string
	Attempt         int32
	ScheduledFor    time.Time
	StartedAt       time.Time
	Cursor          json.RawMessage
	ContinuesFromID *int64
	Queue           string
	TraceContext    *string
	EventID         *int64
	EventName       *string
	EventPayload    json.RawMessage
	EventSentAt     *time.Time
	Group           *string
	HTTP            json.RawMessage
	IdempotencyKey  *int64
	EventSentBy     *string
}

// startStep calls start_step; ok tells whether it returned a row.
func (b *testBundle) startStep(t *testing.T, executionID int64, precondition *string) (startedStep, bool) {
	t.Helper()
	row, ok, err := startStepOn(b.ctx, b.conn, executionID, precondition)
	require.NoError(t, err)
	return row, ok
}

func startStepOn(ctx context.Context, db queryer, executionID int64, precondition *string) (startedStep, bool, error) {
	rows, err := db.Query(ctx, "select * from geneva.start_step($1, $2)", executionID, precondition)
	if err != nil {
		return startedStep{}, false, err
	}
	all, err := pgx.CollectRows(rows, pgx.RowToStructByPos[startedStep])
	if err != nil || len(all) == 0 {
		return startedStep{}, false, err
	}
	return all[0], true, nil
}

// run starts the workflow's active execution (it must be due) and returns it.
func (b *testBundle) run(t *testing.T, workflowID int64) startedStep {
	t.Helper()
	execution := b.active(t, workflowID)
	started, ok := b.startStep(t, execution.ID, nil)
	require.True(t, ok, "execution %d (%s) did not start", execution.ID, execution.StepName)
	return started
}

type completed struct {
	Outcome       *string
	WorkflowState string
}

func (b *testBundle) complete(t *testing.T, executionID int64, signal string, wait *time.Duration) completed {
	t.Helper()
	rows, err := b.conn.Query(b.ctx, "select * from geneva.complete_step($1, $2, $3)", executionID, signal, wait)
	require.NoError(t, err)
	row, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByPos[completed])
	require.NoError(t, err)
	return row
}

type failed struct {
	Action        *string
	Outcome       *string
	Report        bool
	WorkflowState string
	Handler       *string
}

func (b *testBundle) fail(t *testing.T, executionID int64, classes []string, message string) failed {
	t.Helper()
	row, err := b.tryFail(executionID, classes, message, nil, nil)
	require.NoError(t, err)
	return row
}

// failPrecondition calls fail_step for an error of the preconditions.
func (b *testBundle) failPrecondition(t *testing.T, executionID int64, classes []string, message string) failed {
	t.Helper()
	rows, err := b.conn.Query(b.ctx, "select * from geneva.fail_step($1, $2, $3, p_precondition => true)",
		executionID, classes, message)
	require.NoError(t, err)
	row, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByPos[failed])
	require.NoError(t, err)
	return row
}

func (b *testBundle) tryFail(executionID int64, classes []string, message string, handlerSignal *string, handlerWait *time.Duration) (failed, error) {
	rows, err := b.conn.Query(b.ctx, "select * from geneva.fail_step($1, $2, $3, 'stack trace', $4, $5)",
		executionID, classes, message, handlerSignal, handlerWait)
	if err != nil {
		return failed{}, err
	}
	return pgx.CollectExactlyOneRow(rows, pgx.RowToStructByPos[failed])
}

// call runs an operator function (pause_workflow, ...) on a workflow and
// returns the state it reports.
func (b *testBundle) call(t *testing.T, function string, workflowID int64) string {
	t.Helper()
	state, err := b.tryCall(function, workflowID)
	require.NoError(t, err)
	return state
}

func (b *testBundle) tryCall(function string, workflowID int64) (string, error) {
	var state string
	err := b.conn.QueryRow(b.ctx, "select (geneva."+function+"($1)).state", workflowID).Scan(&state)
	return state, err
}

// jobCount counts River jobs for an execution.
func (b *testBundle) jobCount(t *testing.T, executionID int64) int {
	t.Helper()
	var n int
	require.NoError(t, b.conn.QueryRow(b.ctx,
		"select count(*) from public.river_job where (args->>'execution_id')::bigint = $1", executionID).Scan(&n))
	return n
}

type riverJob struct {
	ID          int64
	State       string
	Kind        string
	Queue       string
	Priority    int16
	ScheduledAt time.Time
	Args        map[string]any
}

func (b *testBundle) job(t *testing.T, jobID int64) riverJob {
	t.Helper()
	rows, err := b.conn.Query(b.ctx,
		"select id, state::text, kind, queue, priority, scheduled_at, args from public.river_job where id = $1", jobID)
	require.NoError(t, err)
	row, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByPos[riverJob])
	require.NoError(t, err)
	return row
}

// dbNow is the server's real clock (River's, not the engine's).
func (b *testBundle) dbNow(t *testing.T) time.Time {
	t.Helper()
	var now time.Time
	require.NoError(t, b.conn.QueryRow(b.ctx, "select now()").Scan(&now))
	return now
}

type queryer interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// requireCode asserts that err is a PostgreSQL error with the SQLSTATE code.
func requireCode(t *testing.T, err error, code string) *pgconn.PgError {
	t.Helper()
	require.Error(t, err)
	var pgErr *pgconn.PgError
	require.True(t, errors.As(err, &pgErr), "not a PostgreSQL error: %v", err)
	require.Equal(t, code, pgErr.Code, "error: %s", pgErr.Message)
	return pgErr
}

func ptr[T any](v T) *T { return &v }

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

func hours(n int) time.Duration { return time.Duration(n) * time.Hour }
