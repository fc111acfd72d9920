-- Design A: :m live workflows (4 executions done, the 5th running, 1 event),
-- then each one's end timed: its last execution completed, the workflow
-- finished with ended_on set to today (the row moves to today's partition,
-- and on update cascade moves its executions and events after it). Then the
-- same lookups by id with and without the key: a claim or end that knows
-- only the execution's id.
\set ON_ERROR_STOP on
delete from pa.workflows where ended_on = 'infinity' or ended_on = current_date;
insert into pa.workflows (workflow_type, hero_type, hero_id, state, created_at, updated_at)
select 'micro', 'User', 'm' || g, 'performing', now(), now() from generate_series(1, :m) g;
insert into pa.step_executions (workflow_id, step_name, scheduled_for, created_at, state, outcome, finished_at, updated_at)
select w.id, s, now(), now(), case when s = 'e' then 'in_progress' else 'completed' end, case when s = 'e' then null else 'success' end,
  case when s = 'e' then null else now() end, now()
from pa.workflows w, unnest(array['a', 'b', 'c', 'd', 'e']) s where w.ended_on = 'infinity';
insert into pa.events (workflow_id, name, sent_at) select w.id, 'approved', now() from pa.workflows w where w.ended_on = 'infinity';
vacuum analyze pa.workflows, pa.step_executions, pa.events;
checkpoint;
do $$
declare v_start timestamptz; v_n integer := 0; v_w record; v_e bigint; v_x record;
begin
  -- lookups by id, the key known (pruned to the live partition at plan time)
  v_start := clock_timestamp();
  for v_w in select id from pa.workflows where ended_on = 'infinity' loop
    select * into v_x from pa.step_executions e where e.workflow_id = v_w.id and e.ended_on = 'infinity' and e.state = 'in_progress';
    select * into v_x from pa.step_executions e where e.id = v_x.id and e.ended_on = 'infinity';
    v_n := v_n + 1;
  end loop;
  raise notice 'A lookup by id with the key: % us', round(extract(epoch from clock_timestamp() - v_start) * 1e6 / v_n, 1);
  v_start := clock_timestamp(); v_n := 0;
  for v_w in select id from pa.workflows where ended_on = 'infinity' loop
    select * into v_x from pa.step_executions e where e.workflow_id = v_w.id and e.state = 'in_progress';
    select * into v_x from pa.step_executions e where e.id = v_x.id;
    v_n := v_n + 1;
  end loop;
  raise notice 'A lookup by id without the key (% partitions): % us', (select count(*) from pg_inherits where inhparent = 'pa.step_executions'::regclass),
    round(extract(epoch from clock_timestamp() - v_start) * 1e6 / v_n, 1);
  v_start := clock_timestamp(); v_n := 0;
  for v_w in select id from pa.workflows where ended_on = 'infinity' loop
    select e.id into v_e from pa.step_executions e where e.workflow_id = v_w.id and e.ended_on = 'infinity' and e.state = 'in_progress';
    update pa.step_executions set state = 'completed', outcome = 'success', finished_at = now(), updated_at = now()
    where id = v_e and ended_on = 'infinity';
    update pa.workflows set state = 'finished', finished_at = now(), transitioned_at = now(), updated_at = now(), ended_on = current_date
    where id = v_w.id and ended_on = 'infinity';
    v_n := v_n + 1;
  end loop;
  raise notice 'A end (row moves, cascade): % us a workflow, % rows left live', round(extract(epoch from clock_timestamp() - v_start) * 1e6 / v_n, 1),
    (select count(*) from pa.step_executions_live);
end $$;
