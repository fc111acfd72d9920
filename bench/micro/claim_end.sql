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
-- It creates the workflows (not counted), then repeats until every step has
-- run: claim a batch of due executions, end them (and, inline, end the steps
-- they started, until the workflows finish), each call its own transaction.
-- It prints µs a step (the loop's time over the steps run) and WAL bytes a
-- step; track_functions lets run.sh read each function's own time.
\set ON_ERROR_STOP on
set track_functions = 'all';
select geneva.create_workflow('micro', 'Micro', 'm' || g) from generate_series(1, :workflows) g \g /dev/null
checkpoint;
select pg_stat_reset() \g /dev/null
select set_config('micro.batch', :'batch', false), set_config('micro.inline', :'inline', false) \g /dev/null
do $$
declare
  v_batch integer := current_setting('micro.batch')::integer;
  v_inline boolean := current_setting('micro.inline')::boolean;
  v_ids bigint[];
  v_next bigint[];
  v_last bigint := 0;
  v_steps integer := 0;
  v_calls integer := 0;
  v_start timestamptz := clock_timestamp();
  v_wal pg_lsn := pg_current_wal_insert_lsn();
begin
  loop
    -- (from the last one taken: a scan from the first would pass every
    -- ended execution each time, the loop's own cost growing with the run)
    select array_agg(e.id order by e.id) into v_ids
    from (
      select e.id from geneva.step_executions e
      where e.state = 'scheduled' and e.id > v_last order by e.id limit v_batch
    ) e;
    exit when v_ids is null;
    v_last := v_ids[cardinality(v_ids)];
    select array_agg(s.execution_id order by s.ordinality) into v_ids
    from geneva.start_steps(v_ids, array_fill(null::text, array[cardinality(v_ids)])) s;
    commit;
    loop
      v_steps := v_steps + cardinality(v_ids);
      v_calls := v_calls + 1;
      select array_agg(c.next_execution_id order by c.ordinality) filter (where c.next_execution_id is not null)
      into v_next
      from geneva.complete_steps(
        v_ids,
        array_fill('success'::text, array[cardinality(v_ids)]),
        array_fill(null::interval, array[cardinality(v_ids)]),
        array_fill(null::bigint, array[cardinality(v_ids)]),
        array_fill(v_inline, array[cardinality(v_ids)])
      ) c;
      commit;
      exit when v_next is null;
      v_ids := v_next;
    end loop;
  end loop;
  raise notice 'steps=% complete_steps_calls=% us_per_step=% wal_bytes_per_step=%',
    v_steps, v_calls,
    round(extract(epoch from clock_timestamp() - v_start) * 1e6 / v_steps),
    round((pg_current_wal_insert_lsn() - v_wal) / v_steps);
end
$$;
