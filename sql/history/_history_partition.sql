-- geneva._history_partition: makes sure the history tables
-- (geneva.workflows_history, step_executions_history, events_history) each
-- have a partition holding p_day, creating the missing ones, and returns
-- that partition's first day. A new partition spans the setting
-- partition_interval (a day, or a week from its Monday), cut short where an
-- existing partition already covers part of it (the interval was changed),
-- and is named after its table and first day (workflows_history_20261128);
-- when a detached partition (archive = 'detach', not yet written out by
-- geneva archive) still holds that name, the new one takes the first free
-- suffix (workflows_history_20261128_1). Each new partition gets the
-- truncate guard (a statement trigger of the parent does not fire for a
-- TRUNCATE of a partition named directly); the row guards
-- (sql/guards/history_guard.sql) are the parent's, cloned by PostgreSQL.
--
-- Called by: geneva._move_to_history (the days its workflows ended on), and
-- geneva._history_ahead (the partitions ahead). When the day has none:
-- locks the row of geneva.housekeeping_settings (one creator at a time: a
-- second waits, then finds the partition the first made; a row of a table
-- granted to no one, which no other role may lock, where an advisory lock
-- held by any login role would stall every round: docs/security.md) and
-- takes an exclusive lock on
-- the three parent tables at once, without waiting (partitions are created
-- ahead, so a move rarely does). Returns NULL when a reader holds any of
-- them: the creation is put off to a later round rather than risk a
-- deadlock with a reader that locks them one by one.
create or replace function geneva._history_partition(p_day date)
returns date
language plpgsql
volatile
set search_path = pg_catalog, pg_temp
as $$
declare
  v_interval interval;
  v_from date;
  v_to date;
  v_table text;
  v_bound record;
  v_suffix text;
  v_n integer := 0;
begin
  -- covered already: the partition of workflows_history holding the day
  -- (the three tables are partitioned alike, created together)
  select b.lower_day into v_from
  from geneva._history_bounds('workflows_history') b
  where b.lower_day <= p_day and p_day < b.upper_day;
  if found then
    return v_from;
  end if;

  -- one creator at a time (two rounds, or a round and an operator's
  -- housekeep, may want the same day): the second waits, then finds it
  select s.partition_interval into v_interval from geneva.housekeeping_settings s for update;
  select b.lower_day into v_from
  from geneva._history_bounds('workflows_history') b
  where b.lower_day <= p_day and p_day < b.upper_day;
  if found then
    return v_from;
  end if;

  v_from := case when v_interval = interval '1 week' then date_trunc('week', p_day)::date else p_day end;
  v_to := (v_from + coalesce(v_interval, interval '1 day'))::date;
  for v_bound in select b.lower_day, b.upper_day from geneva._history_bounds('workflows_history') b loop
    if v_bound.upper_day <= p_day then
      v_from := greatest(v_from, v_bound.upper_day);
    elsif v_bound.lower_day > p_day then
      v_to := least(v_to, v_bound.lower_day);
    end if;
  end loop;

  -- the name: the first day's, unless a detached partition keeps it
  v_suffix := to_char(v_from, 'YYYYMMDD');
  while exists (
    select from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = 'geneva'
      and c.relname in ('workflows_history_' || v_suffix, 'step_executions_history_' || v_suffix,
        'events_history_' || v_suffix)
  ) loop
    v_n := v_n + 1;
    v_suffix := to_char(v_from, 'YYYYMMDD') || '_' || v_n;
  end loop;

  -- the three parents at once, without waiting: a reader across history
  -- (a view, get_workflow) locks them one by one as it plans, and a creator
  -- waiting for one while holding another would meet it in a deadlock; a
  -- reader holding any puts the creation off (NULL: the next round's, the
  -- partitions being made ahead)
  begin
    lock table geneva.workflows_history, geneva.step_executions_history, geneva.events_history
      in access exclusive mode nowait;
  exception when lock_not_available then
    return null;
  end;
  foreach v_table in array array['workflows_history', 'step_executions_history', 'events_history'] loop
    execute format('create table geneva.%I partition of geneva.%I for values from (%L) to (%L)',
      v_table || '_' || v_suffix, v_table, v_from, v_to);
    execute format('create trigger truncate_guard before truncate on geneva.%I'
      || ' for each statement execute function geneva._trg_truncate_guard()', v_table || '_' || v_suffix);
  end loop;
  return v_from;
end;
$$;
