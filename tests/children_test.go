package tests

import (
	"encoding/json"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/internal/dbtest"
)

// defineFamily defines "Parent": fan (which starts children), then join,
// which awaits its children (the rule as given, for a day, on_timeout run),
// then close; and "Child": one step, work.
func (b *testBundle) defineFamily(t *testing.T, rule string) {
	t.Helper()
	b.define(t, "Parent", `{"steps": [
		{"name": "fan"},
		{"name": "join", "await": {"children": `+rule+`, "timeout": "1 day"}},
		{"name": "close"}
	]}`)
	b.define(t, "Child", `{"steps": [{"name": "work"}]}`)
}

func (b *testBundle) createChild(t *testing.T, workflowType, heroID string, parentID int64) int64 {
	t.Helper()
	var id int64
	require.NoError(t, b.conn.QueryRow(b.ctx,
		"select geneva.create_workflow($1, 'User', $2, p_parent_id => $3)", workflowType, heroID, parentID).Scan(&id))
	return id
}

type familyRow struct {
	ParentID      *int64
	RootID        *int64
	Children      int32
	ChildrenEnded int32
}

func (b *testBundle) family(t *testing.T, id int64) familyRow {
	t.Helper()
	var f familyRow
	require.NoError(t, b.conn.QueryRow(b.ctx,
		"select parent_id, root_id, children, children_ended from geneva.workflow_list where workflow_id = $1", id).
		Scan(&f.ParentID, &f.RootID, &f.Children, &f.ChildrenEnded))
	return f
}

// finishChild runs a one-step child to its end.
func (b *testBundle) finishChild(t *testing.T, id int64) {
	t.Helper()
	started := b.run(t, id)
	b.complete(t, started.ExecutionID, "success", nil)
}

// joinEvents counts the geneva:children events a workflow has received.
func (b *testBundle) joinEvents(t *testing.T, id int64) int {
	t.Helper()
	var n int
	require.NoError(t, b.conn.QueryRow(b.ctx,
		"select count(*) from geneva.events where workflow_id = $1 and name = 'geneva:children'", id).Scan(&n))
	return n
}

// fanOut starts a Parent, runs its fan step, creates n children of it while
// the step runs, and completes the step: the join is scheduled.
func (b *testBundle) fanOut(t *testing.T, heroID string, n int) (int64, []int64) {
	t.Helper()
	parent := b.create(t, "Parent", heroID)
	fan := b.run(t, parent)
	var children []int64
	for i := range n {
		children = append(children, b.createChild(t, "Child", heroID+"-"+strconv.Itoa(i), parent))
	}
	b.complete(t, fan.ExecutionID, "success", nil)
	return parent, children
}

