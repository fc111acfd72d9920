-- Design B's move, timed: :batches batches of :size ended workflows (with
-- their executions and events) out of the live tables into history, each
-- batch its own transaction (as one housekeeping round).
\set ON_ERROR_STOP on
select format('create table if not exists pb.%s_history_%s partition of pb.%s_history for values from (%L) to (%L)', t, to_char(current_date - 1, 'YYYYMMDD'), t, current_date - 1, current_date)
from unnest(array['workflows', 'step_executions', 'events']) t \gexec
create or replace procedure pb.move_run(p_batches integer, p_size integer) language plpgsql as $$
declare v_start timestamptz := clock_timestamp(); v_n bigint := 0; v_wal pg_lsn := pg_current_wal_insert_lsn();
begin
  for i in 1 .. p_batches loop
    v_n := v_n + pb.move_ended(p_size);
    commit;
  end loop;
  raise notice 'B move: % workflows in % s: % us a workflow, % WAL bytes a workflow', v_n,
    round(extract(epoch from clock_timestamp() - v_start)::numeric, 2),
    round(extract(epoch from clock_timestamp() - v_start) * 1e6 / v_n, 1), round((pg_current_wal_insert_lsn() - v_wal) / v_n);
end $$;
call pb.move_run(:batches, :size);
