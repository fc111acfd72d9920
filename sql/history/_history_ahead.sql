-- geneva._history_ahead: creates the history partitions ahead
-- (docs/history.md): the one holding p_now's day (UTC) and the next two
-- intervals' (partition_interval: three days, or three weeks), so that a
-- move finds its partition there and does not take the history parents'
-- exclusive lock to create one.
--
-- Called by: geneva.housekeep, each round (a round that finds them there
-- reads the catalog only). Locks: the parents, when it creates one
-- (geneva._history_partition).
-- Returns how many intervals' partitions it created.
create or replace function geneva._history_ahead(p_now timestamptz)
returns integer
language plpgsql
volatile
set search_path = pg_catalog, pg_temp
as $$
declare
  v_day date := (p_now at time zone 'UTC')::date;
  v_step interval;
  v_before integer;
  v_i integer;
begin
  select s.partition_interval into v_step from geneva.housekeeping_settings s;
  select count(*) into v_before from geneva._history_bounds('workflows_history');
  for v_i in 0..2 loop
    perform geneva._history_partition((v_day + v_i * coalesce(v_step, interval '1 day'))::date);
  end loop;
  return (select count(*) from geneva._history_bounds('workflows_history')) - v_before;
end;
$$;
