package tests

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// blockerRow is a row of geneva.workflow_blockers, as its reader sees it.
type blockerRow struct {
	WorkflowID      int64
	ExecutionID     int64
	Reason          string
	HeldUntil       *time.Time
	Event           *string
	LimitKind       *string
	LimitName       *string
	Key             *string
	InProgress      *int64
	Concurrency     *int32
	Position        *int64
	Waiting         *int64
	StartsInWindow  *int64
	Rate            *int32
	Per             *time.Duration
	Queue           *string
	QueueReportedAt *time.Time
	QueuePausedAt   *time.Time
	LastFetchedAt   *time.Time
}

func (b *testBundle) blockers(t *testing.T, workflowID int64) []blockerRow {
	t.Helper()
	return viewRows[blockerRow](t, b, `select workflow_id, execution_id, reason, held_until, event,
		limit_kind, limit_name, key, in_progress, concurrency, position, waiting,
		starts_in_window, rate, per, queue, queue_reported_at, queue_paused_at, last_fetched_at
		from geneva.workflow_blockers where workflow_id = $1 order by reason, key`, workflowID)
}

// reportQueue records, as a River producer does at its start and every 10
// minutes after, that a worker works the queue (updated_at).
func (b *testBundle) reportQueue(t *testing.T, queue string, at time.Time, paused bool) {
	t.Helper()
	var pausedAt *time.Time
	if paused {
		pausedAt = &at
	}
	_, err := b.conn.Exec(b.ctx, `insert into public.river_queue (name, created_at, updated_at, paused_at, metadata)
		values ($1, $2, $2, $3, '{}')
		on conflict (name) do update set updated_at = excluded.updated_at, paused_at = excluded.paused_at`,
		queue, at, pausedAt)
	require.NoError(t, err)
}

