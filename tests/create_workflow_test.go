package tests

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/internal/dbtest"
)

func TestCreateWorkflow(t *testing.T) {
	t.Parallel()

	t.Run("AllowMultipleLetsAHeroHaveSeveral", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.defineThreeSteps(t)

		var first, second int64
		require.NoError(t, b.conn.QueryRow(b.ctx, "select geneva.create_workflow('ThreeSteps', 'User', '1', true)").Scan(&first))
		require.NoError(t, b.conn.QueryRow(b.ctx, "select geneva.create_workflow('ThreeSteps', 'User', '1', true)").Scan(&second))
		require.NotEqual(t, first, second)
		// and a workflow without allow_multiple still fits beside them
		b.create(t, "ThreeSteps", "1")
	})

	t.Run("FinishesAtOnceWithoutSteps", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.define(t, "Empty", `{"steps": []}`)

		id := b.create(t, "Empty", "1")

		wf := b.workflow(t, id)
		require.Equal(t, "finished", wf.State)
		require.Nil(t, wf.NextStepName)
		require.Equal(t, t0, deref(wf.FinishedAt))
		require.Equal(t, t0, deref(wf.TransitionedAt))
		require.Empty(t, b.executions(t, id))
		// a finished workflow frees the hero's slot
		b.create(t, "Empty", "1")
	})

	t.Run("FreesTheSlotWhenCanceled", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.defineThreeSteps(t)

		id := b.create(t, "ThreeSteps", "1")
		b.call(t, "cancel_workflow", id)
		b.create(t, "ThreeSteps", "1")
	})

	t.Run("InsertsAvailableRiverJobWithQueueAndPriority", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.define(t, "Billing", `{"steps": [{"name": "charge"}], "queue": "billing", "priority": 3}`)

		id := b.create(t, "Billing", "7")

		execution := b.active(t, id)
		require.NotNil(t, execution.JobID)
		job := b.job(t, *execution.JobID)
		require.Equal(t, "available", job.State)
		require.Equal(t, "geneva_step", job.Kind)
		require.Equal(t, "billing", job.Queue)
		require.EqualValues(t, 3, job.Priority)
		require.Equal(t, map[string]any{
			"execution_id":  float64(execution.ID),
			"workflow_id":   float64(id),
			"workflow_type": "Billing",
			"hero_type":     "User",
			"hero_id":       "7",
			"step_name":     "charge",
		}, job.Args)
	})

	t.Run("NotifiesRiverOfTheInsert", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.define(t, "Billing", `{"steps": [{"name": "charge"}], "queue": "billing"}`)

		listener := dbtest.NewConn(t, b.conf)
		_, err := listener.Exec(b.ctx, `listen "public.river_insert"`)
		require.NoError(t, err)

		b.create(t, "Billing", "7")

		ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
		defer cancel()
		notification, err := listener.WaitForNotification(ctx)
		require.NoError(t, err)
		require.Equal(t, "public.river_insert", notification.Channel)
		require.JSONEq(t, `{"queue": "billing"}`, notification.Payload)
	})

	t.Run("NotifiesNothingUntilCommit", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.defineThreeSteps(t)

		listener := dbtest.NewConn(t, b.conf)
		_, err := listener.Exec(b.ctx, `listen "public.river_insert"`)
		require.NoError(t, err)

		tx, err := b.conn.Begin(b.ctx)
		require.NoError(t, err)
		_, err = tx.Exec(b.ctx, "select geneva.create_workflow('ThreeSteps', 'User', '1')")
		require.NoError(t, err)
		require.NoError(t, tx.Rollback(b.ctx))

		ctx, cancel := context.WithTimeout(b.ctx, 200*time.Millisecond)
		defer cancel()
		_, err = listener.WaitForNotification(ctx)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		var workflows, jobs int
		require.NoError(t, b.conn.QueryRow(b.ctx, "select count(*) from geneva.workflows").Scan(&workflows))
		require.NoError(t, b.conn.QueryRow(b.ctx, "select count(*) from public.river_job").Scan(&jobs))
		require.Zero(t, workflows)
		require.Zero(t, jobs)
	})

	t.Run("RefusesSecondOngoingWorkflowForHero", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.defineThreeSteps(t)
		id := b.create(t, "ThreeSteps", "1")
		b.call(t, "pause_workflow", id) // a paused workflow keeps its slot

		_, err := b.tryCreate("ThreeSteps", "1")

		pgErr := requireCode(t, err, "23505")
		require.Equal(t, "workflows_one_ongoing_per_hero", pgErr.ConstraintName)
		require.Contains(t, pgErr.Message, "ThreeSteps")
		require.Contains(t, pgErr.Message, "User 1")
		// another hero, or another type for the same hero, is fine
		b.create(t, "ThreeSteps", "2")
		b.define(t, "Other", `{"steps": [{"name": "x"}]}`)
		b.create(t, "Other", "1")
	})

	t.Run("RefusesDuplicateUnderRepeatableRead", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.defineThreeSteps(t)
		rival := dbtest.NewConn(t, b.conf)

		tx, err := b.conn.BeginTx(b.ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead})
		require.NoError(t, err)
		defer tx.Rollback(b.ctx)
		_, err = tx.Exec(b.ctx, "select 1") // the snapshot is taken here
		require.NoError(t, err)
		// a rival commits the hero's workflow after the snapshot
		_, err = rival.Exec(b.ctx, "select geneva.create_workflow('ThreeSteps', 'User', '1')")
		require.NoError(t, err)

		_, err = tx.Exec(b.ctx, "select geneva.create_workflow('ThreeSteps', 'User', '1')")

		pgErr := requireCode(t, err, "23505")
		require.Equal(t, "workflows_one_ongoing_per_hero", pgErr.ConstraintName)
	})

	t.Run("RejectsEmptyHero", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.defineThreeSteps(t)

		_, err := b.conn.Exec(b.ctx, "select geneva.create_workflow('ThreeSteps', '', '1')")
		requireCode(t, err, "22023")
		_, err = b.conn.Exec(b.ctx, "select geneva.create_workflow('ThreeSteps', 'User', '')")
		requireCode(t, err, "22023")
	})

	t.Run("RejectsTooLongNamesBeforeWritingAnything", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.defineThreeSteps(t)

		for _, c := range []struct {
			workflowType, heroType, heroID, argument string
		}{
			{"ThreeSteps", "User", strings.Repeat("h", 96*1024), "hero id"}, // was a raw 54000 from an index
			{"ThreeSteps", "User", strings.Repeat("h", 1025), "hero id"},
			{"ThreeSteps", strings.Repeat("U", 256), "1", "hero type"},
			{strings.Repeat("W", 256), "User", "1", "workflow type"},
		} {
			_, err := b.conn.Exec(b.ctx, "select geneva.create_workflow($1, $2, $3)", c.workflowType, c.heroType, c.heroID)
			pgErr := requireCode(t, err, "22001")
			require.Contains(t, pgErr.Message, c.argument)
		}

		var workflows, jobs int
		require.NoError(t, b.conn.QueryRow(b.ctx, `select (select count(*) from geneva.workflows),
			(select count(*) from public.river_job)`).Scan(&workflows, &jobs))
		require.Zero(t, workflows)
		require.Zero(t, jobs)
		// the limits themselves are accepted
		b.create(t, "ThreeSteps", strings.Repeat("é", 512)) // 1024 bytes
	})

	t.Run("RejectsNulls", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.defineThreeSteps(t)

		for _, sql := range []string{
			"select geneva.create_workflow(null, 'User', '1')",
			"select geneva.create_workflow('ThreeSteps', null, '1')",
			"select geneva.create_workflow('ThreeSteps', 'User', null)",
			"select geneva.create_workflow('ThreeSteps', 'User', '1', null)",
		} {
			_, err := b.conn.Exec(b.ctx, sql)
			requireCode(t, err, "22004")
		}
	})

	t.Run("RejectsUnknownType", func(t *testing.T) {
		t.Parallel()
		b := setup(t)

		_, err := b.tryCreate("Nope", "1")

		requireCode(t, err, "WF001")
	})

	t.Run("SchedulesFirstStepAfterItsWait", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.define(t, "Later", `{"steps": [{"name": "first", "wait": "2 hours"}, {"name": "second"}]}`)

		id := b.create(t, "Later", "1")

		wf := b.workflow(t, id)
		require.Equal(t, "ready", wf.State)
		require.Equal(t, "first", deref(wf.NextStepName))
		require.Nil(t, wf.CurrentStepName)
		execution := b.active(t, id)
		require.Equal(t, "first", execution.StepName)
		require.Equal(t, "scheduled", execution.State)
		require.Equal(t, t0.Add(hours(2)), execution.ScheduledFor)
		// River runs on the real clock: the job is due after the same delay
		job := b.job(t, *execution.JobID)
		require.Equal(t, "scheduled", job.State)
		require.WithinDuration(t, b.dbNow(t).Add(hours(2)), job.ScheduledAt, time.Minute)
	})

	t.Run("SchedulesFirstStepNow", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineThreeSteps(t)

		id := b.create(t, "ThreeSteps", "1")

		wf := b.workflow(t, id)
		require.Equal(t, "ThreeSteps", wf.WorkflowType)
		require.Equal(t, "ready", wf.State)
		require.Equal(t, "a", deref(wf.NextStepName))
		require.Nil(t, wf.StartedAt)
		executions := b.executions(t, id)
		require.Len(t, executions, 1)
		require.Equal(t, "a", executions[0].StepName)
		require.Equal(t, "scheduled", executions[0].State)
		require.Nil(t, executions[0].Outcome)
		require.Equal(t, t0, executions[0].ScheduledFor)
		require.Equal(t, "available", b.job(t, *executions[0].JobID).State)
	})
}

