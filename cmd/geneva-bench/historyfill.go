package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// A historyFill writes the growth run's finished workflows: numbers first to
// last (across the run's sizes, so that each workflow has its own), ended
// over the 29 days before now less three hours (past move_after, and past
// the two hours geneva.ended_executions_by_minute keeps), in the
// order of their numbers. Each number g makes the same workflow whichever
// way it is written:
//
//   - its type by g % 100: BenchHistory (3 steps a, b, c) mostly,
//     BenchHistoryPay (5 steps) from 70, BenchHistoryMail (2 steps) from 90,
//     and at 50 a BenchHistoryBatch (2 steps) that is the parent of the
//     BenchHistoryMail children at 47, 48 and 49 (ended before it);
//   - 1 in 10 (g % 10 = 3) had its first step fail once and retried
//     (completed: reattempted_by_exception, *net.OpError), then succeed;
//   - 1 in 20 (g % 20 = 7) was canceled by its last step's error
//     (failed: canceled_by_exception; of class Rare 1 in 1,000, else
//     *errors.errorString); 1 in 100 (g % 100 = 13) canceled by an operator
//     while its last step waited (canceled: canceled_externally, never
//     started); the rest finished;
//   - 1 in 5 (g % 5 = 1) had its second step await an event "paid", which it
//     consumed (half of them sent with a key); 1 in 100 (g % 100 = 21) was
//     sent an event "note" that nothing consumed.
//
// Ids are reserved from the tables' sequences beforehand (8 executions' and 2
// events' ids a workflow, some unused), so that a workflow written straight
// into history and the same workflow written into the live tables and moved
// are the same rows (TestHistoryFillAsMoved).
type historyFill struct {
	first, last                            int64
	now                                    time.Time
	workflowBase, executionBase, eventBase int64
}

// reserveHistoryFill reserves the ids of workflows first..last and makes the
// history partitions of their days (geneva._history_partition, the move's
// own: a move into a day that has none makes it).
func reserveHistoryFill(ctx context.Context, pool *pgxpool.Pool, first, last int64, now time.Time) (*historyFill, error) {
	f := &historyFill{first: first, last: last, now: now}
	n := last - first + 1
	if n <= 0 {
		return f, nil
	}
	err := pool.QueryRow(ctx, `
		select setval(pg_get_serial_sequence('geneva.workflows', 'id'), nextval(pg_get_serial_sequence('geneva.workflows', 'id')) + $1 - 1) - $1 + 1,
		  setval(pg_get_serial_sequence('geneva.step_executions', 'id'), nextval(pg_get_serial_sequence('geneva.step_executions', 'id')) + 8 * $1 - 1) - 8 * $1 + 1,
		  setval(pg_get_serial_sequence('geneva.events', 'id'), nextval(pg_get_serial_sequence('geneva.events', 'id')) + 2 * $1 - 1) - 2 * $1 + 1`,
		n).Scan(&f.workflowBase, &f.executionBase, &f.eventBase)
	if err != nil {
		return nil, fmt.Errorf("reserving ids: %w", err)
	}
	if err := historyPartitions(ctx, pool, now); err != nil {
		return nil, err
	}
	return f, nil
}

// historyPartitions creates the day partitions the fill writes into, the
// 30 days before now (retention's default window), as housekeeping would
// have created them over a month.
func historyPartitions(ctx context.Context, pool *pgxpool.Pool, now time.Time) error {
	_, err := pool.Exec(ctx, `select count(geneva._history_partition(d::date))
		from generate_series((($1::timestamptz - interval '29 days 3 hours') at time zone 'UTC')::date,
		  (($1::timestamptz - interval '3 hours') at time zone 'UTC')::date, interval '1 day') d`, now)
	if err != nil {
		return fmt.Errorf("history partitions: %w", err)
	}
	return nil
}

