-- geneva._history_retention: retention of history (docs/history.md): every
-- history partition whose interval ended (its upper bound, midnight UTC)
-- before p_before (now - retention) goes whole, the three tables' partitions
-- of that interval together: dropped (p_archive 'drop'), or detached
-- (p_archive 'detach') and left in schema geneva under their names for
-- geneva archive to write out and drop. No row is deleted one by one.
--
-- What a partition held leaves geneva.workflow_counts: its counts by type
-- and state (geneva.history_counts, kept by the move: the partition itself
-- is not read) are taken off, and its rows of history_counts deleted; its
-- events leave geneva.event_stats (their rows of history_event_counts
-- deleted): geneva._history_forget.
--
-- Locks: the three history parents, ACCESS EXCLUSIVE (as DROP and DETACH
-- of a partition take them), asked for without waiting: when a reader of
-- history holds one, nothing is dropped this round (the next round tries
-- again) rather than queueing every reader and the move behind the drop.
-- The live tables are not locked: claims and ends never wait for it.
-- Called by: geneva.housekeep.
-- Returns the partitions (intervals) dropped or detached, and the workflows
-- and executions they held.
create or replace function geneva._history_retention(p_before timestamptz, p_archive text)
returns table (partitions integer, workflows bigint, step_executions bigint)
language plpgsql
volatile
set search_path = pg_catalog, pg_temp
as $$
declare
  v_part record;
  v_table text;
  v_name text;
  v_partitions integer := 0;
  v_workflows bigint := 0;
  v_executions bigint := 0;
  v_w bigint;
  v_e bigint;
begin
  if not exists (
    select from geneva._history_bounds('workflows_history') b
    where (b.upper_day::timestamp at time zone 'UTC') <= p_before
  ) then
    return query select 0, 0::bigint, 0::bigint;
    return;
  end if;

  begin
    lock table geneva.workflows_history, geneva.step_executions_history, geneva.events_history
      in access exclusive mode nowait;
  exception when lock_not_available then
    return query select 0, 0::bigint, 0::bigint;
    return;
  end;

  for v_part in
    select b.lower_day, b.upper_day
    from geneva._history_bounds('workflows_history') b
    where (b.upper_day::timestamp at time zone 'UTC') <= p_before
    order by b.lower_day
  loop
    -- the counts: what the partition held leaves workflow_counts
    select f.workflows, f.step_executions into v_w, v_e
    from geneva._history_forget(v_part.lower_day, v_part.upper_day) f;

    -- the partitions of that interval, the three tables'
    foreach v_table in array array['events_history', 'step_executions_history', 'workflows_history'] loop
      select b.partition_name into v_name
      from geneva._history_bounds(v_table) b
      where b.lower_day = v_part.lower_day;
      continue when v_name is null;
      if p_archive = 'detach' then
        execute format('alter table geneva.%I detach partition geneva.%I', v_table, v_name);
      else
        execute format('drop table geneva.%I', v_name);
      end if;
    end loop;

    v_partitions := v_partitions + 1;
    v_workflows := v_workflows + v_w;
    v_executions := v_executions + v_e;
  end loop;
  return query select v_partitions, v_workflows, v_executions;
end;
$$;