func TestCreateWorkflowGroup(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.defineThreeSteps(t)
	var id int64
	require.NoError(t, b.conn.QueryRow(b.ctx,
		"select geneva.create_workflow('ThreeSteps', 'User', '1', p_group => 'acme')").Scan(&id))
	var group *string
	require.NoError(t, b.conn.QueryRow(b.ctx, "select group_name from geneva.workflows where id = $1", id).Scan(&group))
	require.Equal(t, "acme", deref(group))
	require.NoError(t, b.conn.QueryRow(b.ctx, "select group_name from geneva.workflows where id = $1",
		b.create(t, "ThreeSteps", "2")).Scan(&group))
	require.Nil(t, group, "none by default")

	for statement, code := range map[string]string{
		"select geneva.create_workflow('ThreeSteps', 'User', '3', p_group => '')":               "22023",
		"select geneva.create_workflow('ThreeSteps', 'User', '3', p_group => repeat('g', 256))": "22001",
	} {
		_, err := b.conn.Exec(b.ctx, statement)
		requireCode(t, err, code)
	}
	var n int
	require.NoError(t, b.conn.QueryRow(b.ctx, "select count(*) from geneva.workflows where hero_id = '3'").Scan(&n))
	require.Zero(t, n)
}

// TestCreateWorkflowGroupIsTheApplications (docs/security.md, by design):
// the group is what the application says. Geneva checks no ownership of it,
// so an application's workflow for any hero can be put in another tenant's
// group, and then waits for that group's slots.
func TestCreateWorkflowGroupIsTheApplications(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.setNow(t, t0)
	b.define(t, "TenantSync", `{"concurrency": {"by": "group", "limit": 1}, "steps": [{"name": "sync"}]}`)
	app := dbtest.NewConnAs(t, b.conf, dbtest.App)
	create := func(heroType, heroID, group string) int64 {
		t.Helper()
		var id int64
		require.NoError(t, app.QueryRow(b.ctx, "select geneva.create_workflow('TenantSync', $1, $2, p_group => $3)",
			heroType, heroID, group).Scan(&id))
		return id
	}
	acme := create("Account", "acme-1", "acme")
	require.Equal(t, "acme", deref(b.run(t, acme).Group))

	// globex's account, put in acme's group by the application
	globex := create("Account", "globex-1", "acme")
	var group *string
	require.NoError(t, b.conn.QueryRow(b.ctx, "select group_name from geneva.workflows where id = $1", globex).Scan(&group))
	require.Equal(t, "acme", deref(group))
	_, ok := b.startStep(t, b.active(t, globex).ID, nil)
	require.False(t, ok, "it waits for acme's slot")
	require.NotNil(t, b.limitState(t, b.active(t, globex).ID).LimitWaitKey)

	// its own group would have run it
	other := create("Account", "globex-2", "globex")
	require.Equal(t, "globex", deref(b.run(t, other).Group))
}

func TestCreateWorkflowGroupReachesTheWorker(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.defineThreeSteps(t)
	var id int64
	require.NoError(t, b.conn.QueryRow(b.ctx,
		"select geneva.create_workflow('ThreeSteps', 'User', '1', p_group => 'acme')").Scan(&id))
	require.Equal(t, "acme", deref(b.run(t, id).Group), "start_step hands the group to the worker")
	require.Nil(t, b.run(t, b.create(t, "ThreeSteps", "2")).Group)
}
