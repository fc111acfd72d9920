package tests

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// createMany calls geneva.create_workflows for ThreeSteps-like types with
// the User hero type and returns the ids.
func (b *testBundle) createMany(t *testing.T, workflowType string, heroIDs []string, groups, keys []*string) []int64 {
	t.Helper()
	ids, err := b.tryCreateMany(workflowType, heroIDs, groups, keys)
	require.NoError(t, err)
	return ids
}

func (b *testBundle) tryCreateMany(workflowType string, heroIDs []string, groups, keys []*string) ([]int64, error) {
	var ids []int64
	err := b.conn.QueryRow(b.ctx,
		"select geneva.create_workflows($1, 'User', $2, p_groups => $3, p_idempotency_keys => $4)",
		workflowType, heroIDs, groups, keys).Scan(&ids)
	return ids, err
}

// counts returns how many workflows, executions and River jobs there are.
func (b *testBundle) counts(t *testing.T) [3]int {
	t.Helper()
	var n [3]int
	require.NoError(t, b.conn.QueryRow(b.ctx, `select (select count(*) from geneva.workflows),
		(select count(*) from geneva.step_executions), (select count(*) from public.river_job)`).Scan(&n[0], &n[1], &n[2]))
	return n
}

func TestCreateWorkflows(t *testing.T) {
	t.Parallel()

	t.Run("CreatesEachHeroInOneCall", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineThreeSteps(t)

		ids := b.createMany(t, "ThreeSteps", []string{"1", "2", "3"}, []*string{ptr("acme"), nil, ptr("globex")}, nil)

		require.Len(t, ids, 3)
		require.Less(t, ids[0], ids[1], "ids in the list's order")
		require.Less(t, ids[1], ids[2])
		for _, id := range ids {
			wf := b.workflow(t, id)
			require.Equal(t, "ready", wf.State)
			require.Equal(t, "a", deref(wf.NextStepName))
			execution := b.active(t, id)
			require.Equal(t, "a", execution.StepName)
			require.Equal(t, "scheduled", execution.State)
			require.Equal(t, t0, execution.ScheduledFor)
			job := b.job(t, *execution.JobID)
			require.Equal(t, "available", job.State)
			require.Equal(t, float64(execution.ID), job.Args["execution_id"])
			require.Equal(t, float64(id), job.Args["workflow_id"])
		}
		var heroes []string
		var groups []*string
		require.NoError(t, b.conn.QueryRow(b.ctx,
			"select array_agg(hero_id order by id), array_agg(group_name order by id) from geneva.workflows").Scan(&heroes, &groups))
		require.Equal(t, []string{"1", "2", "3"}, heroes)
		require.Equal(t, []*string{ptr("acme"), nil, ptr("globex")}, groups)
		require.Equal(t, [3]int{3, 3, 3}, b.counts(t))
	})

	t.Run("SchedulesEachFirstStepAfterItsWait", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.define(t, "Later", `{"steps": [{"name": "first", "wait": "2 hours"}, {"name": "second"}]}`)

		for _, id := range b.createMany(t, "Later", []string{"1", "2"}, nil, nil) {
			execution := b.active(t, id)
			require.Equal(t, t0.Add(hours(2)), execution.ScheduledFor)
			require.Equal(t, "scheduled", b.job(t, *execution.JobID).State)
		}
	})

	// A list of one (create_workflow) schedules its first step row-wise, a
	// longer list set-wise (geneva._advance_many's move "first"): both
	// write the same execution and River job, whatever the first step is.
	t.Run("AListSchedulesAsOneDoes", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		for workflowType, definition := range map[string]string{
			"Plain":   `{"steps": [{"name": "a"}, {"name": "b"}]}`,
			"Later":   `{"queue": "slow", "priority": 3, "steps": [{"name": "a", "wait": "2 hours"}]}`,
			"Awaits":  `{"steps": [{"name": "a", "wait": "1 hour", "await": {"event": "go", "timeout": "48 hours"}}]}`,
			"Limited": `{"concurrency": {"by": "group", "limit": 1}, "steps": [{"name": "a"}]}`,
		} {
			b.define(t, workflowType, definition)
		}
		// (one transaction: River's jobs are timed by its now())
		tx, err := b.conn.Begin(b.ctx)
		require.NoError(t, err)
		defer func() { _ = tx.Rollback(b.ctx) }()
		type scheduled struct {
			StepName, State                       string
			ScheduledFor                          time.Time
			AwaitEvent                            *string
			AwaitFrom, AwaitUntil                 *time.Time
			LimitWaitKey                          *string
			JobState, JobKind, JobQueue           *string
			JobPriority                           *int16
			JobScheduledAt                        *time.Time
			JobStepName, JobWorkflowType, JobHero *string
		}
		read := func(id int64) scheduled {
			rows, err := tx.Query(b.ctx, `select e.step_name, e.state, e.scheduled_for, e.await_event, e.await_from,
				e.await_until, e.limit_wait_key, j.state::text, j.kind, j.queue, j.priority, j.scheduled_at,
				j.args ->> 'step_name', j.args ->> 'workflow_type', j.args ->> 'hero_type'
				from geneva.step_executions e left join public.river_job j on j.id = e.job_id
				where e.workflow_id = $1 and (j.id is null or (j.args ->> 'execution_id')::bigint = e.id
					and (j.args ->> 'workflow_id')::bigint = e.workflow_id)`, id)
			require.NoError(t, err)
			row, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByPos[scheduled])
			require.NoError(t, err)
			return row
		}
		for _, workflowType := range []string{"Plain", "Later", "Awaits", "Limited"} {
			var one int64
			require.NoError(t, tx.QueryRow(b.ctx, "select geneva.create_workflow($1, 'User', $1 || '-one', p_group => 'g')",
				workflowType).Scan(&one))
			var many []int64
			require.NoError(t, tx.QueryRow(b.ctx, `select geneva.create_workflows($1, 'User', array[$1 || '-a', $1 || '-b'],
				p_groups => array['g', 'g'])`, workflowType).Scan(&many))
			want := read(one)
			for _, id := range many {
				require.Equal(t, want, read(id), "%s: a list's first step as one's", workflowType)
			}
		}
	})

	// A hero skipped (p_skip_ongoing) takes no other's place: each created
	// workflow's first step waits behind its own group's key (or has its
	// job), as the one it is. Before, the keys were read by the list's
	// places, the skipped one's included, and the hero after it took the
	// skipped one's key.
	t.Run("ASkipLeavesEachItsOwnWaitKey", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.define(t, "Limited", `{"concurrency": {"by": "group", "limit": 1}, "steps": [{"name": "a"}]}`)
		// the workflow's active execution's wait key and job
		waits := func(id int64) (key *string, job *int64) {
			require.NoError(t, b.conn.QueryRow(b.ctx, `select limit_wait_key, job_id from geneva.step_executions
				where workflow_id = $1 and state in ('scheduled', 'in_progress')`, id).Scan(&key, &job))
			return key, job
		}
		var holder, waiter, ongoing int64
		require.NoError(t, b.conn.QueryRow(b.ctx, "select geneva.create_workflow('Limited', 'User', 'holder', p_group => 'full')").Scan(&holder))
		b.run(t, holder)
		require.NoError(t, b.conn.QueryRow(b.ctx, "select geneva.create_workflow('Limited', 'User', 'waiter', p_group => 'full')").Scan(&waiter))
		_, started := b.startStep(t, b.active(t, waiter).ID, nil)
		require.False(t, started)
		full, _ := waits(waiter)
		require.NotNil(t, full, "the key is full, and has a waiter")
		require.NoError(t, b.conn.QueryRow(b.ctx, "select geneva.create_workflow('Limited', 'User', 'ongoing', p_group => 'free')").Scan(&ongoing))

		var ids []*int64
		require.NoError(t, b.conn.QueryRow(b.ctx, `select geneva.create_workflows('Limited', 'User',
			array['a', 'ongoing', 'b', 'c'], p_groups => array['free', 'free', 'full', 'other'], p_skip_ongoing => true)`).Scan(&ids))
		require.Len(t, ids, 4)
		require.Nil(t, ids[1])
		for i, want := range []*string{nil, nil, full, nil} {
			if i == 1 {
				continue
			}
			key, job := waits(*ids[i])
			require.Equal(t, want, key, "hero %d's wait key", i)
			require.Equal(t, want == nil, job != nil, "hero %d has a job unless it waits", i)
		}
	})

	// A list of more than a hundred is inserted without ON CONFLICT first,
	// and again with it when that meets a duplicate: it skips, and refuses,
	// as a short list does.
	t.Run("ALongListSkipsAsAShortOneDoes", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.defineThreeSteps(t)
		ongoing := b.create(t, "ThreeSteps", "50")
		heroes := make([]string, 0, 151)
		for i := range 150 {
			heroes = append(heroes, strconv.Itoa(i))
		}
		heroes = append(heroes, "7")

		_, err := b.conn.Exec(b.ctx, "select geneva.create_workflows('ThreeSteps', 'User', $1)", heroes)
		pgErr := requireCode(t, err, "23505")
		require.Contains(t, pgErr.Message, "User 50 already has")

		var ids []*int64
		require.NoError(t, b.conn.QueryRow(b.ctx,
			"select geneva.create_workflows('ThreeSteps', 'User', $1, p_skip_ongoing => true)", heroes).Scan(&ids))
		require.Len(t, ids, 151)
		created := 0
		for i, id := range ids {
			if i == 50 || i == 150 {
				require.Nil(t, id, "hero %s", heroes[i])
				continue
			}
			require.NotNil(t, id, "hero %s", heroes[i])
			require.Equal(t, "ready", b.workflow(t, *id).State)
			created++
		}
		require.Equal(t, 149, created)
		require.Equal(t, "ready", b.workflow(t, ongoing).State)
	})

	t.Run("FinishesEachAtOnceWithoutSteps", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.define(t, "Empty", `{"steps": []}`)

		for _, id := range b.createMany(t, "Empty", []string{"1", "2"}, nil, nil) {
			wf := b.workflow(t, id)
			require.Equal(t, "finished", wf.State)
			require.Equal(t, t0, deref(wf.FinishedAt))
		}
		require.Equal(t, [3]int{2, 0, 0}, b.counts(t))
	})

	t.Run("AnEmptyListCreatesNothing", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.defineThreeSteps(t)

		require.Empty(t, b.createMany(t, "ThreeSteps", []string{}, nil, nil))
		require.Equal(t, [3]int{0, 0, 0}, b.counts(t))
	})

	// One hero with an ongoing workflow refuses the whole list: nothing is
	// created, and the message names the hero.
	t.Run("AllOrNoneWhenAHeroHasAnOngoingWorkflow", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.defineThreeSteps(t)
		b.create(t, "ThreeSteps", "2")
		before := b.counts(t)

		_, err := b.tryCreateMany("ThreeSteps", []string{"1", "2", "3"}, nil, nil)

		pgErr := requireCode(t, err, "23505")
		require.Equal(t, "workflows_one_ongoing_per_hero", pgErr.ConstraintName)
		require.Contains(t, pgErr.Message, "User 2")
		require.Contains(t, pgErr.Detail, "is ready")
		require.Equal(t, before, b.counts(t))
	})

	t.Run("AHeroTwiceInTheListIsRefusedUnlessAllowMultiple", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.defineThreeSteps(t)

		_, err := b.tryCreateMany("ThreeSteps", []string{"1", "2", "1"}, nil, nil)

		pgErr := requireCode(t, err, "23505")
		require.Contains(t, pgErr.Message, "User 1")
		require.Contains(t, pgErr.Detail, "more than once")
		require.Equal(t, [3]int{0, 0, 0}, b.counts(t))

		var ids []int64
		require.NoError(t, b.conn.QueryRow(b.ctx,
			"select geneva.create_workflows('ThreeSteps', 'User', array['1', '1'], true)").Scan(&ids))
		require.Len(t, ids, 2)
		require.NotEqual(t, ids[0], ids[1])
	})

	// A key given earlier (by create_workflow or create_workflows) returns
	// the first workflow and creates nothing for its hero; a key twice in
	// the list creates once.
	t.Run("IdempotencyKeysReturnTheFirstWorkflow", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.defineThreeSteps(t)
		var earlier int64
		require.NoError(t, b.conn.QueryRow(b.ctx,
			"select geneva.create_workflow('ThreeSteps', 'User', '9', p_idempotency_key => 'order-1')").Scan(&earlier))

		ids := b.createMany(t, "ThreeSteps", []string{"1", "2", "3", "4"}, nil,
			[]*string{ptr("order-1"), ptr("order-2"), nil, ptr("order-2")})

		require.Equal(t, earlier, ids[0], "the earlier call's workflow")
		require.Equal(t, ids[1], ids[3], "one workflow for a key given twice")
		require.NotEqual(t, ids[1], ids[2])
		require.Equal(t, [3]int{3, 3, 3}, b.counts(t), "heroes 2 and 3 only are new")
		var heroes []string
		require.NoError(t, b.conn.QueryRow(b.ctx,
			"select array_agg(hero_id order by id) from geneva.workflows").Scan(&heroes))
		require.Equal(t, []string{"9", "2", "3"}, heroes)
		// every key given returns the same workflows again
		again := b.createMany(t, "ThreeSteps", []string{"5", "6"}, nil, []*string{ptr("order-2"), ptr("order-1")})
		require.Equal(t, []int64{ids[1], earlier}, again)
	})

	t.Run("BadInputWritesNothing", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.defineThreeSteps(t)

		for _, c := range []struct {
			name, sql, code, message string
		}{
			{"null list", "select geneva.create_workflows('ThreeSteps', 'User', null)", "22004", ""},
			{"null hero", "select geneva.create_workflows('ThreeSteps', 'User', array['1', null])", "22004", "hero id 2 of 2"},
			{"groups short", "select geneva.create_workflows('ThreeSteps', 'User', array['1', '2'], p_groups => array['g'])", "22023", "groups"},
			{"keys long", "select geneva.create_workflows('ThreeSteps', 'User', array['1'], p_idempotency_keys => array['k', 'l'])", "22023", "idempotency keys"},
			{"empty hero", "select geneva.create_workflows('ThreeSteps', 'User', array['1', ''])", "22023", ""},
			{"two dimensions", "select geneva.create_workflows('ThreeSteps', 'User', array[['1', '2'], ['3', '4']])", "22023", "one dimension"},
			{"from 0", "select geneva.create_workflows('ThreeSteps', 'User', '[0:1]={1,2}'::text[])", "22023", "from 1"},
			{"long hero", "select geneva.create_workflows('ThreeSteps', 'User', array['1', repeat('h', 1025)])", "22001", "hero id"},
			{"empty group", "select geneva.create_workflows('ThreeSteps', 'User', array['1', '2'], p_groups => array['g', ''])", "22023", "group"},
			{"long group", "select geneva.create_workflows('ThreeSteps', 'User', array['1'], p_groups => array[repeat('g', 256)])", "22001", "group"},
			{"empty key", "select geneva.create_workflows('ThreeSteps', 'User', array['1'], p_idempotency_keys => array[''])", "22023", "idempotency key"},
			{"long key", "select geneva.create_workflows('ThreeSteps', 'User', array['1'], p_idempotency_keys => array[repeat('k', 256)])", "22001", "idempotency key"},
			{"trace", "select geneva.create_workflows('ThreeSteps', 'User', array['1'], p_trace_context => 'x')", "22023", "traceparent"},
			{"unknown type", "select geneva.create_workflows('Nope', 'User', array['1'])", "WF001", "Nope"},
		} {
			_, err := b.conn.Exec(b.ctx, c.sql)
			pgErr := requireCode(t, err, c.code)
			require.True(t, strings.Contains(pgErr.Message, c.message), "%s: %s", c.name, pgErr.Message)
		}
		require.Equal(t, [3]int{0, 0, 0}, b.counts(t))
	})

	// A first step held to its type's concurrency only waits at once behind
	// its key's waiters when the key is full, as create_workflow's does; the
	// list's other keys get their jobs.
	t.Run("FirstStepsOfAFullKeyWaitBehindItsWaiters", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.define(t, "Sync", `{"concurrency": {"by": "group", "limit": 1}, "steps": [{"name": "a"}]}`)
		holder := b.active(t, b.createIn(t, "Sync", "1", "acme")).ID
		waiter := b.active(t, b.createIn(t, "Sync", "2", "acme")).ID
		_, ok := b.startStep(t, holder, nil)
		require.True(t, ok)
		_, ok = b.startStep(t, waiter, nil)
		require.False(t, ok, "the key is full: it waits")

		ids := b.createMany(t, "Sync", []string{"3", "4", "5"}, []*string{ptr("acme"), ptr("globex"), ptr("acme")}, nil)

		for i, want := range []*string{ptr(`["concurrency", "Sync", "acme"]`), nil, ptr(`["concurrency", "Sync", "acme"]`)} {
			s := b.limitState(t, b.active(t, ids[i]).ID)
			require.Equal(t, "scheduled", s.State)
			require.Equal(t, want, s.LimitWaitKey, "workflow %d", i)
			require.Equal(t, want == nil, s.JobID != nil, "a job only for the key no one waits for (%d)", i)
		}
	})
}
