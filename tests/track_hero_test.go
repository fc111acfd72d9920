package tests

import (
	"time"

	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// heroExec runs a statement on the bundle's connection.
func (b *testBundle) heroExec(t *testing.T, sql string, args ...any) {
	t.Helper()
	_, err := b.conn.Exec(b.ctx, sql, args...)
	require.NoError(t, err)
}

// heroCreate creates a workflow for a hero of any type.
func (b *testBundle) heroCreate(t *testing.T, workflowType, heroType, heroID string) int64 {
	t.Helper()
	var id int64
	require.NoError(t, b.conn.QueryRow(b.ctx, "select geneva.create_workflow($1, $2, $3)",
		workflowType, heroType, heroID).Scan(&id))
	return id
}

// heroTrack calls geneva.track_hero with the default id column.
func (b *testBundle) heroTrack(t *testing.T, table, heroType string) {
	t.Helper()
	b.heroExec(t, "select geneva.track_hero($1, $2)", table, heroType)
}

// heroTriggers lists the names of the user triggers on a table.
func (b *testBundle) heroTriggers(t *testing.T, table string) []string {
	t.Helper()
	var names []string
	require.NoError(t, b.conn.QueryRow(b.ctx, `
		select coalesce(array_agg(tgname::text order by tgname::text collate "C"), '{}')
		from pg_trigger where tgrelid = $1::regclass and not tgisinternal`, table).Scan(&names))
	return names
}

// heroUsers creates the table users with the ids 1..n and tracks it as User.
func (b *testBundle) heroUsers(t *testing.T, n int) {
	t.Helper()
	b.heroExec(t, "create table users (id bigint primary key)")
	b.heroExec(t, "insert into users select generate_series(1, $1::int)", n)
	b.heroTrack(t, "users", "User")
}

// heroScene is the cast of most subtests: workflows of ThreeSteps for User 1
// (ready), 2 (performing) and 3 (paused), and one for Admin 1.
type heroScene struct {
	ready, performing, paused, admin int64
	running                          startedStep
}

func (b *testBundle) heroSetScene(t *testing.T) heroScene {
	t.Helper()
	b.defineThreeSteps(t)
	b.heroUsers(t, 3)
	var s heroScene
	s.ready = b.create(t, "ThreeSteps", "1")
	s.performing = b.create(t, "ThreeSteps", "2")
	s.running = b.run(t, s.performing)
	s.paused = b.create(t, "ThreeSteps", "3")
	b.call(t, "pause_workflow", s.paused)
	s.admin = b.heroCreate(t, "ThreeSteps", "Admin", "1")
	return s
}

// heroCanceledNow asserts that a ready or paused workflow was canceled with
// its active execution.
func (b *testBundle) heroCanceledNow(t *testing.T, id int64, execution executionRow) {
	t.Helper()
	require.Equal(t, "canceled", b.workflow(t, id).State)
	got := b.execution(t, execution.ID)
	require.Equal(t, "canceled", got.State)
	require.Equal(t, "canceled_hero_missing", deref(got.Outcome))
	b.noActive(t, id)
}

func TestTrackHero(t *testing.T) {
	t.Parallel()

	t.Run("CancelsPausedWorkflowWithoutKeptExecution", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.defineThreeSteps(t)
		b.heroUsers(t, 1)
		id := b.create(t, "ThreeSteps", "1")
		b.fail(t, b.run(t, id).ExecutionID, []string{"Boom"}, "boom") // pauses by default
		require.Equal(t, "paused", b.workflow(t, id).State)
		b.noActive(t, id)

		b.heroExec(t, "delete from users")

		require.Equal(t, "canceled", b.workflow(t, id).State)
		require.Len(t, b.executions(t, id), 1)
	})

	t.Run("CancelsWorkflowsOfDeletedHero", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		s := b.heroSetScene(t)
		readyExecution := b.active(t, s.ready)
		pausedExecution := b.active(t, s.paused)
		adminBefore := b.workflow(t, s.admin)

		for _, id := range []int{1, 2, 3} {
			b.heroExec(t, "delete from users where id = $1", id)
		}

		b.heroCanceledNow(t, s.ready, readyExecution)
		require.Equal(t, "cancelled", b.job(t, *readyExecution.JobID).State, "its River job is cancelled too")
		require.Equal(t, t0, deref(b.workflow(t, s.ready).CanceledAt))
		b.heroCanceledNow(t, s.paused, pausedExecution)
		require.Equal(t, adminBefore, b.workflow(t, s.admin), "another hero type with the same id")
	})

	t.Run("DeletingManyRowsInOneStatementCancelsAll", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.defineThreeSteps(t)
		const heroes = 50
		b.heroUsers(t, heroes)
		var ids []int64
		for i := 1; i <= heroes; i++ {
			ids = append(ids, b.create(t, "ThreeSteps", fmt.Sprint(i)))
		}
		b.run(t, ids[0])

		b.heroExec(t, "delete from users where id <= $1", heroes)

		var canceled, stamped int
		require.NoError(t, b.conn.QueryRow(b.ctx, `
			select count(*) filter (where state = 'canceled'),
			  count(*) filter (where state = 'performing' and hero_missing_at is not null)
			from geneva.workflows`).Scan(&canceled, &stamped))
		require.Equal(t, heroes-1, canceled, "all but the performing one")
		require.Equal(t, 1, stamped, "the performing one goes on to its step boundary")
		var executions int
		require.NoError(t, b.conn.QueryRow(b.ctx,
			"select count(*) from geneva.step_executions where outcome = 'canceled_hero_missing'").Scan(&executions))
		require.Equal(t, heroes-1, executions)
	})

	t.Run("IdColumnNamesTheHeroId", func(t *testing.T) {
		t.Parallel()

		t.Run("Text", func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			b.defineThreeSteps(t)
			b.heroExec(t, "create table accounts (id bigint generated always as identity primary key, code text unique)")
			b.heroExec(t, "insert into accounts (code) values ('acme'), ('globex')")
			b.heroExec(t, "select geneva.track_hero('accounts', 'Account', 'code')")
			acme := b.heroCreate(t, "ThreeSteps", "Account", "acme")
			globex := b.heroCreate(t, "ThreeSteps", "Account", "globex")
			byID := b.heroCreate(t, "ThreeSteps", "Account", "1") // acme's id, not its code

			b.heroExec(t, "delete from accounts where code = 'acme'")

			require.Equal(t, "canceled", b.workflow(t, acme).State)
			require.Equal(t, "ready", b.workflow(t, globex).State)
			require.Equal(t, "ready", b.workflow(t, byID).State)
		})

		t.Run("UUID", func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			b.defineThreeSteps(t)
			const hero = "6f1c2a4e-8d3b-4c5a-9e7f-0a1b2c3d4e5f"
			b.heroExec(t, "create table devices (serial int, uuid_col uuid primary key)")
			b.heroExec(t, "insert into devices values (1, $1)", hero)
			b.heroExec(t, "select geneva.track_hero('devices', 'Device', 'uuid_col')")
			id := b.heroCreate(t, "ThreeSteps", "Device", hero)

			b.heroExec(t, "delete from devices")

			require.Equal(t, "canceled", b.workflow(t, id).State)
		})
	})

	t.Run("LeavesEndedWorkflowsAlone", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.define(t, "One", `{"steps": [{"name": "only"}]}`)
		b.define(t, "Other", `{"steps": [{"name": "only"}]}`)
		b.heroUsers(t, 1)
		finished := b.create(t, "One", "1")
		b.complete(t, b.run(t, finished).ExecutionID, "success", nil)
		canceled := b.create(t, "Other", "1")
		b.call(t, "cancel_workflow", canceled)
		finishedBefore, canceledBefore := b.workflow(t, finished), b.workflow(t, canceled)
		finishedHistory, canceledHistory := b.executions(t, finished), b.executions(t, canceled)

		b.heroExec(t, "delete from users")

		require.Equal(t, finishedBefore, b.workflow(t, finished))
		require.Equal(t, canceledBefore, b.workflow(t, canceled))
		require.Equal(t, finishedHistory, b.executions(t, finished))
		require.Equal(t, canceledHistory, b.executions(t, canceled))
	})

	t.Run("LeavesWorkflowsThatMayProceedWithoutHero", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.defineThreeSteps(t)
		b.define(t, "Tolerant", `{"steps": [{"name": "a"}, {"name": "b"}], "may_proceed_without_hero": true}`)
		b.heroUsers(t, 1)
		strict := b.create(t, "ThreeSteps", "1")
		tolerant := b.create(t, "Tolerant", "1")
		before := b.active(t, tolerant)

		b.heroExec(t, "delete from users")

		require.Equal(t, "canceled", b.workflow(t, strict).State)
		require.Equal(t, "ready", b.workflow(t, tolerant).State)
		require.Equal(t, before, b.execution(t, before.ID))
	})

	t.Run("LongHeroTypesKeepTheirOwnTriggers", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.defineThreeSteps(t)
		// Two hero types of one table (say, single-table inheritance) whose
		// names share more than the 51 characters that fit in a trigger name
		// after "geneva_hero_".
		prefix := "Billing::Accounts::" + strings.Repeat("Enterprise", 4)
		customer, supplier := prefix+"::Customer", prefix+"::Supplier"
		b.heroExec(t, "create table accounts (id bigint primary key)")
		b.heroExec(t, "insert into accounts values (1), (2)")
		b.heroTrack(t, "accounts", customer)
		b.heroTrack(t, "accounts", supplier)
		customerWorkflow := b.heroCreate(t, "ThreeSteps", customer, "1")
		supplierWorkflow := b.heroCreate(t, "ThreeSteps", supplier, "2")

		b.heroExec(t, "delete from accounts")

		require.Equal(t, "canceled", b.workflow(t, supplierWorkflow).State)
		require.Equal(t, "canceled", b.workflow(t, customerWorkflow).State,
			"tracking the second type must not untrack the first")
	})

	t.Run("OddIdentifiersInjectNothing", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.defineThreeSteps(t)
		const (
			table    = `"We ""ird"" users"`
			heroType = `x'); drop table sentinel; --`
			quoted   = `O"Brien's; "type`
		)
		b.heroExec(t, "create table sentinel (id int)")
		b.heroExec(t, "create table "+table+" (id bigint primary key)")
		b.heroExec(t, "insert into "+table+" values (1), (2)")
		var relations, triggers int
		count := func() {
			require.NoError(t, b.conn.QueryRow(b.ctx, "select count(*) from pg_class").Scan(&relations))
			require.NoError(t, b.conn.QueryRow(b.ctx, "select count(*) from pg_trigger").Scan(&triggers))
		}
		count()
		relationsBefore, triggersBefore := relations, triggers

		b.heroTrack(t, table, heroType)
		b.heroTrack(t, table, quoted)

		count()
		require.Equal(t, relationsBefore, relations, "no relation was created or dropped")
		require.Equal(t, triggersBefore+2, triggers)
		var sentinel *string
		require.NoError(t, b.conn.QueryRow(b.ctx, "select to_regclass('public.sentinel')::text").Scan(&sentinel))
		require.Equal(t, "sentinel", deref(sentinel), "the sentinel table is still there")
		require.Equal(t, []string{"geneva_hero_" + quoted, "geneva_hero_" + heroType}, b.heroTriggers(t, table))

		hostile := b.heroCreate(t, "ThreeSteps", heroType, "1")
		odd := b.heroCreate(t, "ThreeSteps", quoted, "2")
		b.heroExec(t, "delete from "+table+" where id = 1")
		require.Equal(t, "canceled", b.workflow(t, hostile).State)
		require.Equal(t, "ready", b.workflow(t, odd).State)
		b.heroExec(t, "delete from "+table)
		require.Equal(t, "canceled", b.workflow(t, odd).State)

		b.heroExec(t, "select geneva.untrack_hero($1, $2)", table, heroType)
		require.Equal(t, []string{"geneva_hero_" + quoted}, b.heroTriggers(t, table))
		require.NoError(t, b.conn.QueryRow(b.ctx, "select to_regclass('public.sentinel')::text").Scan(&sentinel))
		require.Equal(t, "sentinel", deref(sentinel))
	})

	t.Run("PerformingWorkflowKeepsItsStepsResultThenCancelsAtTheNextStep", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		s := b.heroSetScene(t)

		b.heroExec(t, "delete from users where id = 2")

		// the running step is not canceled under it
		wf := b.workflow(t, s.performing)
		require.Equal(t, "performing", wf.State)
		require.Nil(t, wf.RequestedAction)
		require.Equal(t, "in_progress", b.execution(t, s.running.ExecutionID).State)
		var missingAt *time.Time
		require.NoError(t, b.conn.QueryRow(b.ctx,
			"select hero_missing_at from geneva.workflows where id = $1", s.performing).Scan(&missingAt))
		require.Equal(t, t0, deref(missingAt))

		// its own result is recorded, and the next step is scheduled
		got := b.complete(t, s.running.ExecutionID, "success", nil)
		require.Equal(t, "success", deref(got.Outcome))
		require.Equal(t, "ready", got.WorkflowState)
		next := b.active(t, s.performing)
		require.Equal(t, "b", next.StepName)
		require.NotNil(t, next.JobID, "scheduled with its job, not started inline")

		// which ends canceled_hero_missing when it would start (after its wait)
		b.setNow(t, t0.Add(hours(1)))
		_, ok := b.startStep(t, next.ID, nil)
		require.False(t, ok)
		require.Equal(t, "canceled", b.workflow(t, s.performing).State)
		ended := b.execution(t, next.ID)
		require.Equal(t, "canceled", ended.State)
		require.Equal(t, "canceled_hero_missing", deref(ended.Outcome))
		require.Nil(t, ended.StartedAt)
	})

	// quickSteps: steps without waits, whose successors a worker's
	// complete_and_continue would start in the same job; hero 1 performs
	// its first step.
	quickSteps := func(t *testing.T) (*testBundle, startedStep) {
		b := setup(t)
		b.define(t, "Quick", `{"steps": [{"name": "a"}, {"name": "b"}, {"name": "c"}]}`)
		b.heroUsers(t, 1)
		return b, b.run(t, b.create(t, "Quick", "1"))
	}

	t.Run("PerformingWorkflowContinuedInlineStillCancels", func(t *testing.T) {
		t.Parallel()
		b, running := quickSteps(t)
		s := heroScene{performing: running.WorkflowID, running: running}

		b.heroExec(t, "delete from users where id = 1")

		var state string
		var nextID *int64
		var nextStarted *time.Time
		require.NoError(t, b.conn.QueryRow(b.ctx,
			"select workflow_state, next_execution_id, next_started_at from geneva.complete_and_continue($1)",
			s.running.ExecutionID).Scan(&state, &nextID, &nextStarted))
		require.Equal(t, "ready", state, "the next step is not started in the same job")
		require.Nil(t, nextStarted)
		next := b.active(t, s.performing)
		_, ok := b.startStep(t, next.ID, nil)
		require.False(t, ok)
		require.Equal(t, "canceled_hero_missing", deref(b.execution(t, next.ID).Outcome))
		require.Equal(t, "canceled", b.workflow(t, s.performing).State)
	})

	t.Run("LastStepDeletingItsHeroFinishes", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		// the manual's User Erasure workflow: its last step destroys the hero
		b.define(t, "UserErasure", `{"steps": [{"name": "erase_personal_data"}, {"name": "destroy_user"}]}`)
		b.heroUsers(t, 1)
		id := b.create(t, "UserErasure", "1")
		b.complete(t, b.run(t, id).ExecutionID, "success", nil)
		last := b.run(t, id)
		require.Equal(t, "destroy_user", last.StepName)

		b.heroExec(t, "delete from users where id = 1") // the step's own work

		got := b.complete(t, last.ExecutionID, "success", nil)
		require.Equal(t, "success", deref(got.Outcome))
		require.Equal(t, "finished", got.WorkflowState)
		require.Equal(t, "finished", b.workflow(t, id).State)
		b.noActive(t, id)
	})

	t.Run("BatchedClaimsAndEndsSeeTheMissingHero", func(t *testing.T) {
		t.Parallel()
		b, running := quickSteps(t)
		s := heroScene{performing: running.WorkflowID, running: running}
		b.heroExec(t, "delete from users where id = 1")

		var outcome, state string
		require.NoError(t, b.conn.QueryRow(b.ctx, `
			select outcome, workflow_state
			from geneva.complete_steps(array[$1::bigint], array['success'], array[null::interval], array[null::bigint], array[true])`,
			s.running.ExecutionID).Scan(&outcome, &state))
		require.Equal(t, "success", outcome)
		require.Equal(t, "ready", state)
		next := b.active(t, s.performing)
		var started int
		require.NoError(t, b.conn.QueryRow(b.ctx,
			"select count(*) from geneva.start_steps(array[$1::bigint], array[null::text])", next.ID).Scan(&started))
		require.Zero(t, started)
		require.Equal(t, "canceled_hero_missing", deref(b.execution(t, next.ID).Outcome))
		require.Equal(t, "canceled", b.workflow(t, s.performing).State)
	})

	t.Run("RaisesForBadArguments", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.heroExec(t, "create table users (id bigint primary key, name text)")

		for _, c := range []struct {
			sql  string
			code string
		}{
			{"select geneva.track_hero('no_such_table', 'User')", "42P01"},
			{"select geneva.track_hero('users', 'User', 'uuid')", "22023"},
			{"select geneva.track_hero('users', 'User', 'ctid')", "22023"},
			{"select geneva.track_hero('users', '')", "22023"},
			{"select geneva.track_hero('users', repeat('U', 256))", "22001"},
			{"select geneva.track_hero(null, 'User')", "22004"},
			{"select geneva.track_hero('users', null)", "22004"},
			{"select geneva.track_hero('users', 'User', null)", "22004"},
		} {
			_, err := b.conn.Exec(b.ctx, c.sql)
			requireCode(t, err, c.code)
		}
		require.Empty(t, b.heroTriggers(t, "users"), "nothing was attached")
	})

	t.Run("RolledBackDeleteCancelsNothing", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		s := b.heroSetScene(t)
		ids := []int64{s.ready, s.performing, s.paused, s.admin}
		var workflows []workflowRow
		var histories [][]executionRow
		for _, id := range ids {
			workflows = append(workflows, b.workflow(t, id))
			histories = append(histories, b.executions(t, id))
		}

		tx, err := b.conn.Begin(b.ctx)
		require.NoError(t, err)
		_, err = tx.Exec(b.ctx, "delete from users where id in (1, 2, 3)")
		require.NoError(t, err)
		// within the transaction, the heroes' workflows are canceled (the
		// performing one at its step boundary)
		var readyState, pausedState, performingState string
		require.NoError(t, tx.QueryRow(b.ctx, `
			select (select state from geneva.workflows where id = $1),
			  (select state from geneva.workflows where id = $2),
			  (select state from geneva.workflows where id = $3)`,
			s.ready, s.paused, s.performing).Scan(&readyState, &pausedState, &performingState))
		require.Equal(t, "canceled", readyState)
		require.Equal(t, "canceled", pausedState)
		require.Equal(t, "performing", performingState)
		require.NoError(t, tx.Rollback(b.ctx))

		for i, id := range ids {
			require.Equal(t, workflows[i], b.workflow(t, id))
			require.Equal(t, histories[i], b.executions(t, id))
		}
		got := b.complete(t, s.running.ExecutionID, "success", nil)
		require.Equal(t, "ready", got.WorkflowState, "the running step goes on as if nothing happened")
	})

	t.Run("TrackingAgainReplacesTrigger", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.defineThreeSteps(t)
		b.heroExec(t, "create table accounts (id bigint primary key, code text unique)")
		b.heroExec(t, "insert into accounts values (1, 'acme'), (2, 'globex')")
		b.heroExec(t, "select geneva.track_hero('accounts', 'Account')")
		b.heroExec(t, "select geneva.track_hero('accounts', 'Account')")
		require.Equal(t, []string{"geneva_hero_Account"}, b.heroTriggers(t, "accounts"))
		b.heroExec(t, "select geneva.track_hero('accounts', 'Account', 'code')")
		require.Equal(t, []string{"geneva_hero_Account"}, b.heroTriggers(t, "accounts"))
		byCode := b.heroCreate(t, "ThreeSteps", "Account", "acme")
		byID := b.heroCreate(t, "ThreeSteps", "Account", "1")

		b.heroExec(t, "delete from accounts where id = 1")

		require.Equal(t, "canceled", b.workflow(t, byCode).State, "the trigger now reads the code")
		require.Equal(t, "ready", b.workflow(t, byID).State)
	})
}
