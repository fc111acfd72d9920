-- geneva._lock_executions: locks many executions' workflow rows, then the
-- execution rows, each in id order: the one lock order of every function,
-- so that batches, single calls and operators' calls cannot deadlock.
--
-- p_executions false: the workflows only (an end: geneva._end_running). An
-- execution in progress changes state only under its workflow's lock; what
-- else writes it without that lock (heartbeat_step, checkpoint_step) takes
-- no other lock while it holds the execution's, so the end's update, which
-- locks the row itself, waits for it at most, and never in a cycle. The
-- lock it saves is a WAL record a step (see
-- sql/guards/step_executions_guard_ended.sql). A claim locks its
-- executions: a scheduled one is also changed by the holders of other
-- workflows' locks (geneva._limit_release hands it a slot).
--
-- Called by: geneva._end_running and start_steps, after checking their other
-- arrays, with their execution ids.
-- Raises: 22004 for a NULL id; 22023 for an execution named twice.
-- (Unknown executions are left for the caller's single-call path, which
-- raises P0002.)
create or replace function geneva._lock_executions(p_execution_ids bigint[], p_executions boolean default true)
returns void
language plpgsql
volatile
set search_path = pg_catalog, pg_temp
set plan_cache_mode = force_generic_plan
set enable_seqscan = off
set enable_hashjoin = off
set enable_mergejoin = off
as $$
begin
  if array_position(p_execution_ids, null) is not null then
    raise exception 'execution id must not be null' using errcode = '22004';
  end if;
  if cardinality(p_execution_ids) > 1
    and (select count(distinct x) from unnest(p_execution_ids) x) <> cardinality(p_execution_ids) then
    raise exception 'an execution is named twice' using errcode = '22023';
  end if;

  perform
  from geneva.workflows w
  where w.id in (select e.workflow_id from geneva.step_executions e where e.id = any (p_execution_ids))
  order by w.id
  for no key update of w;
  if p_executions then
    perform
    from geneva.step_executions e
    where e.id = any (p_execution_ids)
    order by e.id
    for no key update of e;
  end if;
end;
$$;
