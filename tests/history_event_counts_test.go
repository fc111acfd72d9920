package tests

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva"
	"github.com/geneva-dev/geneva/internal/dbtest"
)

// History's events are folded into geneva.history_event_counts by the move
// and taken off it when retention or geneva archive drops (or detaches)
// their partition, so that geneva.event_stats reads no history partition
// (docs/history.md, "Counts and invariants").

// eventStatsFixture makes workflows with events of every kind event_stats
// counts, at t0: an Approval that consumed its event "approved" and was
// sent "other" (pending) before it finished; an Approval canceled with its
// "approved" pending; a Note finished after "noted"; and an Approval that
// stays live, awaiting, with an "other" of its own (its row adds to the
// moved one's, and was sent before it). It returns the ended workflows' ids
// and the live one's, the clock two hours on (past move_after).
func eventStatsFixture(t *testing.T, b *testBundle) ([]int64, int64) {
	t.Helper()
	b.setNow(t, t0)
	b.define(t, "Approval", `{"steps": [{"name": "approve", "await": {"event": "approved", "timeout": "1 day"}}, {"name": "pay"}]}`)
	b.define(t, "Note", `{"steps": [{"name": "only"}]}`)
	send := func(id int64, event string, at time.Duration) {
		t.Helper()
		b.setNow(t, t0.Add(at))
		var sent bool
		require.NoError(t, b.conn.QueryRow(b.ctx, `select geneva.send_event($1, $2, '{"n": 1}')`, id, event).Scan(&sent))
		require.True(t, sent)
	}

	live := b.create(t, "Approval", "live")
	send(live, "other", 5*time.Minute)

	consumed := b.create(t, "Approval", "1")
	send(consumed, "approved", 6*time.Minute)
	b.complete(t, b.run(t, consumed).ExecutionID, "success", nil)
	send(consumed, "other", 10*time.Minute)
	require.Equal(t, "finished", b.complete(t, b.run(t, consumed).ExecutionID, "success", nil).WorkflowState)

	canceled := b.create(t, "Approval", "2")
	send(canceled, "approved", 7*time.Minute)
	b.call(t, "cancel_workflow", canceled)

	note := b.create(t, "Note", "1")
	send(note, "noted", 8*time.Minute)
	require.Equal(t, "finished", b.complete(t, b.run(t, note).ExecutionID, "success", nil).WorkflowState)

	b.setNow(t, t0.Add(hours(2)))
	return []int64{consumed, canceled, note}, live
}

// eventStats reads geneva.event_stats as a reader, a row as text.
func eventStats(t *testing.T, b *testBundle) []string {
	t.Helper()
	return texts(t, b, dbtest.NewConnAs(t, b.conf, dbtest.Reader),
		"select l::text from geneva.event_stats l order by workflow_type, event")
}

// liveEventStats is what event_stats counts of the live tables alone, as
// it counted them before history (what is left once history's partition
// went).
func liveEventStats(t *testing.T, b *testBundle) []string {
	t.Helper()
	return texts(t, b, b.conn, `select l::text from (
		select w.workflow_type, ev.name as event, count(*) as sent, count(ev.consumed_by) as consumed,
			count(*) - count(ev.consumed_by) as pending, max(ev.sent_at) as last_sent_at
		from geneva.events ev join geneva.workflows w on w.id = ev.workflow_id
		group by w.workflow_type, ev.name) l order by workflow_type, event`)
}

// historyEventCounts sums geneva.history_event_counts: rows, sent, consumed.
func historyEventCounts(t *testing.T, b *testBundle) [3]int64 {
	t.Helper()
	var c [3]int64
	require.NoError(t, b.conn.QueryRow(b.ctx, `select count(*), coalesce(sum(sent), 0), coalesce(sum(consumed), 0)
		from geneva.history_event_counts`).Scan(&c[0], &c[1], &c[2]))
	return c
}

