-- geneva._limit_wait_behind: the concurrency key a new execution of a step
-- waits for at once, behind the key's waiters, or NULL when it gets its job
-- and its claim decides. It waits when the step is held to its type's
-- concurrency only (geneva._limit_carries) and the key is full and has
-- executions waiting already: so that a busy key's new work does not fill
-- River's queue ahead of other keys' (fairness) nor cost a fetch and a claim
-- to find the key full.
--
-- Called by: geneva._schedule_step, geneva.create_workflows, for a step due
-- now that awaits no event (they check that). It takes no lock: the caller's
-- transaction, an application's, may be long, and no worker's end may wait
-- for it. So a wake-up can be missed: if every slot of the key frees and
-- every waiter ahead runs and ends before the caller commits, no free sees
-- the new waiter, and housekeeping's backstop (geneva.housekeep offers every
-- key with waiters its free slots) wakes it at its next round.
-- Raises: nothing.
-- Plans: no bitmap scans (enable_bitmapscan off; see geneva.limit_slots).
create or replace function geneva._limit_wait_behind(
  p_definition geneva.workflow_definitions,
  p_step_name text,
  p_workflow_type text,
  p_group text,
  p_hero_type text,
  p_hero_id text
)
returns text
language plpgsql
stable
set search_path = pg_catalog, pg_temp
set enable_bitmapscan = off
as $$
declare
  v_key text;
begin
  if array_position(p_definition.step_names, p_step_name) is null
    or not geneva._limit_carries(p_definition.definition, p_definition.step_names, p_step_name) then
    return null;
  end if;
  v_key := geneva._limit_key(
    'concurrency', p_workflow_type, p_definition.definition -> 'concurrency' ->> 'by',
    p_workflow_type, p_group, p_hero_type, p_hero_id
  );
  -- (the key as a range: see geneva._limit_release)
  if exists (
    select from geneva.step_executions x
    where x.limit_wait_key >= v_key and x.limit_wait_key <= v_key
  ) and (select count(*) from geneva.limit_slots ls where ls.limit_key = v_key)
    >= coalesce(geneva._limit_capacity(v_key), 2147483647) then
    return v_key;
  end if;
  return null;
end;
$$;
