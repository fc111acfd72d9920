-- Design B: a lookup by id of a moved workflow and its executions
-- (get_workflow, step_history of an ended workflow), the history's ended_on
-- unknown: every partition's index probed; against the same with ended_on
-- known, and a live lookup.
\set ON_ERROR_STOP on
do $$
declare v_start timestamptz; v_x record; v_n integer := 0;
  v_ids bigint[] := array(select id from pb.workflows_history order by random() limit 5000);
  v_id bigint; v_d date := current_date - 1;
begin
  v_start := clock_timestamp();
  foreach v_id in array v_ids loop
    select * into v_x from pb.workflows_history w where w.id = v_id;
    perform from pb.step_executions_history e where e.workflow_id = v_id order by e.id;
    v_n := v_n + 1;
  end loop;
  raise notice 'B history lookup, ended_on unknown (% partitions): % us', (select count(*) from pg_inherits where inhparent = 'pb.workflows_history'::regclass),
    round(extract(epoch from clock_timestamp() - v_start) * 1e6 / v_n, 1);
  v_start := clock_timestamp(); v_n := 0;
  foreach v_id in array v_ids loop
    select * into v_x from pb.workflows_history w where w.id = v_id and w.ended_on = v_d;
    perform from pb.step_executions_history e where e.workflow_id = v_id and e.ended_on = v_d order by e.id;
    v_n := v_n + 1;
  end loop;
  raise notice 'B history lookup, ended_on known: % us', round(extract(epoch from clock_timestamp() - v_start) * 1e6 / v_n, 1);
  v_start := clock_timestamp(); v_n := 0;
  foreach v_id in array v_ids loop
    select * into v_x from pb.workflows w where w.id = v_id;
    perform from pb.step_executions e where e.workflow_id = v_id order by e.id;
    v_n := v_n + 1;
  end loop;
  raise notice 'B live lookup (a miss, as get_workflow''s first try): % us', round(extract(epoch from clock_timestamp() - v_start) * 1e6 / v_n, 1);
end $$;