func TestHistoryEventCounts(t *testing.T) {
	t.Parallel()

	// event_stats reads the same before and after the move (the moved
	// events folded, the live one's row summed with them), and loses the
	// moved events when retention drops their day.
	t.Run("SameAfterTheMoveUntilRetention", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		ended, live := eventStatsFixture(t, b)
		before := eventStats(t, b)
		require.Equal(t, []string{
			`(Approval,approved,2,1,1,"2030-01-01 12:07:00+00")`,
			`(Approval,other,2,0,2,"2030-01-01 12:10:00+00")`,
			`(Note,noted,1,0,1,"2030-01-01 12:08:00+00")`,
		}, before)

		require.Equal(t, len(ended), b.histRound(t, "").WorkflowsMoved)
		for _, id := range ended {
			require.Equal(t, "history", b.histWhere(t, id))
		}
		require.Equal(t, "live", b.histWhere(t, live))
		require.Equal(t, [3]int64{3, 4, 1}, historyEventCounts(t, b),
			"three rows of the day (Approval approved and other, Note noted): four events, one consumed")
		require.Equal(t, before, eventStats(t, b))
		// (and reads no history partition: its plan names none)
		plan := strings.Join(texts(t, b, b.conn, "explain select * from geneva.event_stats"), "\n")
		require.Contains(t, plan, "history_event_counts")
		require.NotContains(t, plan, "events_history")
		require.NotContains(t, plan, "workflows_history")

		// a second move adds to the day's rows
		b.setNow(t, t0.Add(hours(3)))
		b.call(t, "cancel_workflow", live)
		b.setNow(t, t0.Add(hours(5)))
		require.Equal(t, 1, b.histRound(t, "").WorkflowsMoved)
		require.Equal(t, [3]int64{3, 5, 1}, historyEventCounts(t, b))
		require.Equal(t, before, eventStats(t, b))
		require.Empty(t, liveEventStats(t, b))

		// retention drops the day (30 days, counted in whole days): its
		// events leave
		b.setNow(t, t0.Add(40*24*time.Hour))
		require.Positive(t, b.histRound(t, "").PartitionsDropped)
		require.Empty(t, eventStats(t, b))
		require.Equal(t, [3]int64{0, 0, 0}, historyEventCounts(t, b))
	})

	// With archive = 'detach', retention's detach takes the events off as a
	// drop does (a detached partition is counted no more, as its workflows
	// are not in workflow_counts); geneva archive's drop of it then changes
	// nothing. geneva archive's drop of a partition still attached takes
	// them off itself.
	t.Run("DetachAndArchivesDrop", func(t *testing.T) {
		t.Parallel()
		for _, detach := range []bool{true, false} {
			b := setup(t)
			ended, _ := eventStatsFixture(t, b)
			before := eventStats(t, b)
			require.Equal(t, len(ended), b.histRound(t, "").WorkflowsMoved)
			require.Equal(t, before, eventStats(t, b))
			name := "workflows_history_" + t0.UTC().Format("20060102")

			b.setNow(t, t0.Add(40*24*time.Hour))
			if detach {
				_, err := b.conn.Exec(b.ctx, "select geneva.set_housekeeping_settings(p_archive => 'detach')")
				require.NoError(t, err)
				require.Positive(t, b.histRound(t, "").PartitionsDetached)
				require.True(t, b.histTable(t, name))
				require.Equal(t, liveEventStats(t, b), eventStats(t, b))
			}
			var dropped bool
			require.NoError(t, b.conn.QueryRow(b.ctx, "select geneva.drop_archived_partition($1, $2)", name, len(ended)).Scan(&dropped))
			require.True(t, dropped)
			require.False(t, b.histTable(t, name))
			live := liveEventStats(t, b)
			require.Equal(t, []string{`(Approval,other,1,0,1,"2030-01-01 12:05:00+00")`}, live)
			require.Equal(t, live, eventStats(t, b), "detach %v", detach)
			require.Equal(t, [3]int64{0, 0, 0}, historyEventCounts(t, b))
		}
	})

	// Written by the move, deleted by retention: by hand, refused, the
	// owner's writes too (and TRUNCATE).
	t.Run("HandWritesAreRefused", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		ended, _ := eventStatsFixture(t, b)
		require.Equal(t, len(ended), b.histRound(t, "").WorkflowsMoved)
		before := historyEventCounts(t, b)
		for _, sql := range []string{
			"update geneva.history_event_counts set sent = sent + 1",
			"delete from geneva.history_event_counts",
			"insert into geneva.history_event_counts values ('2030-01-01', 'Note', 'forged', 1, 0, now())",
			"truncate geneva.history_event_counts",
		} {
			_, err := b.conn.Exec(b.ctx, sql)
			requireCode(t, err, "55000")
		}
		require.Equal(t, before, historyEventCounts(t, b))
		// a reader reads event_stats (it reads the table through the view),
		// not the table
		_, err := dbtest.NewConnAs(t, b.conf, dbtest.Reader).Exec(b.ctx, "select * from geneva.history_event_counts")
		requireCode(t, err, "42501")
	})

	// History moved by an earlier Geneva, whose move folded no events: the
	// install (geneva migrate) folds them, once; a database whose 001 had
	// no such table is named as such.
	t.Run("MigrateFoldsEarlierHistory", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		ended, _ := eventStatsFixture(t, b)
		before := eventStats(t, b)
		require.Equal(t, len(ended), b.histRound(t, "").WorkflowsMoved)
		folded := historyEventCounts(t, b)
		// (as an earlier Geneva left it: no row of the day)
		tx, err := b.conn.Begin(b.ctx)
		require.NoError(t, err)
		_, err = tx.Exec(b.ctx, "select set_config('geneva.retention', 'on', true)")
		require.NoError(t, err)
		_, err = tx.Exec(b.ctx, "delete from geneva.history_event_counts")
		require.NoError(t, err)
		require.NoError(t, tx.Commit(b.ctx))
		require.Equal(t, liveEventStats(t, b), eventStats(t, b))

		for range 2 {
			_, err := geneva.Migrate(b.ctx, b.pool, nil)
			require.NoError(t, err)
			require.Equal(t, folded, historyEventCounts(t, b))
			require.Equal(t, before, eventStats(t, b))
		}

		// a database made by an earlier 001, without the table: migrate
		// says so; with the table created as 001 does, it folds them
		_, err = b.conn.Exec(b.ctx, "drop table geneva.history_event_counts cascade")
		require.NoError(t, err)
		_, err = geneva.Migrate(b.ctx, b.pool, nil)
		require.ErrorContains(t, err, "this database was made by an earlier migrations/001_create_schema.sql")
		schema, err := os.ReadFile("../migrations/001_create_schema.sql")
		require.NoError(t, err)
		_, table, ok := strings.Cut(string(schema), "\ncreate table geneva.history_event_counts (")
		require.True(t, ok)
		table, _, ok = strings.Cut(table, "\n);")
		require.True(t, ok)
		_, err = b.conn.Exec(b.ctx, "create table geneva.history_event_counts ("+table+"\n)")
		require.NoError(t, err)
		_, err = geneva.Migrate(b.ctx, b.pool, nil)
		require.NoError(t, err)
		require.Equal(t, folded, historyEventCounts(t, b))
		require.Equal(t, before, eventStats(t, b))
	})
}
