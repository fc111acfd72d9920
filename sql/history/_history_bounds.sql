-- geneva._history_bounds: the attached partitions of one of the history
-- tables (geneva.workflows_history, step_executions_history,
-- events_history), each with its range of days, oldest first: what
-- housekeeping creates ahead of, moves into, and drops or detaches.
--
-- Called by: geneva._history_partition, housekeeping's retention of history,
-- geneva archive. Reads the catalog only.
create or replace function geneva._history_bounds(p_table text)
returns table (partition_name text, lower_day date, upper_day date)
language sql
stable
set search_path = pg_catalog, pg_temp
as $$
  select c.relname::text,
    (regexp_match(pg_get_expr(c.relpartbound, c.oid), 'FROM \(''([^'']+)''\) TO'))[1]::date,
    (regexp_match(pg_get_expr(c.relpartbound, c.oid), 'TO \(''([^'']+)''\)'))[1]::date
  from pg_inherits i
  join pg_class c on c.oid = i.inhrelid
  where i.inhparent = format('geneva.%I', p_table)::regclass
  order by 2;
$$;
