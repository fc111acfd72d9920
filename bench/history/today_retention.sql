-- Today's retention (geneva.housekeep's step 1), on B's live tables holding
-- the day: delete ended workflows, oldest end first, :size a transaction
-- (the executions and events by on delete cascade), until none is left;
-- then the VACUUM that the deleted rows owe.
\set ON_ERROR_STOP on
create or replace procedure pb.delete_run(p_size integer) language plpgsql as $$
declare v_start timestamptz := clock_timestamp(); v_n bigint := 0; v_d integer; v_wal pg_lsn := pg_current_wal_insert_lsn();
begin
  loop
    delete from pb.workflows w where w.id in (
      select o.id from pb.workflows o where (o.finished_at is not null or o.canceled_at is not null)
      order by o.transitioned_at limit p_size for update skip locked);
    get diagnostics v_d = row_count;
    commit;
    exit when v_d = 0;
    v_n := v_n + v_d;
  end loop;
  raise notice 'today''s retention: % workflows in % s (% us a workflow), % WAL bytes a workflow', v_n,
    round(extract(epoch from clock_timestamp() - v_start)::numeric, 1),
    round(extract(epoch from clock_timestamp() - v_start) * 1e6 / v_n, 1), round((pg_current_wal_insert_lsn() - v_wal) / v_n);
end $$;
call pb.delete_run(:size);
\timing on
vacuum pb.workflows, pb.step_executions, pb.events;
