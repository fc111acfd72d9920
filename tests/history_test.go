package tests

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"
)

// History (docs/history.md, issue 50): housekeeping moves whole ended trees
// out of the live tables after move_after, and retention drops (or detaches)
// whole partitions.

// histCounts is what geneva.housekeep returns about history.
type histCounts struct {
	WorkflowsCleanedUp      int  `json:"workflows_cleaned_up"`
	StepExecutionsCleanedUp int  `json:"step_executions_cleaned_up"`
	WorkflowsMoved          int  `json:"workflows_moved"`
	PartitionsCreated       int  `json:"partitions_created"`
	PartitionsDropped       int  `json:"partitions_dropped"`
	PartitionsDetached      int  `json:"partitions_detached"`
	More                    bool `json:"more"`
}

func (b *testBundle) histRound(t *testing.T, args string) histCounts {
	t.Helper()
	if args != "" {
		args += ", "
	}
	raw, err := b.hkTry(args + hkRetentionOnly)
	require.NoError(t, err)
	var counts histCounts
	require.NoError(t, json.Unmarshal(raw, &counts))
	return counts
}

// histWhere says where a workflow is: "live", "history" or "gone".
func (b *testBundle) histWhere(t *testing.T, id int64) string {
	t.Helper()
	var live, moved int
	require.NoError(t, b.conn.QueryRow(b.ctx, `select (select count(*) from geneva.workflows where id = $1),
		(select count(*) from geneva.workflows_history where id = $1)`, id).Scan(&live, &moved))
	require.False(t, live+moved > 1, "workflow %d is live and in history", id)
	switch {
	case live == 1:
		return "live"
	case moved == 1:
		return "history"
	}
	return "gone"
}

// histCount reads geneva.workflow_counts for a type and state.
func (b *testBundle) histCount(t *testing.T, workflowType, state string) int {
	t.Helper()
	var n int
	require.NoError(t, b.conn.QueryRow(b.ctx, `select coalesce(sum(workflows), 0) from geneva.workflow_counts
		where workflow_type = $1 and state = $2`, workflowType, state).Scan(&n))
	return n
}

// histPartitions lists the attached partitions of workflows_history, and
// histTable says whether a table of schema geneva exists (attached or not).
func (b *testBundle) histPartitions(t *testing.T) []string {
	t.Helper()
	var names []string
	require.NoError(t, b.conn.QueryRow(b.ctx,
		"select coalesce(array_agg(partition_name order by lower_day), '{}') from geneva._history_bounds('workflows_history')").Scan(&names))
	return names
}

func (b *testBundle) histTable(t *testing.T, name string) bool {
	t.Helper()
	var exists bool
	require.NoError(t, b.conn.QueryRow(b.ctx, "select to_regclass('geneva.' || $1) is not null", name).Scan(&exists))
	return exists
}

