-- geneva.archive_partitions: the history partitions `geneva archive --before
-- DATE` writes out and drops (docs/history.md, "Archive"): every partition of
-- geneva.workflows_history whose range ends on or before p_before, attached,
-- or detached by housekeeping's retention (archive = 'detach') and not yet
-- dropped; oldest first, each with how many workflows it holds (what
-- geneva.drop_archived_partition checks the archive against).
--
-- Called by: operators, `geneva archive`. Takes no locks; counts each
-- listed partition's rows.
-- Raises: 22004 for a NULL date; 22023 for a date after the retention's
-- horizon (geneva._archive_horizon: history retention still keeps, or a NULL
-- retention).
create or replace function geneva.archive_partitions(p_before date)
returns table (
  partition_name text,
  lower_day date,
  upper_day date,
  attached boolean,
  workflows bigint
)
language plpgsql
stable
security definer
set search_path = pg_catalog, pg_temp
as $$
declare
  v_name text;
  v_part record;
  v_count bigint;
begin
  if p_before is null then
    raise exception 'archive date must not be null' using errcode = '22004';
  end if;
  perform geneva._archive_horizon(p_before);

  for v_name in
    select c.relname::text
    from pg_class c
    join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = 'geneva'
      and c.relkind = 'r'
      and c.relname ~ '^workflows_history_[0-9]{8}(_[0-9]+)?$'
  loop
    select p.* into v_part from geneva._archive_partition(v_name) p;
    continue when v_part.upper_day > p_before;
    execute format('select count(*) from geneva.%I', v_name) into v_count;
    partition_name := v_name;
    lower_day := v_part.lower_day;
    upper_day := v_part.upper_day;
    attached := v_part.attached;
    workflows := v_count;
    return next;
  end loop;
end;
$$;

comment on function geneva.archive_partitions(date) is
'The history partitions whose range ends on or before the date (attached or detached), with how many workflows each holds: what geneva archive writes out and drops.';