// fillWorkflows is the fill's workflows lo..hi, one row each, as the CTE w
// (materialized: computed once a statement): g, id, kind, workflow_type,
// state, cancel ('error', 'external' or NULL), retried, steps, n (its
// executions), ended (its end: transitioned_at), and its parent's id for a
// child. Parameters: $1 lo, $2 hi, $3 the fill's first,
// $4 its last, $5 the first's workflow id, $6 its first execution id, $7 its
// first event id, $8 the fill's now.
const fillWorkflows = `w as materialized (
  select g, $5::bigint + (g - $3) as id, k.kind,
    case k.kind when 'plain' then 'BenchHistory' when 'pay' then 'BenchHistoryPay'
      when 'batch' then 'BenchHistoryBatch' else 'BenchHistoryMail' end as workflow_type,
    case when g % 20 = 7 or g % 100 = 13 then 'canceled' else 'finished' end as state,
    case when g % 20 = 7 then 'error' when g % 100 = 13 then 'external' end as cancel,
    g % 10 = 3 as retried,
    s.steps, cardinality(s.steps) + case when g % 10 = 3 then 1 else 0 end as n,
    t.ended,
    case when k.kind = 'child' then $5::bigint + (g - $3) + (50 - g % 100) end as parent_id,
    $6::bigint as execution_base, $7::bigint as event_base -- (every statement names every parameter)
  from generate_series($1::bigint, $2::bigint) g,
    lateral (select case
      when g % 100 = 50 then 'batch'
      when g % 100 between 47 and 49 and g - g % 100 + 50 <= $4 then 'child'
      when g % 100 >= 90 or g % 100 between 47 and 49 then 'mail'
      when g % 100 >= 70 then 'pay'
      else 'plain' end as kind) k,
    lateral (select case k.kind when 'plain' then '{a,b,c}'::text[]
      when 'pay' then '{reserve,charge,notify,ship,close}'::text[]
      when 'batch' then '{fan,join}'::text[] else '{render,send}'::text[] end as steps) s,
    lateral (select $8::timestamptz - interval '3 hours'
      - interval '29 days' * (($4 - g)::float8 / ($4 - $3 + 1)) as ended) t
)`

// fillExecutions is the executions of w, as the CTE x: the k-th (from 0)
// ends 2 s before the k+1-th, the last at the workflow's end; its queue lag
// 1-20 ms and its run time 5-54 ms.
const fillExecutions = `x as materialized (
  select w.*, k, $6::bigint + (w.g - $3) * 8 + k as xid,
    w.steps[case when w.retried then greatest(k, 1) else k + 1 end] as step_name,
    case when w.retried and k = 1 then 2 else 1 end as attempt,
    case when w.retried and k = 0 then 'reattempted'
      when k = w.n - 1 and w.cancel = 'error' then 'error'
      when k = w.n - 1 and w.cancel = 'external' then 'external'
      else 'success' end as how,
    w.ended - (w.n - 1 - k) * interval '2 seconds' as finished,
    ((w.g * 7 + k * 3) % 20 + 1) * interval '1 millisecond' as lag,
    ((w.g * 13 + k * 5) % 50 + 5) * interval '1 millisecond' as run,
    w.g % 5 = 1 and k = 1 as awaited
  from w, generate_series(0, w.n - 1) k
)`

