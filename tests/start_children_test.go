package tests

import (
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// endWithChildren records a running step's end (complete_steps, one
// element) whose reply carries children (JSON), on b.conn.
func (b *testBundle) endWithChildren(executionID int64, signal, children string) error {
	_, err := b.conn.Exec(b.ctx, `select * from geneva.complete_steps(array[$1::bigint], array[$2], array[null::interval],
		array[null::bigint], array[false], false, null, array[jsonb_build_object('children', $3::jsonb)])`,
		executionID, signal, children)
	return err
}

type childRow struct {
	Type, HeroID, Key string
	Group             *string
}

// childrenOf lists a parent's children, oldest first.
func (b *testBundle) childrenOf(t *testing.T, parentID int64) []childRow {
	t.Helper()
	rows, err := b.conn.Query(b.ctx, `select workflow_type, hero_id, child_key, group_name
		from geneva.workflows where parent_id = $1 order by id`, parentID)
	require.NoError(t, err)
	children, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (childRow, error) {
		var c childRow
		var key *string
		err := row.Scan(&c.Type, &c.HeroID, &key, &c.Group)
		if key != nil {
			c.Key = *key
		}
		return c, err
	})
	require.NoError(t, err)
	return children
}

func TestStartChildren(t *testing.T) {
	t.Parallel()

	t.Run("WithTheStepsSuccess", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.defineFamily(t, `"all"`)
		parent := b.create(t, "Parent", "1")
		fan := b.run(t, parent)

		require.NoError(t, b.endWithChildren(fan.ExecutionID, "success", `[
			{"type": "Child", "hero_type": "User", "hero_id": "7", "group": "acme"},
			{"type": "Child", "hero_type": "User", "hero_id": "8", "key": "eight"},
			{"type": "Parent", "hero_type": "Team", "hero_id": "9", "group": null}
		]`))
		group := "acme"
		require.Equal(t, []childRow{
			{Type: "Child", HeroID: "7", Key: `["Child", "User", "7"]`, Group: &group},
			{Type: "Child", HeroID: "8", Key: "eight"},
			{Type: "Parent", HeroID: "9", Key: `["Parent", "Team", "9"]`},
		}, b.childrenOf(t, parent))
		require.Equal(t, familyRow{Children: 3}, b.family(t, parent))
		// each child's first step is scheduled, with its job
		for _, c := range b.executionsOfChildren(t, parent) {
			require.Equal(t, "scheduled", c.State)
			require.NotNil(t, c.JobID)
		}
		// the join counts them: its claim finds them running
		join := b.active(t, parent)
		require.Equal(t, "join", join.StepName)
		_, started := b.startStep(t, join.ID, nil)
		require.False(t, started)
	})

	t.Run("NoneWithoutSuccess", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.defineFamily(t, `"all"`)
		children := `[{"type": "Child", "hero_type": "User", "hero_id": "7"}]`
		for _, signal := range []string{"reattempt", "skip", "suspend", "pause"} {
			parent := b.create(t, "Parent", signal)
			fan := b.run(t, parent)
			require.NoError(t, b.endWithChildren(fan.ExecutionID, signal, children))
			require.Empty(t, b.childrenOf(t, parent), signal)
			require.Equal(t, familyRow{}, b.family(t, parent), signal)
		}
		// "finished" is a success: the parent finishes, its children run
		parent := b.create(t, "Parent", "finished")
		fan := b.run(t, parent)
		require.NoError(t, b.endWithChildren(fan.ExecutionID, "finished", children))
		require.Equal(t, "finished", b.workflow(t, parent).State)
		require.Len(t, b.childrenOf(t, parent), 1)
		// a late report of an execution that has moved on starts none
		require.NoError(t, b.endWithChildren(fan.ExecutionID, "success",
			`[{"type": "Child", "hero_type": "User", "hero_id": "8"}]`))
		require.Len(t, b.childrenOf(t, parent), 1)
	})

	t.Run("EachKeyOnce", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.define(t, "Twice", `{"steps": [{"name": "a"}, {"name": "b"}]}`)
		b.define(t, "Child", `{"steps": [{"name": "work"}]}`)
		parent := b.create(t, "Twice", "1")
		a := b.run(t, parent)
		require.NoError(t, b.endWithChildren(a.ExecutionID, "success", `[
			{"type": "Child", "hero_type": "User", "hero_id": "7"},
			{"type": "Child", "hero_type": "User", "hero_id": "8", "key": "k"}
		]`))
		children := b.childrenOf(t, parent)
		require.Len(t, children, 2)
		// the first child ends (its hero is free again); a later step starts
		// the same children again, and another: only the new key is created
		var first int64
		require.NoError(t, b.conn.QueryRow(b.ctx,
			"select id from geneva.workflows where parent_id = $1 and hero_id = '7'", parent).Scan(&first))
		b.finishChild(t, first)
		next := b.run(t, parent)
		require.NoError(t, b.endWithChildren(next.ExecutionID, "success", `[
			{"type": "Child", "hero_type": "User", "hero_id": "7"},
			{"type": "Child", "hero_type": "User", "hero_id": "9", "key": "k"},
			{"type": "Child", "hero_type": "User", "hero_id": "10"},
			{"type": "Child", "hero_type": "User", "hero_id": "10", "key": "again"}
		]`))
		require.Equal(t, []childRow{
			{Type: "Child", HeroID: "7", Key: `["Child", "User", "7"]`},
			{Type: "Child", HeroID: "8", Key: "k"},
			{Type: "Child", HeroID: "10", Key: `["Child", "User", "10"]`},
		}, b.childrenOf(t, parent), "hero 10 twice: its ongoing workflow skips the second")
		require.Equal(t, familyRow{Children: 3, ChildrenEnded: 1}, b.family(t, parent))

		// from SQL: create_workflows' p_child_keys
		var ids []*int64
		other := b.create(t, "Twice", "2")
		require.NoError(t, b.conn.QueryRow(b.ctx, `select geneva.create_workflows('Child', 'User', array['20', '21', '22'],
			p_parent_id => $1, p_child_keys => array['x', null, 'x'])`, other).Scan(&ids))
		require.Len(t, ids, 3)
		require.NotNil(t, ids[0])
		require.NotNil(t, ids[1])
		require.Nil(t, ids[2], "key x twice in the list")
		require.NoError(t, b.conn.QueryRow(b.ctx, `select geneva.create_workflows('Child', 'User', array['23'],
			p_parent_id => $1, p_child_keys => array['x'])`, other).Scan(&ids))
		require.Equal(t, []*int64{nil}, ids, "key x taken")
		for query, code := range map[string]string{
			"select geneva.create_workflows('Child', 'User', array['1'], p_child_keys => array['x'])":                                                      "22023",
			"select geneva.create_workflows('Child', 'User', array['1'], p_parent_id => $1, p_child_keys => array['x', 'y'])":                              "22023",
			"select geneva.create_workflows('Child', 'User', array['1'], p_parent_id => $1, p_child_keys => array[''])":                                    "22023",
			"select geneva.create_workflows('Child', 'User', array['1'], p_parent_id => $1, p_child_keys => array[repeat('k', 256)])":                      "22001",
			"select geneva.create_workflows('Child', 'User', array['1'], p_parent_id => $1, p_child_keys => array['k'], p_idempotency_keys => array['i'])": "22023",
		} {
			var args []any
			if strings.Contains(query, "$1") {
				args = append(args, other)
			}
			_, err := b.conn.Exec(b.ctx, query, args...)
			requireCode(t, err, code)
		}
	})

	t.Run("RefusesBadChildrenAndRecordsNothing", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.defineFamily(t, `"all"`)
		parent := b.create(t, "Parent", "1")
		fan := b.run(t, parent)
		for children, code := range map[string]string{
			`{"type": "Child"}`: "22023",
			`["Child"]`:         "22023",
			`[{"type": "Child", "hero_type": "User", "hero_id": "1"}, {"type": "Nope", "hero_type": "User", "hero_id": "2"}]`: "22023",
			`[{"type": "Child", "hero_type": "User"}]`:                              "22023",
			`[{"type": "Child", "hero_type": "User", "hero_id": 1}]`:                "22023",
			`[{"type": "Child", "hero_type": "User", "hero_id": "1", "x": 1}]`:      "22023",
			`[{"type": "Child", "hero_type": "User", "hero_id": "1", "key": 2}]`:    "22023",
			`[{"type": "Child", "hero_type": "User", "hero_id": ""}]`:               "22023",
			`[{"type": "Child", "hero_type": "User", "hero_id": "1", "key": ""}]`:   "22023",
			`[{"type": "Child", "hero_type": "User", "hero_id": "1", "group": ""}]`: "22023",
		} {
			err := b.endWithChildren(fan.ExecutionID, "success", children)
			require.Error(t, err, children)
			requireCode(t, err, code)
			require.Equal(t, "in_progress", b.execution(t, fan.ExecutionID).State, children)
			require.Empty(t, b.childrenOf(t, parent), children)
		}
		require.NoError(t, b.endWithChildren(fan.ExecutionID, "success", `[]`))
		require.Equal(t, "completed", b.execution(t, fan.ExecutionID).State)
	})

	// The end and the children are one transaction: a connection killed
	// before its commit leaves neither, and the end recorded again starts
	// them once.
	t.Run("OneTransactionWithTheEnd", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.defineFamily(t, `"all"`)
		parent := b.create(t, "Parent", "1")
		fan := b.run(t, parent)
		children := `[{"type": "Child", "hero_type": "User", "hero_id": "1"}, {"type": "Child", "hero_type": "User", "hero_id": "2"}]`

		conn, err := b.pool.Acquire(b.ctx)
		require.NoError(t, err)
		tx, err := conn.Begin(b.ctx)
		require.NoError(t, err)
		_, err = tx.Exec(b.ctx, `select * from geneva.complete_steps(array[$1::bigint], array['success'], array[null::interval],
			array[null::bigint], array[false], false, null, array[jsonb_build_object('children', $2::jsonb)])`,
			fan.ExecutionID, children)
		require.NoError(t, err)
		var pid int32
		require.NoError(t, tx.QueryRow(b.ctx, "select pg_backend_pid()").Scan(&pid))
		_, err = b.conn.Exec(b.ctx, "select pg_terminate_backend($1)", pid)
		require.NoError(t, err)
		_ = tx.Rollback(b.ctx)
		conn.Release()

		requireChildrenIffEnded := func() {
			var ended bool
			var n int
			require.NoError(t, b.conn.QueryRow(b.ctx, `select
				(select state = 'completed' and outcome = 'success' from geneva.step_executions where id = $1),
				(select count(*) from geneva.workflows where parent_id = $2)`, fan.ExecutionID, parent).Scan(&ended, &n))
			require.Equal(t, ended, n == 2, "children exist iff the step's success is recorded")
			require.True(t, n == 0 || n == 2)
		}
		requireChildrenIffEnded()
		require.Equal(t, "in_progress", b.execution(t, fan.ExecutionID).State)

		require.NoError(t, b.endWithChildren(fan.ExecutionID, "success", children))
		requireChildrenIffEnded()
		require.NoError(t, b.endWithChildren(fan.ExecutionID, "success", children), "a repeated report")
		requireChildrenIffEnded()
		require.Equal(t, familyRow{Children: 2}, b.family(t, parent))
	})
}