func TestChildren(t *testing.T) {
	t.Parallel()

	t.Run("CreateWithParent", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.defineFamily(t, `"all"`)

		parent := b.create(t, "Parent", "1")
		child := b.createChild(t, "Parent", "2", parent)
		grandchild := b.createChild(t, "Child", "3", child)
		var ids []int64
		require.NoError(t, b.conn.QueryRow(b.ctx,
			"select geneva.create_workflows('Child', 'User', array['4', '5'], p_parent_id => $1)", parent).Scan(&ids))

		require.Equal(t, familyRow{Children: 3}, b.family(t, parent))
		require.Equal(t, familyRow{ParentID: &parent, RootID: &parent, Children: 1}, b.family(t, child))
		require.Equal(t, familyRow{ParentID: &child, RootID: &parent}, b.family(t, grandchild))
		require.Equal(t, familyRow{ParentID: &parent, RootID: &parent}, b.family(t, ids[1]))
		// the parent is no one's to change
		_, err := b.conn.Exec(b.ctx, "update geneva.workflows set parent_id = null where id = $1", child)
		requireCode(t, err, "55000")
	})

	t.Run("RefusesAnUnknownOrEndedParent", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.defineFamily(t, `"all"`)

		_, err := b.conn.Exec(b.ctx, "select geneva.create_workflow('Child', 'User', '1', p_parent_id => 999999)")
		requireCode(t, err, "P0002")
		parent := b.create(t, "Parent", "1")
		b.call(t, "cancel_workflow", parent)
		_, err = b.conn.Exec(b.ctx, "select geneva.create_workflows('Child', 'User', array['1'], p_parent_id => $1)", parent)
		requireCode(t, err, "55000")
		var n int
		require.NoError(t, b.conn.QueryRow(b.ctx, "select count(*) from geneva.workflows where workflow_type = 'Child'").Scan(&n))
		require.Zero(t, n)
	})

	t.Run("SkipOngoingCreatesTheOthers", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.defineThreeSteps(t)
		ongoing := b.create(t, "ThreeSteps", "2")

		// without it, one ongoing hero refuses the whole list
		_, err := b.conn.Exec(b.ctx, "select geneva.create_workflows('ThreeSteps', 'User', array['1', '2', '3'])")
		requireCode(t, err, "23505")

		var ids []*int64
		require.NoError(t, b.conn.QueryRow(b.ctx,
			"select geneva.create_workflows('ThreeSteps', 'User', array['1', '2', '3', '1'], p_skip_ongoing => true)").Scan(&ids))
		require.Len(t, ids, 4)
		require.NotNil(t, ids[0])
		require.Nil(t, ids[1], "hero 2 has workflow %d ongoing", ongoing)
		require.NotNil(t, ids[2])
		require.Nil(t, ids[3], "hero 1 twice in the list")
		require.Equal(t, "ready", b.workflow(t, *ids[0]).State)
		require.Equal(t, "a", b.active(t, *ids[2]).StepName)

		// every hero ongoing: nothing created, all skipped
		require.NoError(t, b.conn.QueryRow(b.ctx,
			"select geneva.create_workflows('ThreeSteps', 'User', array['1', '2'], p_skip_ongoing => true)").Scan(&ids))
		require.Equal(t, []*int64{nil, nil}, ids)

		_, err = b.conn.Exec(b.ctx,
			"select geneva.create_workflows('ThreeSteps', 'User', array['9'], p_idempotency_keys => array['k'], p_skip_ongoing => true)")
		requireCode(t, err, "22023")
	})

	t.Run("JoinAllIsDueWhenTheLastChildEnds", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineFamily(t, `"all"`)
		parent, children := b.fanOut(t, "1", 3)

		// the join's first claim finds its children running: it waits
		join := b.active(t, parent)
		require.Equal(t, "join", join.StepName)
		_, ok := b.startStep(t, join.ID, nil)
		require.False(t, ok)
		require.Equal(t, t0.Add(24*time.Hour), b.execution(t, join.ID).ScheduledFor)

		b.finishChild(t, children[0])
		b.call(t, "cancel_workflow", children[1]) // a canceled child has ended
		require.Equal(t, t0.Add(24*time.Hour), b.execution(t, join.ID).ScheduledFor)
		require.Zero(t, b.joinEvents(t, parent))

		b.setNow(t, t0.Add(time.Minute))
		b.finishChild(t, children[2])
		require.Equal(t, t0.Add(time.Minute), b.execution(t, join.ID).ScheduledFor)
		require.Equal(t, 1, b.joinEvents(t, parent))

		started := b.run(t, parent)
		require.Equal(t, "join", started.StepName)
		require.Equal(t, "geneva:children", deref(started.EventName))
		var counts map[string]int
		require.NoError(t, json.Unmarshal(started.EventPayload, &counts))
		require.Equal(t, map[string]int{"children": 3, "ended": 3, "finished": 2, "canceled": 1}, counts)
	})

	t.Run("JoinWithoutChildrenIsDueAtOnce", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineFamily(t, `"all"`)
		parent, _ := b.fanOut(t, "1", 0)

		// its first claim decides, and starts it with its event
		join := b.active(t, parent)
		started, ok := b.startStep(t, join.ID, nil)
		require.True(t, ok)
		require.Equal(t, "join", started.StepName)
		require.Equal(t, "geneva:children", deref(started.EventName))
		var counts map[string]int
		require.NoError(t, json.Unmarshal(started.EventPayload, &counts))
		require.Equal(t, map[string]int{"children": 0, "ended": 0, "finished": 0, "canceled": 0}, counts)
		require.Equal(t, 1, b.joinEvents(t, parent))
		require.Equal(t, t0, b.execution(t, join.ID).ScheduledFor)
		// a repeated claim starts nothing and sends nothing
		_, ok = b.startStep(t, join.ID, nil)
		require.False(t, ok)
		require.Equal(t, 1, b.joinEvents(t, parent))
	})

	t.Run("JoinWhoseChildrenEndedBeforeItBegan", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineFamily(t, `"all"`)
		parent := b.create(t, "Parent", "1")
		fan := b.run(t, parent)
		child := b.createChild(t, "Child", "c", parent)
		b.finishChild(t, child)
		b.complete(t, fan.ExecutionID, "success", nil)

		started, ok := b.startStep(t, b.active(t, parent).ID, nil)
		require.True(t, ok) // at its first claim
		require.Equal(t, "join", started.StepName)
		var counts map[string]int
		require.NoError(t, json.Unmarshal(started.EventPayload, &counts))
		require.Equal(t, map[string]int{"children": 1, "ended": 1, "finished": 1, "canceled": 0}, counts)
		require.Equal(t, 1, b.joinEvents(t, parent))
	})

	t.Run("JoinDueButUnclaimedWhenItsChildrenEnd", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineFamily(t, `"all"`)
		parent, children := b.fanOut(t, "1", 1)

		// the join is due as it begins; its child ends before its first
		// claim, which finds the event that end sent
		b.finishChild(t, children[0])
		require.Equal(t, 1, b.joinEvents(t, parent))
		started := b.run(t, parent)
		require.Equal(t, "join", started.StepName)
		require.Equal(t, "geneva:children", deref(started.EventName))
		require.Equal(t, 1, b.joinEvents(t, parent))
	})

	t.Run("JoinAnyAndN", func(t *testing.T) {
		t.Parallel()
		for rule, needed := range map[string]int{`"any"`: 1, `2`: 2} {
			b := setup(t)
			b.setNow(t, t0)
			b.defineFamily(t, rule)
			parent, children := b.fanOut(t, "1", 3)
			join := b.active(t, parent)
			_, ok := b.startStep(t, join.ID, nil)
			require.False(t, ok)

			// a paused child has not ended
			b.call(t, "pause_workflow", children[2])
			for i := range needed {
				require.Zero(t, b.joinEvents(t, parent), rule)
				b.finishChild(t, children[i])
			}
			require.Equal(t, t0, b.execution(t, join.ID).ScheduledFor, rule)
			require.Equal(t, 1, b.joinEvents(t, parent), rule)
			if needed == 1 {
				b.finishChild(t, children[1]) // once due, never again
				require.Equal(t, 1, b.joinEvents(t, parent), rule)
			}
			require.Equal(t, "join", b.run(t, parent).StepName, rule)
		}
	})

	t.Run("JoinRuleRedefined", func(t *testing.T) {
		// a child's end reads whether its parent's join waits for fewer than
		// all from its stripe (partial_join), which follows the type's
		// definition when it is defined again
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineFamily(t, `"all"`)
		parent := b.create(t, "Parent", "1")
		fan := b.run(t, parent)
		var children []int64
		require.NoError(t, b.conn.QueryRow(b.ctx, `select geneva.create_workflows('Child', 'User', array['1-a', '1-b', '1-c'],
			p_parent_id => $1)`, parent).Scan(&children))
		b.complete(t, fan.ExecutionID, "success", nil)
		partial := func() (stripes int, partial []bool) {
			require.NoError(t, b.conn.QueryRow(b.ctx, `select count(*), array_agg(distinct partial_join)
				from geneva.children_stripes where parent_id = $1`, parent).Scan(&stripes, &partial))
			return stripes, partial
		}
		// the count on the parent's row, written only under its lock
		stored := func() (ended int) {
			require.NoError(t, b.conn.QueryRow(b.ctx, `select children_ended from geneva.workflows where id = $1`, parent).Scan(&ended))
			return ended
		}
		stripes, flags := partial()
		require.Equal(t, 1, stripes) // the three on one stripe: no end but the last brings it to 0
		require.Equal(t, []bool{false}, flags)

		b.defineFamily(t, `"any"`)
		_, flags = partial()
		require.Equal(t, []bool{true}, flags)
		b.finishChild(t, children[0])
		require.Equal(t, 1, b.joinEvents(t, parent))
		require.Equal(t, 1, stored())

		b.defineFamily(t, `"all"`)
		_, flags = partial()
		require.Equal(t, []bool{false}, flags)
		b.finishChild(t, children[1]) // counted on its stripe only: the parent's row waits for the last
		require.Equal(t, 1, stored())
		b.finishChild(t, children[2])
		require.Equal(t, 3, stored())
		require.Equal(t, 1, b.joinEvents(t, parent))
		stripes, _ = partial()
		require.Zero(t, stripes)
	})

	t.Run("JoinTimesOut", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.defineFamily(t, `"all"`)
		parent, _ := b.fanOut(t, "1", 1)
		join := b.active(t, parent)
		_, ok := b.startStep(t, join.ID, nil)
		require.False(t, ok)

		b.setNow(t, t0.Add(24*time.Hour))
		started := b.run(t, parent)
		require.Equal(t, "join", started.StepName)
		require.Nil(t, started.EventName) // on_timeout run: without its children
	})

	t.Run("RefusesABadJoin", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		for _, await := range []string{
			`{"children": "some", "timeout": "1 day"}`,
			`{"children": 0, "timeout": "1 day"}`,
			`{"children": 1.5, "timeout": "1 day"}`,
			`{"children": "all"}`,
			`{"children": "all", "event": "x", "timeout": "1 day"}`,
			`{"event": "geneva:children", "timeout": "1 day"}`,
		} {
			_, err := b.conn.Exec(b.ctx, "select geneva.define_workflow('Bad', $1::jsonb)",
				`{"steps": [{"name": "join", "await": `+await+`}]}`)
			requireCode(t, err, "22023")
		}
		// and no one sends the join's event but the children's ends
		b.defineThreeSteps(t)
		id := b.create(t, "ThreeSteps", "1")
		_, err := b.trySendEvent(b.conn, id, "geneva:children", nil)
		requireCode(t, err, "22023")
	})

	t.Run("CancelCascadesThroughThreeLevels", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.defineFamily(t, `"all"`)
		root := b.create(t, "Parent", "1")
		child := b.createChild(t, "Parent", "2", root)
		grandchildren := []int64{b.createChild(t, "Child", "3", child), b.createChild(t, "Child", "4", child)}
		b.finishChild(t, grandchildren[1]) // an ended one stays as it was
		performing := b.createChild(t, "Child", "5", root)
		b.run(t, performing)
		other := b.create(t, "Parent", "9")

		b.call(t, "cancel_workflow", root)

		require.Equal(t, "canceled", b.workflow(t, child).State)
		require.Equal(t, "canceled", b.workflow(t, grandchildren[0]).State)
		require.Equal(t, "finished", b.workflow(t, grandchildren[1]).State)
		// a performing child is canceled at its step's end
		require.Equal(t, "cancel", deref(b.workflow(t, performing).RequestedAction))
		require.Equal(t, "ready", b.workflow(t, other).State)
		require.Equal(t, familyRow{ParentID: &root, RootID: &root, Children: 2, ChildrenEnded: 2}, b.family(t, child))
	})
}