// The columns written, and their values from w and x.
const (
	fillWorkflowColumns = `id, workflow_type, hero_type, hero_id, state, current_step_name, next_step_name,
  allow_multiple, requested_action, created_at, updated_at, started_at, transitioned_at, paused_at,
  finished_at, canceled_at, trace_context, group_name, retried_from, definition_version, started_version,
  parent_id, root_id, children, children_ended, child_key`
	fillWorkflowValues = `w.id, w.workflow_type, 'User', 'history-' || w.g, w.state, null, w.steps[cardinality(w.steps)],
  false, null, w.ended - (w.n - 1) * interval '2 seconds' - ((w.g * 13) % 50 + 5 + (w.g * 7) % 20 + 1) * interval '1 millisecond',
  w.ended, w.ended - (w.n - 1) * interval '2 seconds' - ((w.g * 13) % 50 + 5) * interval '1 millisecond', w.ended, null,
  case when w.state = 'finished' then w.ended end, case when w.state = 'canceled' then w.ended end,
  case when w.g % 2 = 0 then '00-' || lpad(to_hex(w.g), 32, '0') || '-' || lpad(to_hex(w.id), 16, '0') || '-01' end,
  'tenant-' || w.g % 50, null, 1, 1,
  w.parent_id, w.parent_id, case when w.kind = 'batch' then 3 else 0 end, case when w.kind = 'batch' then 3 else 0 end,
  case when w.kind = 'child' then 'mail-' || w.g % 100 end`
	fillExecutionColumns = `id, workflow_id, step_name, attempt, scheduled_for, started_at, job_id, cursor, continues_from_id,
  created_at, await_event, await_from, await_until, await_names, await_after, event_id, limit_keys,
  limit_wait_key, limit_window_at, state, outcome, completed_at, failed_at, canceled_at, skipped_at,
  finished_at, error_class_name, error_message, error_backtrace, error_classes, metadata, updated_at`
	fillExecutionValues = `x.xid, x.id, x.step_name, x.attempt,
  case when x.how = 'external' then x.finished - interval '1 minute' else x.finished - x.run - x.lag end,
  case when x.how <> 'external' then x.finished - x.run end,
  case when x.k = 0 then x.xid end, null, null,
  case when x.how = 'external' then x.finished - interval '1 minute' else x.finished - x.run - x.lag end
    - case when x.k = 0 then interval '0' else interval '2 seconds' - x.run - x.lag end,
  case when x.awaited then 'paid' end,
  case when x.awaited then x.finished - interval '2 seconds' end,
  case when x.awaited then x.finished - interval '2 seconds' + interval '1 hour' end,
  null, null, case when x.awaited then $7::bigint + (x.g - $3) * 2 end,
  null, null, null,
  case x.how when 'error' then 'failed' when 'external' then 'canceled' else 'completed' end,
  case x.how when 'success' then 'success' when 'reattempted' then 'reattempted_by_exception'
    when 'error' then 'canceled_by_exception' else 'canceled_externally' end,
  case when x.how in ('success', 'reattempted') then x.finished end,
  case when x.how = 'error' then x.finished end,
  case when x.how = 'external' then x.finished end, null, x.finished,
  case x.how when 'reattempted' then '*net.OpError'
    when 'error' then case when x.g % 1000 = 7 then 'Rare' else '*errors.errorString' end end,
  case x.how when 'reattempted' then 'dial tcp 10.0.0.7:443: i/o timeout' when 'error' then 'card declined' end,
  case when x.how in ('reattempted', 'error') then E'main.(*Steps).' || x.step_name || E'\n\t/app/steps.go:' || (40 + x.k) end,
  case x.how when 'reattempted' then '{*net.OpError,*os.SyscallError}'::text[]
    when 'error' then array[case when x.g % 1000 = 7 then 'Rare' else '*errors.errorString' end] end,
  '{}', x.finished`
	fillEventColumns = `id, workflow_id, name, payload, sent_at, sent_by, consumed_by, consumed_at, key`
)

// fillEvents is the events of w and x, as the CTE ev (fillEventColumns and
// ended, their workflow's end): the consumed "paid" (x.awaited), sent when
// its step was scheduled; and the unconsumed "note".
const fillEvents = `ev (` + fillEventColumns + `, ended) as (
  select $7::bigint + (x.g - $3) * 2, x.id, 'paid', jsonb_build_object('amount', x.g % 1000),
    x.finished - x.run - x.lag, 'bench', x.xid, x.finished - x.run,
    case when x.g % 10 = 6 then 'delivery-' || x.g end, x.ended
  from x where x.awaited
  union all
  select $7::bigint + (w.g - $3) * 2 + 1, w.id, 'note', '{"text": "fyi"}'::jsonb,
    w.ended - interval '1 second', 'bench', null, null, null, w.ended
  from w where w.g % 100 = 21
)`

