-- One connection claims and ends steps the way the worker does, with nothing
-- else running: what the claim and end path costs PostgreSQL, without River,
-- the worker or other sessions in the way. Run by bench/micro/run.sh, which
-- sets the variables:
--   workflows  how many workflows of the type "micro" (five no-op steps) to create
--   batch      how many executions each start_steps and complete_steps call takes
--   inline     true: each end starts the next step in the same call
--              (complete_steps with continue, as Config.InlineSteps does);
--              false: each step is claimed by start_steps after the step
--              before it ended (every step its own claim, as for a step with a wait)
--   groups     0, or how many groups the workflows are spread over (a
--              workflow's group is its number modulo groups), for a type
--              whose concurrency is by group
-- It creates the workflows (not counted), then takes them a batch at a time
-- until each batch has finished: claim their due executions, end them (and,
-- inline, end the steps those calls started), claim the next (those due:
-- not those waiting for a slot of a limit), each call its own transaction.
-- It prints µs a step (the loop's time over the steps run) and WAL bytes a
-- step; track_functions lets run.sh read each function's own time.
\set ON_ERROR_STOP on
set track_functions = 'all';
select geneva.create_workflow('micro', 'Micro', 'm' || g, p_group => case when :groups > 0 then 'g' || g % :groups end)
from generate_series(1, :workflows) g \g /dev/null
checkpoint;
-- (this session's function counts so far flushed first, then reset)
select pg_stat_force_next_flush() \g /dev/null
select pg_stat_reset() \g /dev/null
select set_config('micro.batch', :'batch', false), set_config('micro.inline', :'inline', false) \g /dev/null
do $$
declare
  v_batch integer := current_setting('micro.batch')::integer;
  v_inline boolean := current_setting('micro.inline')::boolean;
  v_first bigint;
  v_last bigint;
  v_workflows bigint[];
  v_ids bigint[];
  v_next bigint[];
  v_steps integer := 0;
  v_calls integer := 0;
  v_start timestamptz := clock_timestamp();
  v_wal pg_lsn := pg_current_wal_insert_lsn();
  -- (a schema before complete_steps' p_take_waiters is called without it)
  v_take boolean := exists (
    select from pg_proc p
    where p.oid = 'geneva.complete_steps'::regproc and 'p_take_waiters' = any (p.proargnames)
  );
begin
  select min(w.id), max(w.id) into v_first, v_last from geneva.workflows w;
  -- the workflows a batch at a time, each batch through all its steps (the
  -- executions read by their workflows, through the index of active ones:
  -- a scan for every scheduled execution would cost the loop more as the
  -- run goes on)
  for v_batch_start in v_first .. v_last by v_batch loop
    select array_agg(w.id order by w.id) into v_workflows
    from geneva.workflows w
    where w.id >= v_batch_start and w.id < v_batch_start + v_batch;
    loop
      select array_agg(e.id order by e.id) into v_ids
      from geneva.step_executions e
      where e.workflow_id = any (v_workflows) and e.state in ('scheduled', 'in_progress') and e.state = 'scheduled'
        and e.limit_wait_key is null;
      exit when v_ids is null;
      select array_agg(s.execution_id order by s.ordinality) into v_ids
      from geneva.start_steps(v_ids, array_fill(null::text, array[cardinality(v_ids)])) s;
      commit;
      loop
        v_steps := v_steps + cardinality(v_ids);
        v_calls := v_calls + 1;
        if v_take then
          -- (as the worker calls it: a waiter of a full key may be taken)
          select array_agg(c.next_execution_id order by c.ordinality) filter (where c.next_execution_id is not null)
          into v_next
          from geneva.complete_steps(
            v_ids,
            array_fill('success'::text, array[cardinality(v_ids)]),
            array_fill(null::interval, array[cardinality(v_ids)]),
            array_fill(null::bigint, array[cardinality(v_ids)]),
            array_fill(v_inline, array[cardinality(v_ids)]),
            true
          ) c;
        else
          select array_agg(c.next_execution_id order by c.ordinality) filter (where c.next_execution_id is not null)
          into v_next
          from geneva.complete_steps(
            v_ids,
            array_fill('success'::text, array[cardinality(v_ids)]),
            array_fill(null::interval, array[cardinality(v_ids)]),
            array_fill(null::bigint, array[cardinality(v_ids)]),
            array_fill(v_inline, array[cardinality(v_ids)])
          ) c;
        end if;
        commit;
        exit when v_next is null;
        v_ids := v_next;
      end loop;
    end loop;
    -- (every step of the batch ran: none is left waiting for a slot)
    if exists (
      select from geneva.step_executions e
      where e.workflow_id = any (v_workflows) and e.state in ('scheduled', 'in_progress')
    ) then
      raise exception 'workflows % did not finish', v_workflows;
    end if;
  end loop;
  raise notice 'steps=% complete_steps_calls=% us_per_step=% wal_bytes_per_step=%',
    v_steps, v_calls,
    round(extract(epoch from clock_timestamp() - v_start) * 1e6 / v_steps),
    round((pg_current_wal_insert_lsn() - v_wal) / v_steps);
end
$$;
