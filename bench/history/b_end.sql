-- Design B (and today's layout): the same :m live workflows as a_end.sql and
-- the same end, in unpartitioned live tables: an update in place (HOT
-- where it can), nothing moves.
\set ON_ERROR_STOP on
set session_replication_role = replica; -- (the setup's rows only)
delete from pb.step_executions where workflow_id < 1000000000;
delete from pb.events where workflow_id < 1000000000;
delete from pb.workflows where id < 1000000000;
set session_replication_role = origin;
insert into pb.workflows (workflow_type, hero_type, hero_id, state, created_at, updated_at)
select 'micro', 'User', 'm' || g, 'performing', now(), now() from generate_series(1, :m) g;
insert into pb.step_executions (workflow_id, step_name, scheduled_for, created_at, state, outcome, finished_at, updated_at)
select w.id, s, now(), now(), case when s = 'e' then 'in_progress' else 'completed' end, case when s = 'e' then null else 'success' end,
  case when s = 'e' then null else now() end, now()
from pb.workflows w, unnest(array['a', 'b', 'c', 'd', 'e']) s where w.id < 1000000000;
insert into pb.events (workflow_id, name, sent_at) select w.id, 'approved', now() from pb.workflows w where w.id < 1000000000;
vacuum analyze pb.workflows, pb.step_executions, pb.events;
checkpoint;
do $$
declare v_start timestamptz; v_n integer := 0; v_w record; v_e bigint; v_x record;
begin
  v_start := clock_timestamp();
  for v_w in select id from pb.workflows where id < 1000000000 loop
    select * into v_x from pb.step_executions e where e.workflow_id = v_w.id and e.state = 'in_progress';
    select * into v_x from pb.step_executions e where e.id = v_x.id;
    v_n := v_n + 1;
  end loop;
  raise notice 'B lookup by id: % us', round(extract(epoch from clock_timestamp() - v_start) * 1e6 / v_n, 1);
  v_start := clock_timestamp(); v_n := 0;
  for v_w in select id from pb.workflows where id < 1000000000 loop
    select e.id into v_e from pb.step_executions e where e.workflow_id = v_w.id and e.state = 'in_progress';
    update pb.step_executions set state = 'completed', outcome = 'success', finished_at = now(), updated_at = now() where id = v_e;
    update pb.workflows set state = 'finished', finished_at = now(), transitioned_at = now(), updated_at = now() where id = v_w.id;
    v_n := v_n + 1;
  end loop;
  raise notice 'B end (in place): % us a workflow, % ended rows in live', round(extract(epoch from clock_timestamp() - v_start) * 1e6 / v_n, 1),
    (select count(*) from pb.workflows where finished_at is not null);
end $$;
