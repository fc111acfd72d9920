package goclient_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/goclient"
	"github.com/geneva-dev/geneva/internal/dbtest"
	"github.com/geneva-dev/geneva/internal/protocol"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

// setup returns the owner's pool (to look at or change the tables directly),
// a client connected as a member of geneva_operator (what applications and
// operators may) and the worker protocol, connected as a member of
// geneva_worker, which has defined the workflow type Two.
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

// housekeepTomorrow runs a round of Housekeep a day from now (the test
// clock, in a transaction of the schema's owner): retention drops whole days
// of history (docs/history.md), so what ended today goes tomorrow.
func housekeepTomorrow(t *testing.T, pool *pgxpool.Pool, params *goclient.HousekeepParams) *goclient.HousekeepResult {
	t.Helper()
	ctx := context.Background()
	tx, err := pool.Begin(ctx)
	require.NoError(t, err)
	defer func() { _ = tx.Rollback(ctx) }()
	_, err = tx.Exec(ctx, "select set_config('geneva.fake_now', (now() + interval '1 day')::text, true)")
	require.NoError(t, err)
	result, err := goclient.New(tx).Housekeep(ctx, params)
	require.NoError(t, err)
	require.NoError(t, tx.Commit(ctx))
	return result
}

func TestClient(t *testing.T) {
	t.Parallel()

	t.Run("CreateWorkflowInTheCallersTransactionCommitsWithIt", func(t *testing.T) {
		t.Parallel()
		ctx, pool, client, _ := setup(t)

		tx, err := pool.Begin(ctx)
		require.NoError(t, err)
		rolledBack, err := goclient.New(tx).CreateWorkflow(ctx, "Two", "User", "1", nil)
		require.NoError(t, err)
		require.NoError(t, tx.Rollback(ctx))
		_, err = client.GetWorkflow(ctx, rolledBack)
		require.ErrorIs(t, err, goclient.ErrNotFound)

		tx, err = pool.Begin(ctx)
		require.NoError(t, err)
		committed, err := goclient.New(tx).CreateWorkflow(ctx, "Two", "User", "1", nil)
		require.NoError(t, err)
		require.NoError(t, tx.Commit(ctx))
		workflow, err := client.GetWorkflow(ctx, committed)
		require.NoError(t, err)
		require.Equal(t, goclient.StateReady, workflow.State)
	})

	// GetWorkflow and ListWorkflows read when the last step can start
	// (geneva.final_step_at), for workers too; the verbs leave it nil.
	t.Run("FinalStepAt", func(t *testing.T) {
		t.Parallel()
		ctx := context.Background()
		conf := dbtest.NewConfig(t)
		client := goclient.New(dbtest.NewPoolAs(t, conf, dbtest.Operator))
		workers := goclient.New(dbtest.NewPoolAs(t, conf, dbtest.Worker))
		require.NoError(t, protocol.New(dbtest.NewPoolAs(t, conf, dbtest.Worker)).DefineWorkflow(ctx, "Trial",
			[]byte(`{"steps": [{"name": "welcome"}, {"name": "charge", "after": "30 days"}]}`)))
		id, err := client.CreateWorkflow(ctx, "Trial", "User", "1", nil)
		require.NoError(t, err)

		for _, reader := range []*goclient.Client{client, workers} {
			workflow, err := reader.GetWorkflow(ctx, id)
			require.NoError(t, err)
			require.NotNil(t, workflow.FinalStepAt)
			require.Equal(t, workflow.CreatedAt.Add(30*24*time.Hour), *workflow.FinalStepAt)
		}
		listed, err := client.ListWorkflows(ctx, &goclient.WorkflowFilter{WorkflowType: "Trial"}, 0)
		require.NoError(t, err)
		require.Len(t, listed, 1)
		require.NotNil(t, listed[0].FinalStepAt)
		require.Equal(t, listed[0].CreatedAt.Add(30*24*time.Hour), *listed[0].FinalStepAt)

		paused, err := client.PauseWorkflow(ctx, id)
		require.NoError(t, err)
		require.Nil(t, paused.FinalStepAt, "a verb's row")
		_, err = client.CancelWorkflow(ctx, id)
		require.NoError(t, err)
		canceled, err := client.GetWorkflow(ctx, id)
		require.NoError(t, err)
		require.Nil(t, canceled.FinalStepAt, "ended")
	})

	// An application may create many at once; groups and keys go one per
	// hero, "" for none; a bad list is an invalid argument.
	t.Run("CreateWorkflowsAsAnApplication", func(t *testing.T) {
		t.Parallel()
		ctx := context.Background()
		conf := dbtest.NewConfig(t)
		client := goclient.New(dbtest.NewPoolAs(t, conf, dbtest.Operator))
		app := goclient.New(dbtest.NewPoolAs(t, conf, dbtest.App))
		require.NoError(t, protocol.New(dbtest.NewPoolAs(t, conf, dbtest.Worker)).DefineWorkflow(ctx, "Two",
			[]byte(`{"steps": [{"name": "a"}]}`)))

		ids, err := app.CreateWorkflows(ctx, "Two", "User", []string{"1", "2", "3"}, &goclient.CreateWorkflowsOpts{
			Groups:          []string{"acme", "", "acme"},
			IdempotencyKeys: []string{"", "order-2", "order-2"},
		})
		require.NoError(t, err)
		require.Len(t, ids, 3)
		require.Equal(t, ids[1], ids[2], "a key given twice creates once")
		first, err := client.GetWorkflow(ctx, ids[0])
		require.NoError(t, err)
		require.Equal(t, "acme", *first.Group)
		require.Equal(t, "1", first.HeroID)

		_, err = app.CreateWorkflows(ctx, "Two", "User", []string{"4", "5"}, &goclient.CreateWorkflowsOpts{Groups: []string{"acme"}})
		require.ErrorIs(t, err, goclient.ErrInvalidArgument)
		_, err = app.CreateWorkflows(ctx, "Two", "User", []string{"4", "1"}, nil)
		var duplicate *goclient.DuplicateWorkflowError
		require.ErrorAs(t, err, &duplicate)
		require.Equal(t, "1", duplicate.HeroID)
		empty, err := app.CreateWorkflows(ctx, "Two", "User", nil, nil)
		require.NoError(t, err)
		require.Empty(t, empty)

		// children, each key once among the parent's
		children, err := app.CreateWorkflows(ctx, "Two", "User", []string{"10", "11", "12"}, &goclient.CreateWorkflowsOpts{
			ParentID: ids[0], ChildKeys: []string{"k", "", "k"},
		})
		require.NoError(t, err)
		require.Len(t, children, 3)
		require.NotZero(t, children[0])
		require.NotZero(t, children[1])
		require.Zero(t, children[2], "key k twice")
		_, err = app.CreateWorkflows(ctx, "Two", "User", []string{"13"}, &goclient.CreateWorkflowsOpts{ChildKeys: []string{"k"}})
		require.ErrorIs(t, err, goclient.ErrInvalidArgument, "child keys without a parent")
	})

	t.Run("DuplicateWorkflowNamesTheHero", func(t *testing.T) {
		t.Parallel()
		ctx, _, client, _ := setup(t)
		_, err := client.CreateWorkflow(ctx, "Two", "User", "7", nil)
		require.NoError(t, err)

		_, err = client.CreateWorkflow(ctx, "Two", "User", "7", nil)

		require.ErrorIs(t, err, goclient.ErrDuplicateWorkflow)
		var duplicate *goclient.DuplicateWorkflowError
		require.ErrorAs(t, err, &duplicate)
		require.Equal(t, goclient.DuplicateWorkflowError{WorkflowType: "Two", HeroType: "User", HeroID: "7", PgError: duplicate.PgError}, *duplicate)
		var pgErr *pgconn.PgError
		require.ErrorAs(t, err, &pgErr)
		require.Equal(t, "23505", pgErr.Code)
		require.Equal(t, "workflows_one_ongoing_per_hero", pgErr.ConstraintName)

		_, err = client.CreateWorkflow(ctx, "Two", "User", "7", &goclient.CreateWorkflowOpts{AllowMultiple: true})
		require.NoError(t, err)
	})

	t.Run("ErrorsMatchTheirSentinels", func(t *testing.T) {
		t.Parallel()
		ctx, _, client, _ := setup(t)
		id, err := client.CreateWorkflow(ctx, "Two", "User", "1", nil)
		require.NoError(t, err)
		_, err = client.CancelWorkflow(ctx, id)
		require.NoError(t, err)

		for _, c := range []struct {
			err  error
			want error
			code string
		}{
			{second(client.GetWorkflow(ctx, 404)), goclient.ErrNotFound, "P0002"},
			{second(client.ResumeWorkflow(ctx, id)), goclient.ErrIllegalTransition, "55000"},
			{second(client.CreateWorkflow(ctx, "Nope", "User", "1", nil)), goclient.ErrUnknownWorkflowType, "WF001"},
			{second(client.CreateWorkflow(ctx, "Two", "User", "", nil)), goclient.ErrInvalidArgument, "22023"},
			{second(client.ListWorkflows(ctx, nil, 100000)), goclient.ErrInvalidArgument, "22023"},
			{second(client.ListWorkflows(ctx, &goclient.WorkflowFilter{State: "bogus"}, 0)), goclient.ErrInvalidArgument, "22023"},
			{second(client.CountWorkflows(ctx, &goclient.WorkflowFilter{State: "bogus"})), goclient.ErrInvalidArgument, "22023"},
			{second(client.CountWorkflows(ctx, &goclient.WorkflowFilter{HeroID: strings.Repeat("h", 1025)})), goclient.ErrInvalidArgument, "22001"},
			{second(client.CreateWorkflow(ctx, "Two", "User", strings.Repeat("h", 96*1024), nil)), goclient.ErrInvalidArgument, "22001"},
		} {
			require.ErrorIs(t, c.err, c.want)
			var pgErr *pgconn.PgError
			require.ErrorAs(t, c.err, &pgErr)
			require.Equal(t, c.code, pgErr.Code)
			require.Contains(t, c.err.Error(), "geneva: ")
		}
	})

	t.Run("HousekeepZeroRetentionMeansZero", func(t *testing.T) {
		t.Parallel()
		ctx, pool, client, _ := setup(t)
		id, err := client.CreateWorkflow(ctx, "Two", "User", "1", nil)
		require.NoError(t, err)
		_, err = client.CancelWorkflow(ctx, id)
		require.NoError(t, err)

		// not given: the setting, 30 days, keeps it; so does a negative one
		for _, params := range []*goclient.HousekeepParams{nil, {}, {Retention: new(-time.Second)}} {
			result, err := client.Housekeep(ctx, params)
			require.NoError(t, err)
			require.Zero(t, result.WorkflowsCleanedUp)
		}

		// zero moves it into history at once (whatever move_after), and
		// drops it with its day's partition once that day has ended
		result, err := client.Housekeep(ctx, &goclient.HousekeepParams{Retention: new(time.Duration(0))})
		require.NoError(t, err)
		require.Equal(t, 1, result.WorkflowsMoved)
		require.Zero(t, result.WorkflowsCleanedUp)
		result = housekeepTomorrow(t, pool, &goclient.HousekeepParams{Retention: new(time.Duration(0))})
		require.Equal(t, 1, result.WorkflowsCleanedUp)
		require.Equal(t, 1, result.PartitionsDropped)
		_, err = client.GetWorkflow(ctx, id)
		require.ErrorIs(t, err, goclient.ErrNotFound)
	})

	t.Run("OperatesAndReads", func(t *testing.T) {
		t.Parallel()
		ctx, _, client, _ := setup(t)
		id, err := client.CreateWorkflow(ctx, "Two", "User", "1", nil)
		require.NoError(t, err)

		paused, err := client.PauseWorkflow(ctx, id)
		require.NoError(t, err)
		require.Equal(t, goclient.StatePaused, paused.State)
		require.NotNil(t, paused.PausedAt)
		ready, err := client.SkipStep(ctx, id)
		require.NoError(t, err)
		require.Equal(t, "b", *ready.NextStepName)
		now, err := client.ScheduleStep(ctx, id, "")
		require.NoError(t, err)
		require.Equal(t, "b", *now.NextStepName)

		history, err := client.StepHistory(ctx, id)
		require.NoError(t, err)
		require.Len(t, history, 3)
		require.Equal(t, goclient.OutcomeSkippedExternally, *history[0].Outcome)
		require.Equal(t, goclient.OutcomeCanceledExternally, *history[1].Outcome)
		require.Equal(t, goclient.ExecutionScheduled, history[2].State)
		require.WithinDuration(t, time.Now(), history[2].ScheduledFor, time.Minute, "run now")
		execution, err := client.GetStepExecution(ctx, history[2].ID)
		require.NoError(t, err)
		require.Equal(t, history[2], execution)

		for i := 2; i <= 5; i++ {
			_, err := client.CreateWorkflow(ctx, "Two", "User", string(rune('0'+i)), nil)
			require.NoError(t, err)
		}
		page, err := client.ListWorkflows(ctx, nil, 2)
		require.NoError(t, err)
		require.Len(t, page, 2)
		next, err := client.ListWorkflows(ctx, &goclient.WorkflowFilter{BeforeID: page[1].ID}, 2)
		require.NoError(t, err)
		require.Less(t, next[0].ID, page[1].ID)
		hero, err := client.ListWorkflows(ctx, &goclient.WorkflowFilter{HeroType: "User", HeroID: "1"}, 0)
		require.NoError(t, err)
		require.Len(t, hero, 1)
		require.Equal(t, id, hero[0].ID)

		counts, err := client.WorkflowCounts(ctx)
		require.NoError(t, err)
		require.Equal(t, []*goclient.WorkflowCount{{WorkflowType: "Two", State: "ready", Workflows: 5}}, counts)
	})
}