func TestWorkflowChildren(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.setNow(t, t0)
	b.defineFamily(t, `"all"`)
	parent := b.create(t, "Parent", "1")
	child := b.createChild(t, "Parent", "2", parent)
	grandchild := b.createChild(t, "Child", "3", child)
	b.setNow(t, t0.Add(time.Minute))
	b.finishChild(t, grandchild)
	b.create(t, "Child", "4") // no one's child

	type childRow struct {
		ParentID     int64
		WorkflowID   int64
		WorkflowType string
		HeroType     string
		HeroID       string
		State        string
		EndedAt      *time.Time
		RootID       int64
	}
	require.Equal(t, []childRow{
		{ParentID: parent, WorkflowID: child, WorkflowType: "Parent", HeroType: "User", HeroID: "2", State: "ready", RootID: parent},
		{
			ParentID: child, WorkflowID: grandchild, WorkflowType: "Child", HeroType: "User", HeroID: "3", State: "finished",
			EndedAt: ptr(t0.Add(time.Minute)), RootID: parent,
		},
	}, viewRows[childRow](t, b, `select parent_id, workflow_id, workflow_type, hero_type, hero_id, state, ended_at, root_id
		from geneva.workflow_children order by workflow_id`))

	// geneva.workflow_list: each workflow's parent and child counts
	type listRow struct {
		WorkflowID    int64
		ParentID      *int64
		RootID        *int64
		Children      int32
		ChildrenEnded int32
	}
	require.Equal(t, []listRow{
		{WorkflowID: parent, Children: 1},
		{WorkflowID: child, ParentID: &parent, RootID: &parent, Children: 1, ChildrenEnded: 1},
		{WorkflowID: grandchild, ParentID: &child, RootID: &parent},
	}, viewRows[listRow](t, b, `select workflow_id, parent_id, root_id, children, children_ended
		from geneva.workflow_list where workflow_id = any ($1) order by workflow_id`, []int64{parent, child, grandchild}))

	// bulk_workflows' parent_id: a parent's children, paused when asked
	var result map[string]any
	require.NoError(t, b.conn.QueryRow(b.ctx, "select geneva.bulk_workflows('pause', $1::jsonb)",
		`{"parent_id": `+strconv.FormatInt(parent, 10)+`}`).Scan(&result))
	require.EqualValues(t, 1, result["acted"], result)
	require.Equal(t, "paused", b.workflow(t, child).State)
	require.Equal(t, "ready", b.workflow(t, parent).State)
}