// fillDirect writes w, x and ev into history in one statement (w and x
// computed once), with what the move adds to geneva.history_counts and history_event_counts and the
// deltas the live tables' count triggers would have appended.
const fillDirect = `with ` + fillWorkflows + `, ` + fillExecutions + `, ` + fillEvents + `,
iw as (
  insert into geneva.workflows_history (` + fillWorkflowColumns + `, ended_on)
  select ` + fillWorkflowValues + `, (w.ended at time zone 'UTC')::date from w
),
ix as (
  insert into geneva.step_executions_history (` + fillExecutionColumns + `, ended_on)
  select ` + fillExecutionValues + `, (x.ended at time zone 'UTC')::date from x
),
ie as (
  insert into geneva.events_history (` + fillEventColumns + `, ended_on)
  select ` + fillEventColumns + `, (ev.ended at time zone 'UTC')::date from ev
),
-- geneva._move_to_history's upsert, by day, type and state
ic as (
  insert into geneva.history_counts as c (ended_on, workflow_type, state, workflows, step_executions)
  select (w.ended at time zone 'UTC')::date, w.workflow_type, w.state, count(*), sum(w.n)
  from w group by 1, 2, 3 order by 1, 2, 3
  on conflict (ended_on, workflow_type, state) do update
  set workflows = c.workflows + excluded.workflows,
      step_executions = c.step_executions + excluded.step_executions
),
-- and its fold of the events, by day, type and name (geneva.event_stats)
iec as (
  insert into geneva.history_event_counts as c (ended_on, workflow_type, event, sent, consumed, last_sent_at)
  select (ev.ended at time zone 'UTC')::date, w.workflow_type, ev.name, count(*), count(ev.consumed_by), max(ev.sent_at)
  from ev join w on w.id = ev.workflow_id
  group by 1, 2, 3 order by 1, 2, 3
  on conflict (ended_on, workflow_type, event) do update
  set sent = c.sent + excluded.sent,
      consumed = c.consumed + excluded.consumed,
      last_sent_at = greatest(c.last_sent_at, excluded.last_sent_at)
),
-- workflows_count_inserted's deltas, one a type and state
iwd as (
  insert into geneva.ended_workflow_count_deltas (workflow_type, state, delta)
  select w.workflow_type, w.state, count(*) from w group by 1, 2
),
-- step_executions_count_inserted's deltas, one a minute, type, step and
-- outcome, of the executions that ended since geneva._ended_counts_from()
e as (
  select ` + fillExecutionValues + `, x.workflow_type
  from x where x.ended >= geneva._ended_counts_from()
),
ixd as (
  insert into geneva.ended_execution_deltas (minute, workflow_type, step_name, outcome, executions, runs, queue_lag, run_time)
  select date_trunc('minute', e.finished_at, 'UTC'), e.workflow_type, e.step_name, e.outcome, count(*),
    count(e.started_at),
    coalesce(array_agg(geneva._duration_bucket(e.started_at - e.scheduled_for)) filter (where e.started_at is not null), '{}'),
    coalesce(array_agg(geneva._duration_bucket(e.finished_at - e.started_at)) filter (where e.started_at is not null), '{}')
  from e as e (` + fillExecutionColumns + `, workflow_type)
  where e.finished_at >= geneva._ended_counts_from()
  group by 1, 2, 3, 4
)
select`

// historyFillChunk is the workflows written a transaction (a variable for
// the tests).
var historyFillChunk int64 = 100_000