func second[T any](_ T, err error) error { return err }

func TestViews(t *testing.T) {
	t.Parallel()

	t.Run("ReadsEveryView", func(t *testing.T) {
		t.Parallel()
		ctx, pool, client, worker := setup(t)
		id, err := client.CreateWorkflow(ctx, "Two", "User", "1", nil)
		require.NoError(t, err)
		history, err := client.StepHistory(ctx, id)
		require.NoError(t, err)
		started, err := worker.StartStep(ctx, history[0].ID, protocol.PreconditionNone)
		require.NoError(t, err)
		_, err = worker.FailStep(ctx, started.ExecutionID, &protocol.Failure{Classes: []string{"Boom"}, Message: "boom"})
		require.NoError(t, err)
		other, err := client.CreateWorkflow(ctx, "Two", "User", "2", nil)
		require.NoError(t, err)
		_, err = pool.Exec(ctx, "update geneva.step_executions set scheduled_for = now() - interval '1 hour' where workflow_id = $1", other)
		require.NoError(t, err)

		timeline, err := client.Timeline(ctx, id)
		require.NoError(t, err)
		require.Len(t, timeline, 1)
		require.Equal(t, goclient.OutcomePausedByException, *timeline[0].Outcome)
		require.NotNil(t, timeline[0].QueueLag)
		require.NotNil(t, timeline[0].RunTime)

		paused, err := client.PausedWorkflows(ctx, nil)
		require.NoError(t, err)
		require.Len(t, paused, 1)
		require.Equal(t, "Boom", *paused[0].LastErrorClass)
		none, err := client.PausedWorkflows(ctx, &goclient.PausedWorkflowsParams{WorkflowType: "Nope"})
		require.NoError(t, err)
		require.Empty(t, none)

		stuck, err := client.StuckExecutions(ctx, nil)
		require.NoError(t, err)
		require.Len(t, stuck, 1)
		require.Equal(t, other, stuck[0].WorkflowID)
		require.NotNil(t, stuck[0].JobID, "its job still waits in River, a queue an hour behind")
		require.Greater(t, *stuck[0].OverdueBy, 59*time.Minute)

		stats, err := client.StepStats(ctx, nil)
		require.NoError(t, err)
		require.Len(t, stats, 1)
		require.Equal(t, map[goclient.Outcome]int64{goclient.OutcomePausedByException: 1}, stats[0].Outcomes)

		// a step reattempted past the runaway threshold, flagged by a round
		_, err = client.SetHousekeepingSettings(ctx, &goclient.HousekeepingSettingsParams{RunawayRepeats: 1})
		require.NoError(t, err)
		poll, err := client.CreateWorkflow(ctx, "Two", "User", "3", nil)
		require.NoError(t, err)
		history, err = client.StepHistory(ctx, poll)
		require.NoError(t, err)
		started, err = worker.StartStep(ctx, history[0].ID, protocol.PreconditionNone)
		require.NoError(t, err)
		_, err = pool.Exec(ctx, "select geneva.complete_step($1, 'reattempt')", started.ExecutionID)
		require.NoError(t, err)
		round, err := client.Housekeep(ctx, nil)
		require.NoError(t, err)
		require.Equal(t, 1, round.RunawaysFlagged)
		runaways, err := client.RunawayWorkflows(ctx, 0)
		require.NoError(t, err)
		require.Len(t, runaways, 1)
		require.Equal(t, poll, runaways[0].WorkflowID)
		require.Equal(t, int64(2), runaways[0].Executions)
		require.Equal(t, 2, runaways[0].Repeats)
		require.Equal(t, history[0].StepName, runaways[0].StepName)
	})
}