// TestChildrenJoinRace: hundreds of parents whose last two children end at
// the same instant on two connections: every parent's join is made due
// once.
func TestChildrenJoinRace(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.defineFamily(t, `"all"`)
	const parents = 200
	var ids []int64
	var firsts, seconds []int64
	for p := range parents {
		parent := b.create(t, "Parent", "p"+strconv.Itoa(p))
		fan := b.run(t, parent)
		var c [2]int64
		for i := range 2 {
			c[i] = b.createChild(t, "Child", "p"+strconv.Itoa(p)+"-"+strconv.Itoa(i), parent)
			started := b.run(t, c[i])
			if i == 0 {
				firsts = append(firsts, started.ExecutionID)
			} else {
				seconds = append(seconds, started.ExecutionID)
			}
		}
		b.complete(t, fan.ExecutionID, "success", nil)
		_, ok := b.startStep(t, b.active(t, parent).ID, nil)
		require.False(t, ok)
		ids = append(ids, parent)
	}

	connA, connB := dbtest.NewConn(t, b.conf), dbtest.NewConn(t, b.conf)
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	start := make(chan struct{})
	// a barrier per parent: both connections end its children together
	type barrier struct {
		sync.Mutex
		arrived int
		all     chan struct{}
	}
	barriers := make([]*barrier, parents)
	for i := range barriers {
		barriers[i] = &barrier{all: make(chan struct{})}
	}
	arrive := func(i int) {
		b := barriers[i]
		b.Lock()
		if b.arrived++; b.arrived == 2 {
			close(b.all)
		}
		b.Unlock()
		<-b.all
	}
	for i, executions := range [][]int64{firsts, seconds} {
		conn := connA
		if i == 1 {
			conn = connB
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for p, id := range executions {
				arrive(p)
				if _, err := conn.Exec(b.ctx, "select geneva.complete_step($1, 'success')", id); err != nil {
					errs <- err
					for q := p + 1; q < parents; q++ { // (the other goroutine goes on alone)
						arrive(q)
					}
					return
				}
			}
		}()
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}

	var wrong int
	require.NoError(t, b.conn.QueryRow(b.ctx, `
		select count(*) from unnest($1::bigint[]) p (id)
		where (select count(*) from geneva.events e where e.workflow_id = p.id and e.name = 'geneva:children') <> 1
		  or not exists (
		    select from geneva.step_executions e
		    where e.workflow_id = p.id and e.step_name = 'join' and e.state = 'scheduled'
		      and e.scheduled_for <= geneva.now()
		  )`, ids).Scan(&wrong))
	require.Zero(t, wrong, "parents whose join was not made due exactly once")
	for _, id := range ids[:3] {
		require.Equal(t, "join", b.run(t, id).StepName)
	}
}

