-- geneva._limit_next: what becomes, when steps end, of the slot each held of
-- its type's concurrency, for its workflow's next step (per element of
-- p_workflow_ids, a workflow moving on, p_moves, after the element of
-- p_execution_ids of kind 'end' of p_kinds, its execution, ended; arrays in
-- the order of p_workflow_ids):
--   carry: the step held that one slot, of its type's concurrency only
--     (geneva._limit_carries), under the key the definition gives the
--     workflow now (geneva._concurrency_key), numbered within the
--     concurrency now, and no one waits for the key: its next step, if
--     started in the same job (geneva._advance_many), keeps the slot;
--   wait: the step held such a slot, its workflow goes on, and the key has
--     waiters and no free slot (geneva._limit_wait_behind): its next step,
--     due now, waits behind them at once, without a job; the slot goes to
--     the oldest waiter (geneva._limit_release, after the move, under the
--     key's lock, which wakes the next step too if the key has room after
--     all);
--   take: the queue of the step, when its worker continues (p_continue) and
--     offers to run a waiter of the key next (p_take_waiters) and someone
--     waits: the queue a waiter must be in to be run next by that worker.
-- Every other slot is freed after the move. Takes no locks.
--
-- Called by: geneva._end_running, when its ended executions held slots.
-- Plans: as geneva._end_running (index lookups by id and key), whose
-- settings it runs under. It has no `set search_path` of its own either
-- (every name in it is qualified, or a built-in of pg_catalog, first in
-- its caller's search_path), since a function's own settings cost a save
-- and a restore at every call.
create or replace function geneva._limit_next(
  p_workflow_ids bigint[],
  p_moves text[],
  p_execution_ids bigint[],
  p_kinds text[],
  p_continue boolean[],
  p_take_waiters boolean,
  out carry_keys text[],
  out wait_keys text[],
  out take_queues text[]
)
language plpgsql
stable
as $$
declare
  v_behind text[];
begin
  -- per workflow, in one pass: the key its step's slot may go on with, the
  -- key its next step may wait behind (when someone waits: checked below),
  -- and the queue of a worker that may run a waiter next
  select
    array_agg(case when s.carries and not s.waiting and s.within then e.limit_keys[1] end order by m.ord),
    array_agg(case when s.carries and s.waiting and s.goes_on then e.limit_keys[1] end order by m.ord),
    array_agg(
      case when s.carries and s.waiting and p_take_waiters and coalesce(x.inline, false)
        then geneva._step_queue(d.step_names, d.step_queues, d.queue, e.step_name)
      end
      order by m.ord
    )
  into carry_keys, wait_keys, take_queues
  from unnest(p_execution_ids, p_kinds, p_continue) as x (execution_id, kind, inline)
  join geneva.step_executions e on e.id = x.execution_id
  join unnest(p_workflow_ids, p_moves) with ordinality as m (workflow_id, move, ord) on m.workflow_id = e.workflow_id
  join geneva.workflows w on w.id = e.workflow_id
  join geneva.workflow_definitions d on d.workflow_type = w.workflow_type
  left join lateral (
    select
      -- (one slot, of its type's concurrency, which is still its only
      -- limit, under the key the concurrency gives the workflow now)
      cardinality(e.limit_keys) = 1
        and geneva._limit_carries(d.definition, d.step_names, e.step_name)
        and e.limit_keys[1] = geneva._concurrency_key(
          d.definition, w.workflow_type, w.group_name, w.hero_type, w.hero_id, w.parent_id
        )
        as carries,
      -- (a range: see geneva._limit_release)
      exists (
        select from geneva.step_executions y
        where y.limit_wait_key >= e.limit_keys[1] and y.limit_wait_key <= e.limit_keys[1]
      ) as waiting,
      -- (numbered within the concurrency now: see geneva.limit_slots; the
      -- key, when it carries, is its type's concurrency's, whose bound is
      -- the definition's, as geneva._limit_capacity reads it)
      (
        select s.slot from geneva.limit_slots s
        where s.limit_key = e.limit_keys[1] and s.workflow_id = e.workflow_id
      ) <= (d.definition -> 'concurrency' ->> 'limit')::integer as within,
      m.move = 'same'
        or m.move in ('next', 'skip') and array_position(d.step_names, e.step_name) < cardinality(d.step_names)
        as goes_on
    where e.limit_keys is not null
    -- (not folded into the aggregates above: each would copy the
    -- expressions it reads, the subqueries with them)
    offset 0
  ) s on true
  where x.kind = 'end';

  -- the keys that have waiters and no free slot, checked once each
  if array_remove(wait_keys, null) <> '{}' then
    v_behind := geneva._limit_wait_behind(wait_keys);
    wait_keys := array(
      select case when k.key = any (v_behind) then k.key end
      from unnest(wait_keys) with ordinality as k (key, ord)
      order by k.ord
    );
  end if;
end;
$$;