// The views' parameters: what a dashboard asks for (package dashboard).
func TestViewParameters(t *testing.T) {
	t.Parallel()
	ctx, pool, client, worker := setup(t)
	fail := func(id int64, class string) {
		t.Helper()
		history, err := client.StepHistory(ctx, id)
		require.NoError(t, err)
		started, err := worker.StartStep(ctx, history[len(history)-1].ID, protocol.PreconditionNone)
		require.NoError(t, err)
		_, err = worker.FailStep(ctx, started.ExecutionID, &protocol.Failure{Classes: []string{class}, Message: "it broke"})
		require.NoError(t, err)
	}
	var ids []int64 // boom (paused), other (paused), ready, canceled: oldest first
	for i, hero := range []string{"boom", "other", "ready", "canceled"} {
		id, err := client.CreateWorkflow(ctx, "Two", "User", hero, nil)
		require.NoError(t, err)
		ids = append(ids, id)
		switch i {
		case 0:
			fail(id, "Boom")
		case 1:
			fail(id, "Other")
		case 3:
			_, err := client.CancelWorkflow(ctx, id)
			require.NoError(t, err)
		}
	}
	boom, other, ready, canceled := ids[0], ids[1], ids[2], ids[3]
	workflowIDs := func(list []*goclient.ListedWorkflow) []int64 {
		var got []int64
		for _, w := range list {
			got = append(got, w.ID)
		}
		return got
	}

	t.Run("ListWorkflows", func(t *testing.T) {
		all, err := client.ListWorkflows(ctx, nil, 0)
		require.NoError(t, err)
		require.Equal(t, []int64{canceled, ready, other, boom}, workflowIDs(all), "newest first")
		require.Equal(t, "Boom", *all[3].LastErrorClass)
		require.Equal(t, "it broke", *all[3].LastErrorMessage)
		require.Equal(t, "a", *all[3].LastErrorStep)
		require.NotNil(t, all[3].LastErrorAt)
		require.Nil(t, all[1].LastErrorClass)

		past, future := time.Now().Add(-time.Hour), time.Now().Add(time.Hour)
		for _, tt := range []struct {
			name   string
			filter goclient.WorkflowFilter
			limit  int
			want   []int64
		}{
			{"Ongoing", goclient.WorkflowFilter{State: goclient.StateOngoing}, 0, []int64{ready, other, boom}},
			{"State", goclient.WorkflowFilter{State: goclient.StateCanceled}, 0, []int64{canceled}},
			{"ErrorClass", goclient.WorkflowFilter{ErrorClass: "Boom"}, 0, []int64{boom}},
			{"ErrorClassAndState", goclient.WorkflowFilter{ErrorClass: "Boom", State: goclient.StateReady}, 0, nil},
			{"Step", goclient.WorkflowFilter{Step: "a", State: goclient.StateReady}, 0, []int64{ready}},
			{"Hero", goclient.WorkflowFilter{HeroType: "User", HeroID: "ready"}, 0, []int64{ready}},
			{"HeroID", goclient.WorkflowFilter{HeroID: "other"}, 0, []int64{other}},
			{"Type", goclient.WorkflowFilter{WorkflowType: "Nope"}, 0, nil},
			{"Created", goclient.WorkflowFilter{CreatedAfter: &past, CreatedBefore: &future}, 0, []int64{canceled, ready, other, boom}},
			{"CreatedAfter", goclient.WorkflowFilter{CreatedAfter: &future}, 0, nil},
			{"Page", goclient.WorkflowFilter{}, 2, []int64{canceled, ready}},
			{"NextPage", goclient.WorkflowFilter{BeforeID: ready}, 2, []int64{other, boom}},
			{"AfterID", goclient.WorkflowFilter{AfterID: other}, 0, []int64{canceled, ready}},
			{"UpTo", goclient.WorkflowFilter{UpToID: other}, 0, []int64{other, boom}},
		} {
			list, err := client.ListWorkflows(ctx, &tt.filter, tt.limit)
			require.NoError(t, err, tt.name)
			require.Equal(t, tt.want, workflowIDs(list), tt.name)
			count, err := client.CountWorkflows(ctx, &tt.filter)
			require.NoError(t, err, tt.name)
			if tt.limit == 0 {
				require.Equal(t, int64(len(tt.want)), count.Workflows, tt.name)
				if len(tt.want) > 0 {
					require.Equal(t, tt.want[0], count.NewestID, tt.name)
				} else {
					require.Zero(t, count.NewestID, tt.name)
				}
			}
		}
	})

	t.Run("PausedWorkflowsNewestFirst", func(t *testing.T) {
		paused, err := client.PausedWorkflows(ctx, nil)
		require.NoError(t, err)
		require.Len(t, paused, 2)
		require.Equal(t, []int64{other, boom}, []int64{paused[0].WorkflowID, paused[1].WorkflowID})
		paused, err = client.PausedWorkflows(ctx, &goclient.PausedWorkflowsParams{Limit: 1, WorkflowType: "Two"})
		require.NoError(t, err)
		require.Len(t, paused, 1)
		require.Equal(t, other, paused[0].WorkflowID)
		// those an error paused first (in a transaction rolled back: the
		// subtests after read the same workflows)
		tx, err := pool.Begin(ctx)
		require.NoError(t, err)
		defer tx.Rollback(ctx) //nolint:errcheck // (rolled back)
		txClient := goclient.New(tx)
		byOperator, err := txClient.CreateWorkflow(ctx, "Two", "User", "by-operator", nil)
		require.NoError(t, err)
		_, err = txClient.PauseWorkflow(ctx, byOperator)
		require.NoError(t, err)
		pausedIDs := func(params *goclient.PausedWorkflowsParams) []int64 {
			paused, err := txClient.PausedWorkflows(ctx, params)
			require.NoError(t, err)
			var got []int64
			for _, p := range paused {
				got = append(got, p.WorkflowID)
			}
			return got
		}
		require.Equal(t, []int64{byOperator, other, boom}, pausedIDs(nil))
		require.Equal(t, []int64{other, boom, byOperator}, pausedIDs(&goclient.PausedWorkflowsParams{ErrorsFirst: true}))
		require.Equal(t, []int64{other}, pausedIDs(&goclient.PausedWorkflowsParams{ErrorsFirst: true, Limit: 1}))
	})

	t.Run("StuckExecutionsWithThresholds", func(t *testing.T) {
		stuck, err := client.StuckExecutions(ctx, nil)
		require.NoError(t, err)
		require.Empty(t, stuck, "the ready workflow's step is due now, not 15 minutes overdue")
		n, err := client.CountStuckExecutions(ctx, nil)
		require.NoError(t, err)
		require.Zero(t, n)

		// with a threshold of nothing, the ready workflow's due step is stuck
		none := time.Duration(0)
		params := &goclient.StuckExecutionsParams{StuckScheduledAfter: &none}
		stuck, err = client.StuckExecutions(ctx, params)
		require.NoError(t, err)
		require.Len(t, stuck, 1)
		require.Equal(t, ready, stuck[0].WorkflowID)
		n, err = client.CountStuckExecutions(ctx, params)
		require.NoError(t, err)
		require.Equal(t, int64(1), n)
		stuck, err = client.StuckExecutions(ctx, &goclient.StuckExecutionsParams{StuckScheduledAfter: &none, Limit: 1})
		require.NoError(t, err)
		require.Len(t, stuck, 1)

		// in the caller's transaction, the thresholds end with a savepoint
		tx, err := pool.Begin(ctx)
		require.NoError(t, err)
		defer tx.Rollback(ctx) //nolint:errcheck
		stuck, err = goclient.New(tx).StuckExecutions(ctx, params)
		require.NoError(t, err)
		require.Len(t, stuck, 1)
		stuck, err = goclient.New(tx).StuckExecutions(ctx, nil)
		require.NoError(t, err)
		require.Empty(t, stuck, "the settings' thresholds again")
	})

	t.Run("StepStatsInTheDefinitionsOrder", func(t *testing.T) {
		require.NoError(t, worker.DefineWorkflow(ctx, "Backwards", []byte(`{"steps": [{"name": "zeta"}, {"name": "alpha"}]}`)))
		id, err := client.CreateWorkflow(ctx, "Backwards", "User", "1", nil)
		require.NoError(t, err)
		for range 2 {
			history, err := client.StepHistory(ctx, id)
			require.NoError(t, err)
			started, err := worker.StartStep(ctx, history[len(history)-1].ID, protocol.PreconditionNone)
			require.NoError(t, err)
			_, err = worker.CompleteStep(ctx, started.ExecutionID, protocol.SignalSuccess, 0, nil)
			require.NoError(t, err)
		}
		stats, err := client.StepStats(ctx, &goclient.StepStatsParams{WorkflowTypes: []string{"Backwards"}})
		require.NoError(t, err)
		require.Len(t, stats, 2)
		require.Equal(t, []string{"zeta", "alpha"}, []string{stats[0].StepName, stats[1].StepName})
		stats, err = client.StepStats(ctx, nil)
		require.NoError(t, err)
		require.Len(t, stats, 3, "Backwards' two, and Two's a")
		stats, err = client.StepStats(ctx, &goclient.StepStatsParams{WorkflowTypes: []string{}})
		require.NoError(t, err)
		require.Empty(t, stats)
	})
}

