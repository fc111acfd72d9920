package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/internal/dbtest"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

// TestHistoryFillAsMoved holds the growth run's straight write into history
// to what housekeeping's move writes: the same workflows written straight
// into history in one database, and into the live tables then moved by
// housekeeping in another, leave the same history rows, the same
// history_counts and the same folded counts (workflow_counts, the ended
// executions' minutes and hours), and the history looks like real work.
func TestHistoryFillAsMoved(t *testing.T) {
	ctx := context.Background()
	// the counts of ended executions keep whole hours from 26 hours ago,
	// by the clock at each write and fold: both databases in one hour
	if left := time.Until(time.Now().Truncate(time.Hour).Add(time.Hour)); left < 2*time.Minute {
		time.Sleep(left + time.Second)
	}
	direct, moved := dbtest.NewPool(t), dbtest.NewPool(t)
	now := time.Now().Truncate(time.Microsecond)
	const first, last = 1, 3000
	defer func(chunk int64) { historyFillChunk = chunk }(historyFillChunk)
	historyFillChunk = 700

	f, err := reserveHistoryFill(ctx, direct, first, last, now)
	require.NoError(t, err)
	require.NoError(t, f.writeDirect(ctx, direct, first, 1000, 1, nil))
	require.NoError(t, f.writeDirect(ctx, direct, 1001, last, 2, nil))
	_, err = direct.Exec(ctx, "select geneva.housekeep(p_keep_forever => true)")
	require.NoError(t, err)

	f, err = reserveHistoryFill(ctx, moved, first, last, now)
	require.NoError(t, err)
	require.NoError(t, f.writeLive(ctx, moved, first, last))
	n, err := moveToHistory(ctx, moved)
	require.NoError(t, err)
	require.Equal(t, last-first+1, n)

	for _, q := range []string{
		"select count(*) from geneva.workflows",
		"select jsonb_agg(to_jsonb(w) order by id) from geneva.workflows_history w",
		"select jsonb_agg(to_jsonb(e) order by id) from geneva.step_executions_history e",
		"select jsonb_agg(to_jsonb(e) order by id) from geneva.events_history e",
		"select jsonb_agg(to_jsonb(c) order by ended_on, workflow_type, state) from geneva.history_counts c",
		"select jsonb_agg(to_jsonb(c) order by ended_on, workflow_type, event) from geneva.history_event_counts c",
		"select jsonb_agg(to_jsonb(s) order by workflow_type, event) from geneva.event_stats s",
		"select jsonb_agg(to_jsonb(c) order by workflow_type, state) from geneva.workflow_counts c",
		"select jsonb_agg(to_jsonb(c) order by hour, workflow_type, step_name, outcome) from geneva.ended_executions_by_hour c",
		"select jsonb_agg(to_jsonb(c) order by minute, workflow_type, step_name, outcome) from geneva.ended_executions_by_minute c",
		"select count(*) from geneva.ended_workflow_count_deltas",
		"select count(*) from geneva.ended_execution_deltas",
		"select jsonb_agg(to_jsonb(s) order by workflow_type, step_name) from geneva.step_stats s",
	} {
		var a, b string
		require.NoError(t, direct.QueryRow(ctx, "select coalesce(("+q+")::text, '')").Scan(&a), q)
		require.NoError(t, moved.QueryRow(ctx, "select coalesce(("+q+")::text, '')").Scan(&b), q)
		require.Equal(t, b, a, q)
		if strings.Contains(q, "jsonb_agg") && !strings.Contains(q, "by_minute") { // (minutes are kept 2 hours: none)
			require.NotEmpty(t, a, q)
		}
	}

	// what the reads will meet: several types, executions a workflow,
	// errors, cancels, events, children, days
	var types, days, canceled, rare, retried, failed, events, pending, children int
	var executions float64
	require.NoError(t, direct.QueryRow(ctx, `select
		(select count(distinct workflow_type) from geneva.workflows_history),
		(select count(distinct ended_on) from geneva.workflows_history),
		(select count(*) from geneva.workflows_history where state = 'canceled'),
		(select count(*) from geneva.step_executions_history where error_class_name = 'Rare'),
		(select count(*) from geneva.step_executions_history where outcome = 'reattempted_by_exception'),
		(select count(*) from geneva.step_executions_history where state = 'failed'),
		(select count(*) from geneva.events_history where consumed_by is not null),
		(select count(*) from geneva.events_history where consumed_by is null),
		(select count(*) from geneva.workflows_history w join geneva.workflows_history p on p.id = w.parent_id and p.children = 3),
		(select count(*)::float8 / (select count(*) from geneva.workflows_history) from geneva.step_executions_history)`).
		Scan(&types, &days, &canceled, &rare, &retried, &failed, &events, &pending, &children, &executions))
	require.Equal(t, 4, types)
	require.GreaterOrEqual(t, days, 30)
	require.Equal(t, 150+30, canceled) // 1 in 20 by an error, 1 in 100 by an operator
	require.Equal(t, 3, rare)
	require.Equal(t, 300, retried)
	require.Equal(t, 150, failed)
	require.Equal(t, 600, events)
	require.Equal(t, 30, pending)
	require.Equal(t, 90, children)
	require.InDelta(t, 3.3, executions, 0.3)
}
