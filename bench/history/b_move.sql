-- Design B's move: one batch of ended workflows (oldest end first) with
-- their executions and events out of the live tables into history, in one
-- transaction: insert … select, then delete from the live tables (the
-- cascade takes the executions and events).
create or replace function pb.move_ended(p_batch integer) returns integer language plpgsql as $$
declare v_ids bigint[]; v_n integer;
begin
  select coalesce(array_agg(w.id), '{}') into v_ids from (
    select w.id from pb.workflows w
    where (w.finished_at is not null or w.canceled_at is not null)
    order by w.transitioned_at limit p_batch for update skip locked) w;
  insert into pb.workflows_history
  select w.transitioned_at::date, w.* from pb.workflows w where w.id = any (v_ids);
  insert into pb.step_executions_history
  select w.transitioned_at::date, e.* from pb.step_executions e join pb.workflows w on w.id = e.workflow_id where w.id = any (v_ids);
  insert into pb.events_history
  select w.transitioned_at::date, v.* from pb.events v join pb.workflows w on w.id = v.workflow_id where w.id = any (v_ids);
  delete from pb.workflows w where w.id = any (v_ids);
  get diagnostics v_n = row_count;
  return v_n;
end $$;