func TestHeroes(t *testing.T) {
	t.Parallel()

	t.Run("TrackHero", func(t *testing.T) {
		t.Parallel()
		ctx, pool, client, _ := setup(t)
		_, err := pool.Exec(ctx, "create table accounts (account_id text primary key)")
		require.NoError(t, err)
		_, err = pool.Exec(ctx, "insert into accounts values ('1'), ('2')")
		require.NoError(t, err)

		// the operator needs the TRIGGER privilege on the table
		var pgErr *pgconn.PgError
		require.ErrorAs(t, client.TrackHero(ctx, "accounts", "Account", "account_id"), &pgErr)
		require.Equal(t, "42501", pgErr.Code)
		_, err = pool.Exec(ctx, "grant trigger on accounts to "+pgx.Identifier{string(dbtest.Operator)}.Sanitize())
		require.NoError(t, err)

		require.ErrorIs(t, client.TrackHero(ctx, "accounts", "Account", "id"), goclient.ErrInvalidArgument, "no such column")
		require.NoError(t, client.TrackHero(ctx, "accounts", "Account", "account_id"))
		first, err := client.CreateWorkflow(ctx, "Two", "Account", "1", nil)
		require.NoError(t, err)
		second, err := client.CreateWorkflow(ctx, "Two", "Account", "2", nil)
		require.NoError(t, err)

		_, err = pool.Exec(ctx, "delete from accounts where account_id = '1'")
		require.NoError(t, err)
		workflow, err := client.GetWorkflow(ctx, first)
		require.NoError(t, err)
		require.Equal(t, goclient.StateCanceled, workflow.State)

		require.NoError(t, client.UntrackHero(ctx, "accounts", "Account"))
		_, err = pool.Exec(ctx, "delete from accounts where account_id = '2'")
		require.NoError(t, err)
		workflow, err = client.GetWorkflow(ctx, second)
		require.NoError(t, err)
		require.Equal(t, goclient.StateReady, workflow.State, "no longer tracked")
	})
}

