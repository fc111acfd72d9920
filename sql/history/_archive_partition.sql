-- geneva._archive_partition: one history partition geneva archive may write
-- out and drop (docs/history.md, "Archive"), by the name of its
-- geneva.workflows_history table: workflows_history_YYYYMMDD, or
-- workflows_history_YYYYMMDD_N when a detached one kept the day's name
-- (geneva._history_partition). Its siblings of the same suffix hold its
-- executions (step_executions_history_…) and events (events_history_…).
-- attached: still a partition of geneva.workflows_history, with its range
-- (lower_day to upper_day); else detached by housekeeping's retention
-- (archive = 'detach'), a plain table whose range is no longer recorded:
-- lower_day is its name's day and upper_day the day after its last
-- workflow's end (ended_on), at least the day after lower_day.
--
-- Called by: geneva.archive_partitions, geneva.archive_partition_rows,
-- geneva.drop_archived_partition. Reads the catalog, and a detached
-- partition's greatest ended_on (its primary key's second column: a scan).
-- Returns no row when there is no such table.
-- Raises: 22004 for a NULL name; 22023 for a name that is not a history
-- partition's.
create or replace function geneva._archive_partition(p_partition text)
returns table (
  partition_name text,
  lower_day date,
  upper_day date,
  attached boolean,
  executions_table text,
  events_table text
)
language plpgsql
stable
set search_path = pg_catalog, pg_temp
as $$
declare
  v_suffix text;
  v_lower date;
  v_upper date;
  v_attached boolean;
begin
  if p_partition is null then
    raise exception 'partition must not be null' using errcode = '22004';
  end if;
  v_suffix := substring(p_partition from '^workflows_history_([0-9]{8}(?:_[0-9]+)?)$');
  if v_suffix is null then
    raise exception '% is not a history partition', left(p_partition, 80)
      using errcode = '22023',
            hint = 'Name the partition of geneva.workflows_history, e.g. workflows_history_20261128 (geneva.archive_partitions lists them).';
  end if;
  if to_regclass(format('geneva.%I', p_partition)) is null then
    return;
  end if;

  select b.lower_day, b.upper_day into v_lower, v_upper
  from geneva._history_bounds('workflows_history') b
  where b.partition_name = p_partition;
  v_attached := found;
  if not v_attached then
    v_lower := to_date(left(v_suffix, 8), 'YYYYMMDD');
    execute format('select max(w.ended_on) + 1 from geneva.%I w', p_partition) into v_upper;
    v_upper := greatest(v_upper, v_lower + 1);
  end if;

  return query select p_partition, v_lower, v_upper, v_attached,
    'step_executions_history_' || v_suffix, 'events_history_' || v_suffix;
end;
$$;