type childExecution struct {
	State string
	JobID *int64
}

func (b *testBundle) executionsOfChildren(t *testing.T, parentID int64) []childExecution {
	t.Helper()
	rows, err := b.conn.Query(b.ctx, `select e.state, e.job_id from geneva.step_executions e
		join geneva.workflows w on w.id = e.workflow_id where w.parent_id = $1 order by e.id`, parentID)
	require.NoError(t, err)
	out, err := pgx.CollectRows(rows, pgx.RowToStructByPos[childExecution])
	require.NoError(t, err)
	return out
}

// TestRetryChild: an operator's retry of a child is a new child of the same
// parent, counted on it as a creation is (children, a stripe), whose end is
// then counted as any child's: the parent's counts stay exact and its join
// waits for it; the new run leaves the original its child key (which a
// step's children always carry) and has no children of its own. Before, the
// retry copied the key (23505 on workflows_child_key), and a retry of a
// child without a key ended uncounted: children_ended over children.
func TestRetryChild(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.defineFamily(t, `"all"`)
	parent := b.create(t, "Parent", "1")
	fan := b.run(t, parent)
	require.NoError(t, b.endWithChildren(fan.ExecutionID, "success", `[
		{"type": "Child", "hero_type": "User", "hero_id": "7"},
		{"type": "Child", "hero_type": "User", "hero_id": "8"}
	]`))
	var first, second int64
	require.NoError(t, b.conn.QueryRow(b.ctx, `select min(id), max(id) from geneva.workflows where parent_id = $1`, parent).
		Scan(&first, &second))

	// the first child canceled, then retried: three children, one ended
	b.call(t, "cancel_workflow", first)
	require.Equal(t, familyRow{Children: 2, ChildrenEnded: 1}, b.family(t, parent))
	var retried int64
	require.NoError(t, b.conn.QueryRow(b.ctx, `select geneva.retry_workflow($1)`, first).Scan(&retried))
	var key *string
	var children int
	require.NoError(t, b.conn.QueryRow(b.ctx, `select child_key, children from geneva.workflows where id = $1`, retried).
		Scan(&key, &children))
	require.Nil(t, key)
	require.Zero(t, children)
	require.Equal(t, familyRow{ParentID: &parent, RootID: &parent}, b.family(t, retried))
	require.Equal(t, familyRow{Children: 3, ChildrenEnded: 1}, b.family(t, parent))

	// the second child's end leaves the join waiting for the retried one
	b.finishChild(t, second)
	require.Equal(t, familyRow{Children: 3, ChildrenEnded: 2}, b.family(t, parent))
	require.Zero(t, b.joinEvents(t, parent))
	join := b.active(t, parent)
	_, started := b.startStep(t, join.ID, nil)
	require.False(t, started)

	// its end makes the join due, once, with every count exact
	b.finishChild(t, retried)
	require.Equal(t, familyRow{Children: 3, ChildrenEnded: 3}, b.family(t, parent))
	require.Equal(t, 1, b.joinEvents(t, parent))
	var stored int
	require.NoError(t, b.conn.QueryRow(b.ctx, `select children_ended from geneva.workflows where id = $1`, parent).Scan(&stored))
	require.Equal(t, 3, stored)

	// a retry of a child whose parent has ended counts on it too
	b.call(t, "cancel_workflow", parent)
	var again int64
	require.NoError(t, b.conn.QueryRow(b.ctx, `select geneva.retry_workflow($1)`, retried).Scan(&again))
	require.Equal(t, familyRow{Children: 4, ChildrenEnded: 3}, b.family(t, parent))
	b.finishChild(t, again)
	require.Equal(t, familyRow{Children: 4, ChildrenEnded: 4}, b.family(t, parent))
}