func TestHistory(t *testing.T) {
	t.Parallel()

	// A parent with an ongoing child stays, and its ended child with it;
	// the tree moves whole once every member has ended, move_after later.
	t.Run("MovesWholeTreesOnly", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.define(t, "One", `{"steps": [{"name": "only"}]}`)
		root := b.create(t, "One", "root")
		child := b.createChild(t, "One", "child", root)
		grandchild := b.createChild(t, "One", "grandchild", child)
		b.complete(t, b.run(t, root).ExecutionID, "success", nil)
		b.complete(t, b.run(t, child).ExecutionID, "success", nil)
		alone := b.hkFinished(t, "alone")

		b.setNow(t, t0.Add(hours(2)))
		counts := b.histRound(t, "")
		require.Equal(t, 1, counts.WorkflowsMoved, "only the workflow without a tree")
		require.Equal(t, "history", b.histWhere(t, alone))
		for _, id := range []int64{root, child, grandchild} {
			require.Equal(t, "live", b.histWhere(t, id), "a grandchild is ongoing: its whole tree stays")
		}

		b.complete(t, b.run(t, grandchild).ExecutionID, "success", nil)
		require.Zero(t, b.histRound(t, "").WorkflowsMoved, "the grandchild ended less than move_after ago")
		b.setNow(t, t0.Add(hours(4)))
		require.Equal(t, 3, b.histRound(t, "").WorkflowsMoved)
		for _, id := range []int64{root, child, grandchild} {
			require.Equal(t, "history", b.histWhere(t, id))
		}
		var executions, liveExecutions int
		require.NoError(t, b.conn.QueryRow(b.ctx, `select
			(select count(*) from geneva.step_executions_history where workflow_id = any($1)),
			(select count(*) from geneva.step_executions where workflow_id = any($1))`,
			[]int64{root, child, grandchild, alone}).Scan(&executions, &liveExecutions))
		require.Equal(t, 4, executions, "the executions moved with their workflows")
		require.Zero(t, liveExecutions)
	})

	t.Run("MoveAfterIsRespected", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.define(t, "One", `{"steps": [{"name": "only"}]}`)
		_, err := b.conn.Exec(b.ctx, "select geneva.set_housekeeping_settings(p_move_after => interval '10 minutes')")
		require.NoError(t, err)
		id := b.hkFinished(t, "1")

		b.setNow(t, t0.Add(9*time.Minute))
		require.Zero(t, b.histRound(t, "").WorkflowsMoved)
		require.Equal(t, "live", b.histWhere(t, id))
		b.setNow(t, t0.Add(11*time.Minute))
		require.Equal(t, 1, b.histRound(t, "").WorkflowsMoved)
		require.Equal(t, "history", b.histWhere(t, id))

		// a retention shorter than move_after moves it sooner: its partition
		// is then dropped when its day has passed the retention
		_, err = b.conn.Exec(b.ctx, "select geneva.set_housekeeping_settings(p_move_after => interval '1 day')")
		require.NoError(t, err)
		other := b.hkFinished(t, "2")
		b.setNow(t, t0.Add(12*time.Minute))
		require.Zero(t, b.histRound(t, "").WorkflowsMoved)
		require.Equal(t, 1, b.histRound(t, "p_retention => interval '0'").WorkflowsMoved)
		require.Equal(t, "history", b.histWhere(t, other))
	})

	// The move is not a deletion: workflow_counts counts moved workflows;
	// a dropped partition's workflows leave it.
	t.Run("CountsFollowTheDropNotTheMove", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.define(t, "One", `{"steps": [{"name": "only"}]}`)
		for i := 0; i < 3; i++ {
			b.hkFinished(t, fmt.Sprint("f", i))
		}
		canceled := b.create(t, "One", "c")
		b.call(t, "cancel_workflow", canceled)
		b.setNow(t, t0.Add(24*time.Hour))
		for i := 0; i < 2; i++ {
			b.hkFinished(t, fmt.Sprint("g", i))
		}
		require.Equal(t, 5, b.histCount(t, "One", "finished"))
		require.Equal(t, 1, b.histCount(t, "One", "canceled"))

		b.setNow(t, t0.Add(26*time.Hour))
		counts := b.histRound(t, "")
		require.Equal(t, 6, counts.WorkflowsMoved)
		require.Zero(t, counts.WorkflowsCleanedUp)
		require.Equal(t, 5, b.histCount(t, "One", "finished"), "moved, still counted")
		require.Equal(t, 1, b.histCount(t, "One", "canceled"))

		// a retention of a day: the first day's partition ended over a day
		// ago (midnight after t0, 38 hours later); the second's has not
		b.setNow(t, t0.Add(38*time.Hour))
		counts = b.histRound(t, "p_retention => interval '1 day'")
		require.Equal(t, histCounts{WorkflowsCleanedUp: 4, StepExecutionsCleanedUp: 4, PartitionsCreated: 1, PartitionsDropped: 1}, counts)
		require.Equal(t, 2, b.histCount(t, "One", "finished"), "the dropped partition's workflows leave the counts")
		require.Zero(t, b.histCount(t, "One", "canceled"))
		_, err := b.conn.Exec(b.ctx, "select geneva.housekeep()")
		require.NoError(t, err)
		require.Equal(t, 2, b.histCount(t, "One", "finished"), "and stay right once folded")
		require.Equal(t, "gone", b.histWhere(t, canceled))
	})

	t.Run("DropsOrDetachesWholePartitions", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.define(t, "One", `{"steps": [{"name": "only"}]}`)
		first := b.hkFinished(t, "1")
		b.setNow(t, t0.Add(24*time.Hour))
		second := b.hkFinished(t, "2")
		b.setNow(t, t0.Add(26*time.Hour))
		b.histRound(t, "p_keep_forever => true")
		day := func(d int) string { return t0.UTC().Add(time.Duration(d) * 24 * time.Hour).Format("20060102") }
		require.Contains(t, b.histPartitions(t), "workflows_history_"+day(0))
		require.Contains(t, b.histPartitions(t), "workflows_history_"+day(1))

		// detach: the first day's three partitions are left, detached, for
		// geneva archive
		b.setNow(t, t0.Add(38*time.Hour))
		_, err := b.conn.Exec(b.ctx, "select geneva.set_housekeeping_settings(p_archive => 'detach')")
		require.NoError(t, err)
		counts := b.histRound(t, "p_retention => interval '1 day'")
		require.Equal(t, histCounts{WorkflowsCleanedUp: 1, StepExecutionsCleanedUp: 1, PartitionsCreated: 1, PartitionsDetached: 1}, counts)
		require.NotContains(t, b.histPartitions(t), "workflows_history_"+day(0))
		for _, table := range []string{"workflows_history_", "step_executions_history_", "events_history_"} {
			require.True(t, b.histTable(t, table+day(0)), "%s is kept, detached", table)
		}
		var kept int64
		require.NoError(t, b.conn.QueryRow(b.ctx, "select id from geneva.workflows_history_"+day(0)).Scan(&kept))
		require.Equal(t, first, kept)
		require.Equal(t, 1, b.histCount(t, "One", "finished"), "a detached partition's workflows leave the counts")

		// drop: the second day's go
		_, err = b.conn.Exec(b.ctx, "select geneva.set_housekeeping_settings(p_archive => 'drop')")
		require.NoError(t, err)
		b.setNow(t, t0.Add(62*time.Hour))
		counts = b.histRound(t, "p_retention => interval '1 day'")
		require.Equal(t, histCounts{WorkflowsCleanedUp: 1, StepExecutionsCleanedUp: 1, PartitionsCreated: 1, PartitionsDropped: 1}, counts)
		require.Equal(t, "gone", b.histWhere(t, second))
		for _, table := range []string{"workflows_history_", "step_executions_history_", "events_history_"} {
			require.False(t, b.histTable(t, table+day(1)), "%s is dropped", table)
		}
		require.Zero(t, b.histCount(t, "One", "finished"))

		// a workflow still live that ended on the detached partition's day
		// (not yet written out) gets a partition of its own name
		var name string
		_, err = b.conn.Exec(b.ctx, "select geneva._history_partition($1::date)", t0.UTC().Format("2006-01-02"))
		require.NoError(t, err)
		require.NoError(t, b.conn.QueryRow(b.ctx,
			"select partition_name from geneva._history_bounds('workflows_history') where lower_day = $1::date",
			t0.UTC().Format("2006-01-02")).Scan(&name))
		require.Equal(t, "workflows_history_"+day(0)+"_1", name)
	})

	t.Run("PartitionsAheadAndIntervalChange", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0) // a Tuesday
		b.define(t, "One", `{"steps": [{"name": "only"}]}`)
		require.Equal(t, 3, b.histRound(t, "").PartitionsCreated, "today's and the next two days'")
		require.Zero(t, b.histRound(t, "").PartitionsCreated, "there already")

		_, err := b.conn.Exec(b.ctx, "select geneva.set_housekeeping_settings(p_partition_interval => interval '7 days')")
		require.NoError(t, err)
		var interval string
		require.NoError(t, b.conn.QueryRow(b.ctx, "select partition_interval::text from geneva.get_housekeeping_settings()").Scan(&interval))
		require.Equal(t, "7 days", interval)
		b.histRound(t, "")
		bounds := func() []string {
			var out []string
			rows, err := b.conn.Query(b.ctx, "select partition_name, lower_day::text, upper_day::text from geneva._history_bounds('workflows_history')")
			require.NoError(t, err)
			for rows.Next() {
				var name, from, to string
				require.NoError(t, rows.Scan(&name, &from, &to))
				out = append(out, from+".."+to)
			}
			require.NoError(t, rows.Err())
			return out
		}
		// days kept; the rest of their week, then whole weeks from Monday
		require.Equal(t, []string{"2030-01-01..2030-01-02", "2030-01-02..2030-01-03", "2030-01-03..2030-01-04",
			"2030-01-07..2030-01-14", "2030-01-14..2030-01-21"}, bounds(), "the days kept; weeks from Monday after")

		// workflows ending in a week partition move, and go with it
		b.setNow(t, t0.Add(8*24*time.Hour))
		id := b.hkFinished(t, "1")
		b.setNow(t, t0.Add(9*24*time.Hour))
		require.Equal(t, 1, b.histRound(t, "").WorkflowsMoved)
		require.Equal(t, "history", b.histWhere(t, id))
		b.setNow(t, t0.Add(21*24*time.Hour))
		counts := b.histRound(t, "p_retention => interval '1 day'")
		require.Equal(t, 1, counts.WorkflowsCleanedUp)
		require.Equal(t, 5, counts.PartitionsDropped, "the three days, the two weeks")
		require.Equal(t, "gone", b.histWhere(t, id))
	})

	// The live tables' invariants hold across the move.
	t.Run("Invariants", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.define(t, "One", `{"steps": [{"name": "only"}]}`)
		old := b.hkFinished(t, "1")
		b.setNow(t, t0.Add(hours(2)))
		require.Equal(t, 1, b.histRound(t, "").WorkflowsMoved)

		// a hero's new workflow, after its old one moved; and still one
		// ongoing at a time
		fresh := b.create(t, "One", "1")
		require.NotEqual(t, old, fresh)
		_, err := b.tryCreate("One", "1")
		requireCode(t, err, "23505")

		// an idempotency key returns the workflow it created, moved or not
		// (the key outlives the move until its time is up)
		var keyed, again int64
		require.NoError(t, b.conn.QueryRow(b.ctx,
			"select geneva.create_workflow('One', 'User', 'k', p_idempotency_key => 'order-1')").Scan(&keyed))
		b.complete(t, b.run(t, keyed).ExecutionID, "success", nil)
		b.setNow(t, t0.Add(hours(4)))
		require.Equal(t, 1, b.histRound(t, "").WorkflowsMoved)
		require.Equal(t, "history", b.histWhere(t, keyed))
		require.NoError(t, b.conn.QueryRow(b.ctx,
			"select geneva.create_workflow('One', 'User', 'k', p_idempotency_key => 'order-1')").Scan(&again))
		require.Equal(t, keyed, again)
	})

	// A move racing an operator's verb, on real concurrent connections.
	t.Run("RacesWithVerbs", func(t *testing.T) {
		t.Parallel()

		// a verb that holds a member of a tree: the tree waits for a later
		// round, whole
		t.Run("HeldTreeWaits", func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			b.setNow(t, t0)
			b.define(t, "One", `{"steps": [{"name": "only"}]}`)
			root := b.create(t, "One", "root")
			child := b.createChild(t, "One", "child", root)
			b.complete(t, b.run(t, root).ExecutionID, "success", nil)

			// an operator cancels the child, and has not committed
			operator := b.session(t)
			setNowOn(t, operator.conn, t0.Add(hours(2)))
			tx, err := operator.conn.Begin(b.ctx)
			require.NoError(t, err)
			_, err = tx.Exec(b.ctx, "select geneva.cancel_workflow($1)", child)
			require.NoError(t, err)

			b.setNow(t, t0.Add(hours(2)))
			_, err = b.conn.Exec(b.ctx, "set lock_timeout = '3s'")
			require.NoError(t, err)
			require.Zero(t, b.histRound(t, "").WorkflowsMoved, "the child is ongoing in the round's snapshot")
			require.NoError(t, tx.Commit(b.ctx))
			require.Zero(t, b.histRound(t, "").WorkflowsMoved, "the child ended less than move_after ago")
			b.setNow(t, t0.Add(hours(4)))
			require.Equal(t, 2, b.histRound(t, "").WorkflowsMoved)
			require.Equal(t, "history", b.histWhere(t, root))
			require.Equal(t, "history", b.histWhere(t, child))
		})

		// a verb that comes while the move holds the workflow waits, then
		// finds it gone from the live tables, ended as it was
		t.Run("VerbWaitsForTheMove", func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			b.setNow(t, t0)
			b.define(t, "One", `{"steps": [{"name": "only"}]}`)
			id := b.hkFinished(t, "1")
			b.setNow(t, t0.Add(hours(2)))

			tx, err := b.conn.Begin(b.ctx)
			require.NoError(t, err)
			var raw []byte
			require.NoError(t, tx.QueryRow(b.ctx, "select geneva.housekeep()::text").Scan(&raw))
			var counts histCounts
			require.NoError(t, json.Unmarshal(raw, &counts))
			require.Equal(t, 1, counts.WorkflowsMoved)

			operator := b.session(t)
			done := inBackground(func() error {
				_, err := operator.conn.Exec(b.ctx, "select geneva.cancel_workflow($1)", id)
				return err
			})
			b.waitBlocked(t, operator)
			require.NoError(t, tx.Commit(b.ctx))
			err = <-done
			var pgErr *pgconn.PgError
			require.True(t, errors.As(err, &pgErr), "%v", err)
			require.Contains(t, []string{"P0002", "55000"}, pgErr.Code, "not found live, or ended: never canceled")
			var state string
			require.NoError(t, b.conn.QueryRow(b.ctx, "select state from geneva.workflows_history where id = $1", id).Scan(&state))
			require.Equal(t, "finished", state)
		})
	})

	// Two rounds wanting one day's partition: the second waits for the
	// first, then finds it (no 42P07).
	t.Run("OnePartitionCreatorAtATime", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		tx, err := b.conn.Begin(b.ctx)
		require.NoError(t, err)
		_, err = tx.Exec(b.ctx, "select geneva._history_partition('2031-05-05')")
		require.NoError(t, err)
		other := b.session(t)
		done := inBackground(func() error {
			_, err := other.conn.Exec(b.ctx, "select geneva._history_partition('2031-05-05')")
			return err
		})
		b.waitBlocked(t, other)
		require.NoError(t, tx.Commit(b.ctx))
		require.NoError(t, <-done)
		require.Contains(t, b.histPartitions(t), "workflows_history_20310505")
	})

	t.Run("HandWritesAreRefused", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.define(t, "One", `{"steps": [{"name": "only"}]}`)
		id := b.hkFinished(t, "1")
		b.setNow(t, t0.Add(hours(2)))
		require.Equal(t, 1, b.histRound(t, "").WorkflowsMoved)
		partition := "workflows_history_" + t0.UTC().Format("20060102")

		for _, sql := range []string{
			"update geneva.workflows_history set state = 'canceled' where id = $1",
			"delete from geneva.workflows_history where id = $1",
			"update geneva." + partition + " set state = 'canceled' where id = $1",
			"delete from geneva.step_executions_history where workflow_id = $1",
			"insert into geneva.workflows_history select * from geneva.workflows_history where id = $1",
			"insert into geneva.step_executions_history select * from geneva.step_executions_history where workflow_id = $1",
			"update geneva.history_counts set workflows = 0 where $1 > 0",
			"delete from geneva.history_counts where $1 > 0",
			"insert into geneva.history_counts values (current_date, 'One', 'finished', $1, 0)",
		} {
			_, err := b.conn.Exec(b.ctx, sql, id)
			requireCode(t, err, "55000")
		}
		for _, table := range []string{"workflows_history", "step_executions_history", "events_history", "history_counts", partition} {
			_, err := b.conn.Exec(b.ctx, "truncate geneva."+table)
			requireCode(t, err, "55000")
		}
		require.Equal(t, "history", b.histWhere(t, id))
	})

	t.Run("Settings", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		read := func() string {
			var s string
			require.NoError(t, b.conn.QueryRow(b.ctx,
				"select row(partition_interval, move_after, archive)::text from geneva.get_housekeeping_settings()").Scan(&s))
			return s
		}
		require.Equal(t, `("1 day",01:00:00,drop)`, read(), "the defaults")
		_, err := b.conn.Exec(b.ctx, `select geneva.set_housekeeping_settings(p_partition_interval => interval '1 week',
			p_move_after => interval '5 minutes', p_archive => 'detach')`)
		require.NoError(t, err)
		require.Equal(t, `("7 days",00:05:00,detach)`, read())
		_, err = b.conn.Exec(b.ctx, "select geneva.set_housekeeping_settings(p_partition_interval => interval '24 hours')")
		require.NoError(t, err)
		require.Equal(t, `("1 day",00:05:00,detach)`, read(), "24 hours is a day")

		for _, args := range []string{
			"p_partition_interval => interval '2 days'",
			"p_partition_interval => interval '1 month'",
			"p_move_after => interval '-1 second'",
			"p_move_after => interval '1001 years'",
			"p_archive => 'keep'",
			"p_batch_size => 5, p_archive => ''",
		} {
			_, err := b.conn.Exec(b.ctx, "select geneva.set_housekeeping_settings("+args+")")
			requireCode(t, err, "22023")
		}
		require.Equal(t, `("1 day",00:05:00,detach)`, read(), "nothing written")
	})
}
