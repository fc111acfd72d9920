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
  p_take_waiters boolean
)
returns table (carry_keys text[], wait_keys text[], take_queues text[])
language plpgsql
stable
as $$
begin
  return query
  with n as materialized (
    select m.ord, e.limit_keys[1] as key, x.inline,
      geneva._step_queue(d.step_names, d.step_queues, d.queue, e.step_name) as queue,
      -- (the key, when it carries, is its type's concurrency's: its bound
      -- is the definition's, as geneva._limit_capacity reads it)
      (d.definition -> 'concurrency' ->> 'limit')::integer as capacity,
      -- (one slot, of its type's concurrency, which is still its only
      -- limit, under the key the concurrency gives the workflow now)
      cardinality(e.limit_keys) = 1
        and geneva._limit_carries(d.definition, d.step_names, e.step_name)
        and e.limit_keys[1] = geneva._concurrency_key(
          d.definition, w.workflow_type, w.group_name, w.hero_type, w.hero_id
        )
        as carries,
      m.move = 'same'
        or m.move in ('next', 'skip') and array_position(d.step_names, e.step_name) < cardinality(d.step_names)
        as goes_on
    from unnest(p_execution_ids, p_kinds, p_continue) as x (execution_id, kind, inline)
    join geneva.step_executions e on e.id = x.execution_id
    join unnest(p_workflow_ids, p_moves) with ordinality as m (workflow_id, move, ord) on m.workflow_id = e.workflow_id
    join geneva.workflows w on w.id = e.workflow_id
    join geneva.workflow_definitions d on d.workflow_type = w.workflow_type
    where x.kind = 'end'
  ),
  k as materialized (
    select c.key,
      -- (a range: see geneva._limit_release)
      exists (
        select from geneva.step_executions y
        where y.limit_wait_key >= c.key and y.limit_wait_key <= c.key
      ) as waiting
    from (select distinct n.key from n where n.carries) c
  ),
  -- (the keys its next steps wait for, checked once)
  behind as materialized (
    select case when count(*) > 0 then geneva._limit_wait_behind(array_agg(k.key)) end as keys
    from k
    where k.waiting and exists (select from n where n.key = k.key and n.goes_on)
  )
  select
    array_agg(
      case when n.carries and not k.waiting and (
        -- (numbered within the concurrency now: see geneva.limit_slots)
        select s.slot from geneva.limit_slots s
        where s.limit_key = n.key and s.workflow_id = p_workflow_ids[n.ord]
      ) <= n.capacity then n.key end
      order by n.ord
    ),
    array_agg(case when n.carries and n.goes_on and n.key = any (b.keys) then n.key end order by n.ord),
    array_agg(
      case when n.carries and k.waiting and p_take_waiters and coalesce(n.inline, false) then n.queue end
      order by n.ord
    )
  from n
  left join k on k.key = n.key
  cross join behind b;
end;
$$;