func TestHousekeepIfDue(t *testing.T) {
	t.Parallel()
	ctx, pool, client, _ := setup(t)

	result, err := client.HousekeepIfDue(ctx, 0)
	require.NoError(t, err)
	require.NotNil(t, result, "never ran: due")
	result, err = client.HousekeepIfDue(ctx, time.Hour)
	require.NoError(t, err)
	require.Nil(t, result, "ran just now")

	tx, err := pool.Begin(ctx)
	require.NoError(t, err)
	defer tx.Rollback(ctx) //nolint:errcheck
	// (with housekeep_if_due's permission: housekeeping_rounds_guard)
	_, err = tx.Exec(ctx, "select set_config('geneva.housekeeping_rounds', 'on', true)")
	require.NoError(t, err)
	_, err = tx.Exec(ctx, "update geneva.housekeeping_rounds set last_run_at = '-infinity'")
	require.NoError(t, err)
	result, err = goclient.New(tx).HousekeepIfDue(ctx, time.Hour)
	require.NoError(t, err)
	require.NotNil(t, result)

	_, err = client.HousekeepIfDue(ctx, -time.Second)
	require.ErrorIs(t, err, goclient.ErrInvalidArgument)
	require.NoError(t, tx.Rollback(ctx))

	// zero is the settings' round interval
	_, err = client.SetHousekeepingSettings(ctx, &goclient.HousekeepingSettingsParams{RoundInterval: new(time.Hour)})
	require.NoError(t, err)
	result, err = client.HousekeepIfDue(ctx, 0)
	require.NoError(t, err)
	require.Nil(t, result, "ran within the hour")
	_, err = client.SetHousekeepingSettings(ctx, &goclient.HousekeepingSettingsParams{RoundInterval: new(time.Duration(0))})
	require.NoError(t, err)
	result, err = client.HousekeepIfDue(ctx, 0)
	require.NoError(t, err)
	require.NotNil(t, result, "a zero setting is always due")
}