// TestChildrenJoinRaceStripes: a child's end counts on a stripe of its
// parent's (geneva.children_stripes), the first no other transaction holds,
// and only a stripe's last end takes the parent's lock. Each parent's last
// two children are counted on two stripes, one each (the second created
// later, on a new stripe: the parent has fewer than 16; meanwhile another
// transaction's end holds the first, which the creation does not wait for);
// they end at the same instant on two connections, each its stripe's last:
// every join made due once, with the counts of all three, and the stripes
// gone. Before, the counts read as they are, the row's own lagging or not.
func TestChildrenJoinRaceStripes(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.defineFamily(t, `"all"`)
	const parents = 40
	connX := dbtest.NewConn(t, b.conf)
	var ids, firsts, seconds []int64
	for p := range parents {
		hero := "s" + strconv.Itoa(p)
		parent := b.create(t, "Parent", hero)
		fan := b.run(t, parent)
		var kids []int64
		require.NoError(t, b.conn.QueryRow(b.ctx, `select geneva.create_workflows('Child', 'User',
			array[$1 || '-1', $1 || '-3'], p_parent_id => $2)`, hero, parent).Scan(&kids))
		first, third := b.run(t, kids[0]), b.run(t, kids[1])
		// the third child's end holds the parent's one stripe: the second
		// child is counted on a new one, without waiting
		tx, err := connX.Begin(b.ctx)
		require.NoError(t, err)
		_, err = tx.Exec(b.ctx, "select geneva.complete_step($1, 'success')", third.ExecutionID)
		require.NoError(t, err)
		second := b.run(t, b.createChild(t, "Child", hero+"-2", parent))
		require.NoError(t, tx.Commit(b.ctx))
		var stripes []int32
		require.NoError(t, b.conn.QueryRow(b.ctx, `select array_agg(ongoing order by stripe)
			from geneva.children_stripes where parent_id = $1`, parent).Scan(&stripes))
		require.Equal(t, []int32{1, 1}, stripes)
		require.Equal(t, familyRow{Children: 3, ChildrenEnded: 1}, b.family(t, parent))
		b.complete(t, fan.ExecutionID, "success", nil)
		_, ok := b.startStep(t, b.active(t, parent).ID, nil)
		require.False(t, ok)
		firsts, seconds = append(firsts, first.ExecutionID), append(seconds, second.ExecutionID)
		ids = append(ids, parent)
	}

	connA, connB := dbtest.NewConn(t, b.conf), dbtest.NewConn(t, b.conf)
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	ready := make([]chan struct{}, parents)
	for i := range ready {
		ready[i] = make(chan struct{}, 2)
	}
	for i, executions := range [][]int64{firsts, seconds} {
		conn := connA
		if i == 1 {
			conn = connB
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p, id := range executions {
				// both connections at the same parent, then together
				ready[p] <- struct{}{}
				for len(ready[p]) < 2 {
					time.Sleep(50 * time.Microsecond)
				}
				if _, err := conn.Exec(b.ctx, "select geneva.complete_step($1, 'success')", id); err != nil {
					errs <- err
					for q := p + 1; q < parents; q++ { // (the other goroutine goes on alone)
						ready[q] <- struct{}{}
					}
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}

	var wrong int
	require.NoError(t, b.conn.QueryRow(b.ctx, `
		select count(*) from unnest($1::bigint[]) p (id)
		where (select count(*) from geneva.events e where e.workflow_id = p.id and e.name = 'geneva:children') <> 1
		  or (select e.payload from geneva.events e where e.workflow_id = p.id and e.name = 'geneva:children')
		    <> '{"children": 3, "ended": 3, "finished": 3, "canceled": 0}'::jsonb
		  or (select w.children_ended from geneva.workflows w where w.id = p.id) <> 3
		  or exists (select from geneva.children_stripes s where s.parent_id = p.id)`, ids).Scan(&wrong))
	require.Zero(t, wrong, "parents whose join was not made due exactly once, with every child counted")
	require.Equal(t, "join", b.run(t, ids[0]).StepName)
}

func TestChildrenPsql(t *testing.T) {
	t.Parallel()
	b := setup(t)
	// docs/children.md quotes the script from its first step to the family
	out := b.runQuoted(t, "../docs/children.md", "../examples/psql/children.sql", "-- 1. A parent", "\n\n-- The family")
	require.Regexp(t, `\{\d+,\d+,NULL\}`, string(out), "customer 9 skipped:\n%s", out)
	require.Contains(t, string(out), `report    | geneva:children | {"ended": 2, "canceled": 0, "children": 2, "finished": 2}`,
		"the join ran with its counts:\n%s", out)

	var states []string
	rows, err := b.conn.Query(b.ctx, `select w.workflow_type || ' ' || w.hero_id || ' ' || w.state
		from geneva.workflows w order by w.id`)
	require.NoError(t, err)
	for rows.Next() {
		var s string
		require.NoError(t, rows.Scan(&s))
		states = append(states, s)
	}
	require.NoError(t, rows.Err())
	require.Equal(t, []string{"Invoice 9 ready", "InvoiceRun 2031-01 performing", "Invoice 7 finished", "Invoice 8 finished"}, states)
}

// A concurrency "by": "parent" holds the children of each parent apart: two
// of one parent's in progress at once, another parent's beside them, a
// workflow of the type without a parent not held; an ended child passes its
// slot to its sibling. A named limit by parent keys the same way.
func TestChildrenLimitByParent(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.setNow(t, t0)
	b.define(t, "Parent", `{"steps": [{"name": "fan"}]}`)
	b.define(t, "Item", `{"concurrency": {"by": "parent", "limit": 2}, "steps": [{"name": "work"}, {"name": "report"}]}`)
	first, second := b.create(t, "Parent", "p1"), b.create(t, "Parent", "p2")
	var items []int64
	for i := range 4 {
		items = append(items, b.createChild(t, "Item", "a"+strconv.Itoa(i), first))
	}
	other := b.createChild(t, "Item", "b0", second)
	root := b.create(t, "Item", "root")

	var started []startedStep
	for _, id := range items {
		if s, ok := b.startStep(t, b.active(t, id).ID, nil); ok {
			started = append(started, s)
		}
	}
	require.Len(t, started, 2, "two of the first parent's children at once")
	key := `["concurrency", "Item", "` + strconv.FormatInt(first, 10) + `"]`
	require.Equal(t, key, deref(b.limitState(t, b.active(t, items[2]).ID).LimitWaitKey))
	_, ok := b.startStep(t, b.active(t, other).ID, nil)
	require.True(t, ok, "another parent's child is not held back")
	rootStart, ok := b.startStep(t, b.active(t, root).ID, nil)
	require.True(t, ok, "a workflow without a parent is not held")
	require.Empty(t, b.limitState(t, rootStart.ExecutionID).LimitKeys, "it holds no slot")
	require.Equal(t, []usageRow{
		{"concurrency", "Item", strconv.FormatInt(first, 10), 2, 2, 0, ptr(int32(2)), nil},
		{"concurrency", "Item", strconv.FormatInt(second, 10), 1, 0, 0, ptr(int32(2)), nil},
	}, b.limitUsage(t))
	var blocker string
	require.NoError(t, b.conn.QueryRow(b.ctx, "select key from geneva.workflow_blockers where workflow_id = $1", items[2]).Scan(&blocker))
	require.Equal(t, strconv.FormatInt(first, 10), blocker)

	// a child's step ends: its slot goes to the oldest waiting sibling
	b.complete(t, started[0].ExecutionID, "success", nil)
	woken := b.limitState(t, b.active(t, items[2]).ID)
	require.Nil(t, woken.LimitWaitKey)
	require.Equal(t, []string{key}, woken.LimitKeys)
	require.NotNil(t, b.limitState(t, b.active(t, items[3]).ID).LimitWaitKey, "the younger still waits")
	require.Equal(t, key, deref(b.limitState(t, b.active(t, items[0]).ID).LimitWaitKey), "the ended one's next step waits behind")

	// a named limit by parent
	_, err := b.conn.Exec(b.ctx, "select geneva.define_limit('per_parent', p_concurrency => 1, p_by => 'parent')")
	require.NoError(t, err)
	b.define(t, "Named", `{"steps": [{"name": "work", "limits": ["per_parent"]}]}`)
	named := []int64{b.createChild(t, "Named", "n0", second), b.createChild(t, "Named", "n1", second)}
	_, ok = b.startStep(t, b.active(t, named[0]).ID, nil)
	require.True(t, ok)
	_, ok = b.startStep(t, b.active(t, named[1]).ID, nil)
	require.False(t, ok, "one of a parent's at once")
	require.Equal(t, `["limit", "per_parent", "`+strconv.FormatInt(second, 10)+`"]`,
		deref(b.limitState(t, b.active(t, named[1]).ID).LimitWaitKey))

	// bad input names parent among the keys
	_, err = b.conn.Exec(b.ctx, `select geneva.define_workflow('Bad', '{"concurrency": {"by": "tenant", "limit": 1}, "steps": [{"name": "a"}]}')`)
	require.Contains(t, requireCode(t, err, "22023").Message, "is not group, hero, type or parent")
}

// TestChildrenCountsVerbs: a verb's returned row carries its children's
// ends as they are now, as get_workflow's does, not the row's stored
// count, which lags while some children are ongoing (an end that is not its
// stripe's last does not write the parent's row). Before, pause_workflow
// and the others returned the stored count.
func TestChildrenCountsVerbs(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.defineFamily(t, `"all"`)
	parent := b.create(t, "Parent", "1")
	fan := b.run(t, parent)
	// (two children on one stripe: the first's end leaves it counting one)
	var ids []int64
	require.NoError(t, b.conn.QueryRow(b.ctx,
		"select geneva.create_workflows('Child', 'User', array['a', 'b'], p_parent_id => $1)", parent).Scan(&ids))
	b.complete(t, fan.ExecutionID, "success", nil)
	b.finishChild(t, ids[0])
	var stored int
	require.NoError(t, b.conn.QueryRow(b.ctx, "select children_ended from geneva.workflows where id = $1", parent).Scan(&stored))
	require.Zero(t, stored, "the stored count lags")

	for _, call := range []string{"pause_workflow($1)", "resume_workflow($1)", "schedule_step($1, 'join')",
		"skip_step($1)", "cancel_workflow($1)"} {
		var children, ended int
		require.NoError(t, b.conn.QueryRow(b.ctx,
			"select children, children_ended from geneva."+call, parent).Scan(&children, &ended), call)
		want := [2]int{2, 1}
		if call == "cancel_workflow($1)" {
			want = [2]int{2, 2} // its cascade canceled the other
		}
		require.Equal(t, want, [2]int{children, ended}, call)
	}
}