// writeDirect writes the fill's workflows lo..hi straight into history, in
// transactions of historyFillChunk, as geneva._move_to_history would write
// them had they ended in the live tables and been moved: the history rows
// under the day each ended (ended_on, its transitioned_at's UTC date), and
// what the move adds to geneva.history_counts and
// geneva.history_event_counts; and the counts the live tables'
// triggers would have appended when they were inserted ended
// (geneva.ended_workflow_count_deltas: the move is not a deletion, so
// workflow_counts counts them; geneva.ended_execution_deltas for the
// executions that ended since geneva._ended_counts_from()), which
// housekeeping folds. Through the guards' sanctioned settings: geneva.moving
// (the move's, sql/guards/history_guard.sql) and geneva.folding (the folds',
// sql/guards/counts_guard.sql), transaction-local.
func (f *historyFill) writeDirect(ctx context.Context, pool *pgxpool.Pool, lo, hi int64, conns int, progress func(done int64)) error {
	var (
		next, done atomic.Int64
		mu         sync.Mutex
		firstErr   error
		wg         sync.WaitGroup
	)
	next.Store(lo)
	for range max(conns, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				from := next.Add(historyFillChunk) - historyFillChunk
				if from > hi || ctx.Err() != nil {
					return
				}
				to := min(from+historyFillChunk-1, hi)
				err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
					for _, sql := range []string{
						`select set_config('geneva.moving', 'on', true), set_config('geneva.folding', 'on', true), set_config('jit', 'off', true)`,
						fillDirect,
					} {
						if err := fillExec(ctx, tx, sql, f.args(from, to)); err != nil {
							return err
						}
					}
					return nil
				})
				if err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
					next.Store(hi + 1)
					return
				}
				if n := done.Add(to - from + 1); progress != nil {
					mu.Lock()
					progress(n)
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	return firstErr
}

// args are the parameters of the fill's statements, for its workflows
// from..to.
func (f *historyFill) args(from, to int64) []any {
	return []any{from, to, f.first, f.last, f.workflowBase, f.executionBase, f.eventBase, f.now}
}

// writeLive writes the fill's workflows lo..hi into the live tables, ended,
// for housekeeping's move to carry into history (their insert counts them
// as the tables' triggers count any workflow or execution inserted ended).
func (f *historyFill) writeLive(ctx context.Context, pool *pgxpool.Pool, lo, hi int64) error {
	for from := lo; from <= hi; from += historyFillChunk {
		to := min(from+historyFillChunk-1, hi)
		err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			for _, sql := range []string{
				`select set_config('jit', 'off', true)`,
				`insert into geneva.workflows (` + fillWorkflowColumns + `)
with ` + fillWorkflows + `
select ` + fillWorkflowValues + ` from w`,
				`insert into geneva.step_executions (` + fillExecutionColumns + `)
with ` + fillWorkflows + `, ` + fillExecutions + `
select ` + fillExecutionValues + ` from x`,
				// events are inserted by send_event's path only
				`select set_config('geneva.sending', 'on', true)`,
				`insert into geneva.events (` + fillEventColumns + `)
with ` + fillWorkflows + `, ` + fillExecutions + `, ` + fillEvents + `
select ` + fillEventColumns + ` from ev`,
				`select set_config('geneva.sending', '', true)`,
			} {
				if err := fillExec(ctx, tx, sql, f.args(from, to)); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// fillExec runs one of the fill's statements: with the fill's parameters,
// but a setting's.
func fillExec(ctx context.Context, tx pgx.Tx, sql string, args []any) error {
	if strings.HasPrefix(sql, "select set_config") {
		args = nil
	}
	if _, err := tx.Exec(ctx, sql, args...); err != nil {
		return fmt.Errorf("%.70s…: %w", strings.Join(strings.Fields(sql), " "), err)
	}
	return nil
}

// logf prints a line of the growth run's progress.
func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "geneva-bench: growth: "+format+"\n", args...)
}