func TestHousekeepingSettings(t *testing.T) {
	t.Parallel()

	t.Run("DefaultsUntilSet", func(t *testing.T) {
		t.Parallel()
		ctx, _, client, _ := setup(t)
		settings, err := client.HousekeepingSettings(ctx)
		require.NoError(t, err)
		require.Equal(t, &goclient.HousekeepingSettings{
			Retention:            new(30 * 24 * time.Hour),
			StuckInProgressAfter: time.Hour,
			StuckScheduledAfter:  15 * time.Minute,
			RecoveryAction:       goclient.RecoveryReattempt,
			BatchSize:            1000,
			RoundInterval:        time.Minute,
			ActionRetention:      30 * 24 * time.Hour,
			ActionRetentionFloor: 30 * 24 * time.Hour,
			RunawayExecutions:    1000,
			RunawayRepeats:       100,
			PartitionInterval:    24 * time.Hour,
			MoveAfter:            time.Hour,
			Archive:              goclient.ArchiveDrop,
		}, settings)
	})

	t.Run("SetChangesOnlyWhatIsGiven", func(t *testing.T) {
		t.Parallel()
		ctx, _, client, _ := setup(t)
		settings, err := client.SetHousekeepingSettings(ctx, &goclient.HousekeepingSettingsParams{HousekeepParams: goclient.HousekeepParams{
			Retention: new(7 * 24 * time.Hour), RecoveryAction: goclient.RecoveryCancel,
		}})
		require.NoError(t, err)
		require.Equal(t, 7*24*time.Hour, *settings.Retention)
		require.Equal(t, time.Hour, settings.StuckInProgressAfter)
		require.Equal(t, goclient.RecoveryCancel, settings.RecoveryAction)
		require.Equal(t, 1000, settings.BatchSize)
		require.Equal(t, time.Minute, settings.RoundInterval)
		require.NotNil(t, settings.UpdatedAt)
		require.NotEmpty(t, *settings.UpdatedBy)

		// a negative retention keeps ended workflows forever; a zero
		// threshold is zero
		settings, err = client.SetHousekeepingSettings(ctx, &goclient.HousekeepingSettingsParams{
			HousekeepParams: goclient.HousekeepParams{
				Retention: new(-time.Second), StuckScheduledAfter: new(time.Duration(0)), BatchSize: 10,
			},
			RoundInterval: new(5 * time.Minute),
		})
		require.NoError(t, err)
		require.Nil(t, settings.Retention)
		require.Zero(t, settings.StuckScheduledAfter)
		require.Equal(t, 10, settings.BatchSize)
		require.Equal(t, 5*time.Minute, settings.RoundInterval)
		require.Equal(t, goclient.RecoveryCancel, settings.RecoveryAction)

		// the action log's retention, and its floor (raised: anyone who may)
		settings, err = client.SetHousekeepingSettings(ctx, &goclient.HousekeepingSettingsParams{
			ActionRetention: new(90 * 24 * time.Hour), ActionRetentionFloor: new(60 * 24 * time.Hour),
		})
		require.NoError(t, err)
		require.Equal(t, 90*24*time.Hour, settings.ActionRetention)
		require.Equal(t, 60*24*time.Hour, settings.ActionRetentionFloor)
		require.Equal(t, 10, settings.BatchSize)

		// the runaway thresholds
		settings, err = client.SetHousekeepingSettings(ctx, &goclient.HousekeepingSettingsParams{RunawayRepeats: 20})
		require.NoError(t, err)
		require.Equal(t, 1000, settings.RunawayExecutions)
		require.Equal(t, 20, settings.RunawayRepeats)

		read, err := client.HousekeepingSettings(ctx)
		require.NoError(t, err)
		require.Equal(t, settings, read)

		for _, params := range []*goclient.HousekeepingSettingsParams{
			{HousekeepParams: goclient.HousekeepParams{RecoveryAction: "shrug"}},
			{HousekeepParams: goclient.HousekeepParams{BatchSize: -1}},
			{HousekeepParams: goclient.HousekeepParams{StuckInProgressAfter: new(-time.Minute)}},
			{RoundInterval: new(-time.Minute)},
			{ActionRetention: new(24 * time.Hour)}, // below the floor
			{RunawayExecutions: -1},
		} {
			_, err = client.SetHousekeepingSettings(ctx, params)
			require.ErrorIs(t, err, goclient.ErrInvalidArgument)
		}
	})

	t.Run("LongerThanADuration", func(t *testing.T) {
		t.Parallel()
		ctx, pool, client, _ := setup(t)
		// (SQL takes up to 1000 years, "never"; pgx would wrap them round
		// to negative durations, and a negative Retention means forever)
		_, err := pool.Exec(ctx, `select geneva.set_housekeeping_settings(p_retention => interval '1000 years',
			p_stuck_in_progress_after => interval '500 years', p_stuck_scheduled_after => interval '300 years',
			p_round_interval => interval '1000 years')`)
		require.NoError(t, err)
		longest := 292 * 12 * 30 * 24 * time.Hour
		settings, err := client.HousekeepingSettings(ctx)
		require.NoError(t, err)
		require.Equal(t, longest, *settings.Retention)
		require.Equal(t, longest, settings.StuckInProgressAfter)
		require.Equal(t, longest, settings.StuckScheduledAfter)
		require.Equal(t, longest, settings.RoundInterval)
	})

	t.Run("InTheCallersTransaction", func(t *testing.T) {
		t.Parallel()
		ctx, pool, client, _ := setup(t)
		tx, err := pool.Begin(ctx)
		require.NoError(t, err)
		_, err = goclient.New(tx).SetHousekeepingSettings(ctx, &goclient.HousekeepingSettingsParams{
			HousekeepParams: goclient.HousekeepParams{BatchSize: 5},
		})
		require.NoError(t, err)
		inside, err := goclient.New(tx).HousekeepingSettings(ctx)
		require.NoError(t, err)
		require.Equal(t, 5, inside.BatchSize)
		require.NoError(t, tx.Rollback(ctx))

		settings, err := client.HousekeepingSettings(ctx)
		require.NoError(t, err)
		require.Equal(t, 1000, settings.BatchSize, "rolled back with the caller's transaction")
	})

	t.Run("HousekeepTakesTheSettingsForWhatIsNotGiven", func(t *testing.T) {
		t.Parallel()
		ctx, pool, client, _ := setup(t)
		id, err := client.CreateWorkflow(ctx, "Two", "User", "1", nil)
		require.NoError(t, err)
		_, err = client.CancelWorkflow(ctx, id)
		require.NoError(t, err)

		_, err = client.SetHousekeepingSettings(ctx, &goclient.HousekeepingSettingsParams{
			HousekeepParams: goclient.HousekeepParams{Retention: new(time.Duration(0))},
		})
		require.NoError(t, err)
		// a negative retention deletes nothing this round, whatever the setting
		result, err := client.Housekeep(ctx, &goclient.HousekeepParams{Retention: new(-time.Second)})
		require.NoError(t, err)
		require.Zero(t, result.WorkflowsCleanedUp)

		result, err = client.Housekeep(ctx, nil)
		require.NoError(t, err)
		require.Equal(t, 1, result.WorkflowsMoved, "the setting, zero, moves it into history at once")
		result = housekeepTomorrow(t, pool, nil)
		require.Equal(t, 1, result.WorkflowsCleanedUp, "and drops its day once the day has ended")
	})

	t.Run("WorkersMayReadNotSet", func(t *testing.T) {
		t.Parallel()
		ctx := context.Background()
		conf := dbtest.NewConfig(t)
		worker := goclient.New(dbtest.NewPoolAs(t, conf, dbtest.Worker))
		_, err := worker.HousekeepingSettings(ctx)
		require.NoError(t, err)
		_, err = worker.SetHousekeepingSettings(ctx, &goclient.HousekeepingSettingsParams{RoundInterval: new(time.Hour)})
		var pgErr *pgconn.PgError
		require.ErrorAs(t, err, &pgErr)
		require.Equal(t, "42501", pgErr.Code)
		_, err = worker.Housekeep(ctx, nil)
		require.ErrorAs(t, err, &pgErr)
		require.Equal(t, "42501", pgErr.Code)
		_, err = worker.HousekeepIfDue(ctx, 0)
		require.NoError(t, err)
	})
}

// DefinitionSteps reads a step's offset from the workflow's start.
func TestDefinitionStepsAfter(t *testing.T) {
	t.Parallel()
	ctx, pool, client, _ := setup(t)
	_, err := pool.Exec(ctx, `select geneva.define_workflow('Trial', '{"steps": [{"name": "welcome"}, {"name": "remind", "after": "15 days"}]}')`)
	require.NoError(t, err)
	steps, err := client.DefinitionSteps(ctx, "Trial")
	require.NoError(t, err)
	require.Len(t, steps, 2)
	require.Nil(t, steps[0].After)
	require.Equal(t, 15*24*time.Hour, *steps[1].After)
}