func TestWorkflowBlockers(t *testing.T) {
	t.Parallel()

	// The queue branch probes River's last fetch once a queue that no
	// worker serves, after the distinct: planned per definition's queue, its
	// estimate passed jit_above_cost (411,000 on a fresh database), and
	// every read of one workflow's blockers (its dashboard page) compiled
	// 186 functions: half a second.
	t.Run("PlannedUnderJIT", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		for _, q := range []string{
			"select * from geneva.workflow_blockers where workflow_id = 1",
			"select * from geneva.workflow_blockers",
		} {
			var cost, jitAbove float64
			require.NoError(t, b.pool.QueryRow(b.ctx, "select current_setting('jit_above_cost')::float8").Scan(&jitAbove))
			var plan []map[string]map[string]any
			require.NoError(t, b.pool.QueryRow(b.ctx, "explain (format json) "+q).Scan(&plan))
			cost = plan[0]["Plan"]["Total Cost"].(float64)
			require.Less(t, cost, jitAbove, q)
		}
	})

	t.Run("ItsWaitHasNotPassed", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.reportQueue(t, "default", t0, false)
		b.define(t, "Waits", `{"steps": [{"name": "a", "wait": "1 hour"}]}`)
		id := b.create(t, "Waits", "1")
		e := b.active(t, id).ID
		require.Equal(t, []blockerRow{{WorkflowID: id, ExecutionID: e, Reason: "wait", HeldUntil: ptr(t0.Add(time.Hour))}},
			b.blockers(t, id))

		b.setNow(t, t0.Add(time.Hour))
		b.reportQueue(t, "default", t0.Add(time.Hour), false)
		require.Empty(t, b.blockers(t, id), "due on a served queue: in its queue's line")
		b.call(t, "pause_workflow", id)
		b.setNow(t, t0)
		require.Empty(t, b.blockers(t, id), "a paused workflow is not listed")
	})

	t.Run("AnAwaitedEventAsAwaitingEventsHasIt", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.reportQueue(t, "default", t0, false)
		b.define(t, "Awaits", `{"steps": [{"name": "a", "await": {"event": "go", "timeout": "48 hours"}}]}`)
		b.define(t, "EarlyEvent", `{"steps": [{"name": "a", "wait": "1 hour", "await": {"event": "go", "timeout": "48 hours"}}]}`)
		id := b.create(t, "Awaits", "1")
		early := b.create(t, "EarlyEvent", "1")
		require.Equal(t, []blockerRow{{WorkflowID: id, ExecutionID: b.active(t, id).ID, Reason: "event",
			HeldUntil: ptr(t0.Add(48 * time.Hour)), Event: ptr("go")}}, b.blockers(t, id))
		type awaited struct {
			ExecutionID int64
			TimeoutAt   *time.Time
		}
		require.Equal(t, viewRows[awaited](t, b, `select execution_id, timeout_at from geneva.awaiting_events
			where workflow_state = 'ready' order by execution_id`),
			viewRows[awaited](t, b, `select execution_id, held_until from geneva.workflow_blockers
			where reason = 'event' order by execution_id`), "the same steps as geneva.awaiting_events")

		// an event come during the step's own wait: its wait holds it
		_, err := b.conn.Exec(b.ctx, "select geneva.send_event($1, 'go')", early)
		require.NoError(t, err)
		require.Equal(t, []blockerRow{{WorkflowID: early, ExecutionID: b.active(t, early).ID, Reason: "wait",
			HeldUntil: ptr(t0.Add(time.Hour))}}, b.blockers(t, early))
		_, err = b.conn.Exec(b.ctx, "select geneva.send_event($1, 'go')", id)
		require.NoError(t, err)
		require.Empty(t, b.blockers(t, id), "its event came: due")
	})

	t.Run("AConcurrencyKeyInProgressOfItsLimitAndThePlaceInLine", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.reportQueue(t, "default", t0, false)
		b.define(t, "Sync", `{"concurrency": {"by": "group", "limit": 2}, "steps": [{"name": "a"}]}`)
		var ids []int64
		for i := range 5 {
			id := b.createIn(t, "Sync", fmt.Sprint(i), "acme")
			ids = append(ids, id)
			b.startStep(t, b.active(t, id).ID, nil)
		}
		for i, id := range ids[2:] {
			require.Equal(t, []blockerRow{{WorkflowID: id, ExecutionID: b.active(t, id).ID, Reason: "concurrency",
				LimitKind: ptr("concurrency"), LimitName: ptr("Sync"), Key: ptr("acme"),
				InProgress: ptr(int64(2)), Concurrency: ptr(int32(2)), Position: ptr(int64(i + 1)), Waiting: ptr(int64(3))}},
				b.blockers(t, id))
		}
		require.Empty(t, b.blockers(t, ids[0]), "in progress")

		// a paused waiter leaves the line: those behind it move up
		b.call(t, "pause_workflow", ids[2])
		got := b.blockers(t, ids[4])
		require.Len(t, got, 1)
		require.Equal(t, int64(2), *got[0].Position)
		require.Equal(t, int64(2), *got[0].Waiting)

		// a named limit's key
		_, err := b.conn.Exec(b.ctx, "select geneva.define_limit('stripe_api', p_concurrency => 1)")
		require.NoError(t, err)
		b.define(t, "Charge", `{"steps": [{"name": "charge", "limits": ["stripe_api"]}]}`)
		first, second := b.create(t, "Charge", "1"), b.create(t, "Charge", "2")
		b.run(t, first)
		_, ok := b.startStep(t, b.active(t, second).ID, nil)
		require.False(t, ok)
		require.Equal(t, []blockerRow{{WorkflowID: second, ExecutionID: b.active(t, second).ID, Reason: "concurrency",
			LimitKind: ptr("limit"), LimitName: ptr("stripe_api"), Key: ptr(""),
			InProgress: ptr(int64(1)), Concurrency: ptr(int32(1)), Position: ptr(int64(1)), Waiting: ptr(int64(1))}},
			b.blockers(t, second))
	})

	t.Run("ARateWindowWhenItFreesAndLimitUsageCountsItWaiting", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.reportQueue(t, "default", t0, false)
		// one key for all: "mail" allows 3 starts an hour
		_, err := b.conn.Exec(b.ctx, "select geneva.define_limit('mail', p_rate => 3, p_per => '1 hour')")
		require.NoError(t, err)
		b.define(t, "Call", `{"rate_limit": {"by": "type", "limit": 2, "per": "1 minute"},
			"steps": [{"name": "a", "limits": ["mail"]}]}`)
		var ids []int64
		for i := range 5 {
			id := b.create(t, "Call", fmt.Sprint(i))
			ids = append(ids, id)
			b.startStep(t, b.active(t, id).ID, nil)
		}
		// two start now; the third in the next minute's window (the third of
		// "mail"'s hour); the 4th and 5th in the next hour's
		held := func(id int64, at time.Time) []blockerRow {
			e := b.active(t, id).ID
			return []blockerRow{
				{WorkflowID: id, ExecutionID: e, Reason: "rate_limit", HeldUntil: ptr(at), LimitKind: ptr("limit"),
					LimitName: ptr("mail"), Key: ptr(""), StartsInWindow: ptr(int64(3)), Rate: ptr(int32(3)), Per: ptr(time.Hour)},
				{WorkflowID: id, ExecutionID: e, Reason: "rate_limit", HeldUntil: ptr(at), LimitKind: ptr("rate_limit"),
					LimitName: ptr("Call"), Key: ptr("Call"), StartsInWindow: ptr(int64(2)), Rate: ptr(int32(2)), Per: ptr(time.Minute)},
			}
		}
		require.Empty(t, b.blockers(t, ids[0]))
		require.Equal(t, held(ids[2], t0.Add(time.Minute)), b.blockers(t, ids[2]))
		require.Equal(t, held(ids[3], t0.Add(time.Hour)), b.blockers(t, ids[3]))
		require.Equal(t, held(ids[4], t0.Add(time.Hour)), b.blockers(t, ids[4]))

		// geneva.limit_usage counts them waiting, each under its keys
		require.Equal(t, []usageRow{
			{"limit", "mail", "", 0, 3, 3, nil, ptr(int32(3))},
			{"rate_limit", "Call", "Call", 0, 3, 2, nil, ptr(int32(2))},
		}, b.limitUsage(t))
		b.setNow(t, t0.Add(time.Minute))
		require.Empty(t, b.blockers(t, ids[2]), "its window has begun")
		require.Equal(t, int64(2), b.limitUsage(t)[1].Waiting)
	})

	t.Run("AQueueNoWorkerServes", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.define(t, "Billing", `{"steps": [{"name": "charge"}], "queue": "billing"}`)
		id := b.create(t, "Billing", "1")
		e := b.active(t, id).ID
		only := func(reportedAt, pausedAt, fetchedAt *time.Time) []blockerRow {
			return []blockerRow{{WorkflowID: id, ExecutionID: e, Reason: "queue", Queue: ptr("billing"),
				QueueReportedAt: reportedAt, QueuePausedAt: pausedAt, LastFetchedAt: fetchedAt}}
		}
		require.Equal(t, only(nil, nil, nil), b.blockers(t, id), "no worker ever reported it")

		// a worker fetched from it 20 minutes ago, and has not reported since
		_, err := b.conn.Exec(b.ctx, `insert into public.river_job (args, kind, max_attempts, queue, state, attempt, attempted_at, finalized_at)
			values ('{}', 'geneva_step', 25, 'billing', 'completed', 1, $1, $1)`, t0.Add(-20*time.Minute))
		require.NoError(t, err)
		b.reportQueue(t, "billing", t0.Add(-16*time.Minute), false)
		require.Equal(t, only(ptr(t0.Add(-16*time.Minute)), nil, ptr(t0.Add(-20*time.Minute))), b.blockers(t, id))

		b.reportQueue(t, "billing", t0.Add(-14*time.Minute), false)
		require.Empty(t, b.blockers(t, id), "reported within 15 minutes: served")

		b.reportQueue(t, "billing", t0.Add(-time.Minute), true)
		require.Equal(t, only(ptr(t0.Add(-time.Minute)), ptr(t0.Add(-time.Minute)), ptr(t0.Add(-20*time.Minute))),
			b.blockers(t, id), "paused in River: no one fetches")
	})

	// docs/operating.md's queries, on a waiter of a concurrency key
	t.Run("TheOperatingPagesQueries", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.setNow(t, t0)
		b.define(t, "Sync", `{"concurrency": {"by": "type", "limit": 1}, "steps": [{"name": "a"}]}`)
		running, waiter := b.create(t, "Sync", "1"), b.create(t, "Sync", "2")
		b.run(t, running)
		_, ok := b.startStep(t, b.active(t, waiter).ID, nil)
		require.False(t, ok)

		page, err := os.ReadFile("../docs/operating.md")
		require.NoError(t, err)
		text := string(page)
		start := strings.Index(text, "## Why a ready workflow is not moving")
		require.GreaterOrEqual(t, start, 0)
		text = text[start:]
		text = text[strings.Index(text, "```sql\n")+len("```sql\n"):]
		block := text[:strings.Index(text, "```")]
		statements := strings.Split(strings.TrimSpace(block), ";")
		require.Len(t, statements, 3, "two statements")

		type why struct {
			Reason          string
			StepName        string
			HeldUntil       *time.Time
			Event           *string
			LimitName       *string
			Key             *string
			InProgress      *int64
			Concurrency     *int32
			Position        *int64
			Waiting         *int64
			StartsInWindow  *int64
			Rate            *int32
			Per             *time.Duration
			Queue           *string
			QueueReportedAt *time.Time
			LastFetchedAt   *time.Time
		}
		require.Contains(t, statements[0], "workflow_id = 42")
		require.Equal(t, []why{{Reason: "concurrency", StepName: "a", LimitName: ptr("Sync"), Key: ptr("Sync"),
			InProgress: ptr(int64(1)), Concurrency: ptr(int32(1)), Position: ptr(int64(1)), Waiting: ptr(int64(1))}},
			viewRows[why](t, b, strings.Replace(statements[0], "workflow_id = 42", fmt.Sprint("workflow_id = ", waiter), 1)))
		type count struct {
			Reason string
			What   string
			Count  int64
		}
		require.Equal(t, []count{{"concurrency", "Sync", 1}}, viewRows[count](t, b, statements[1]))
	})
}
