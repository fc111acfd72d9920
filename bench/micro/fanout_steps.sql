-- :n one-step workflows created, claimed and ended, as children of one
-- parent (:mode children: the parent's step ends with them, complete_steps
-- with its reply's "children", as the worker records a Step.StartChildren)
-- or without one (:mode roots: create_workflows, 100 a call, as an
-- application creates them): what a child costs PostgreSQL beside the same
-- workflow without a parent, its creation, claim and end together. Counted
-- by bench/micro/fanout_create.sh -s (a DO block: valgrind counts only
-- inside plpgsql_inline_handler). Each claim (start_steps) and end
-- (complete_steps, with the River job's id, as the worker ends a step)
-- takes 4 executions in its own transaction. The same is done for 100
-- first, at the top level (not counted), so that the measured block runs
-- on the functions' plans made.
\set ON_ERROR_STOP on
\set QUIET on
select geneva.define_workflow('BenchChild', '{"steps": [{"name": "a"}]}'::jsonb) \g /dev/null
select geneva.define_workflow('BenchFanout', '{"steps": [{"name": "fan_out"}, {"name": "join", "await": {"children": "all", "timeout": "1 hour"}}]}'::jsonb) \g /dev/null
select set_config('micro.mode', :'mode', false), set_config('micro.n', :'n', false) \g /dev/null

-- the warm-up: 100 the same way, statement by statement
select geneva.create_workflow('BenchFanout', 'User', 'warm') as parent \gset
select e.id as exec from geneva.step_executions e where e.workflow_id = :parent \gset
select count(*) from geneva.start_steps(array[:exec]::bigint[], array[null]::text[]) \g /dev/null
select case :'mode' when 'children' then format(
    $q$select count(*) from geneva.complete_steps(array[%s]::bigint[], array['success'], array[null]::interval[],
      array[null]::bigint[], array[true], true, null, array[%L::jsonb])$q$,
    :exec, (select jsonb_build_object('children', jsonb_agg(jsonb_build_object('type', 'BenchChild', 'hero_type', 'User', 'hero_id', 'warm-' || i)))
            from generate_series(1, 100) i))
  else $q$select geneva.create_workflows('BenchChild', 'User', array(select 'warm-' || i from generate_series(1, 100) i))$q$
  end \gexec
select format(
    $q$select count(*) from geneva.start_steps(%1$L::bigint[], array_fill(null::text, array[cardinality(%1$L::bigint[])]));
       select count(*) from geneva.complete_steps(%1$L::bigint[], array_fill('success'::text, array[cardinality(%1$L::bigint[])]),
         array_fill(null::interval, array[cardinality(%1$L::bigint[])]), %2$L::bigint[], array_fill(true, array[cardinality(%1$L::bigint[])]), true)$q$,
    array_agg(x.id order by x.id), array_agg(x.job_id order by x.id))
from (
  select e.id, e.job_id, (row_number() over (order by e.id) - 1) / 4 as chunk
  from geneva.workflows w join geneva.step_executions e on e.workflow_id = w.id
  where w.workflow_type = 'BenchChild' and w.hero_id like 'warm-%'
) x
group by x.chunk
order by x.chunk \gexec

do $$
declare
  v_mode text := current_setting('micro.mode');
  v_n integer := current_setting('micro.n')::integer;
  v_batch constant integer := 4;
  v_parent bigint;
  v_exec bigint;
  v_all bigint[];
  v_all_jobs bigint[];
  v_ids bigint[];
begin
  if v_mode = 'children' then
    v_parent := geneva.create_workflow('BenchFanout', 'User', 'p');
    select e.id into v_exec from geneva.step_executions e where e.workflow_id = v_parent;
    perform count(*) from geneva.start_steps(array[v_exec], array[null::text]);
    commit;
    perform count(*) from geneva.complete_steps(array[v_exec], array['success'], array[null::interval],
      array[null::bigint], array[true], true, null, array[jsonb_build_object('children', (
        select jsonb_agg(jsonb_build_object('type', 'BenchChild', 'hero_type', 'User', 'hero_id', 'm-' || i))
        from generate_series(1, v_n) i))]);
    commit;
  else
    for v_b in 0 .. (v_n - 1) / 100 loop
      perform geneva.create_workflows('BenchChild', 'User',
        array(select 'm-' || i from generate_series(v_b * 100 + 1, least(v_n, v_b * 100 + 100)) i));
      commit;
    end loop;
  end if;
  -- (the executions listed once: a search for the due ones at every claim
  -- would cost the loop more as it goes on)
  select array_agg(e.id order by e.id), array_agg(e.job_id order by e.id) into v_all, v_all_jobs
  from geneva.workflows w join geneva.step_executions e on e.workflow_id = w.id
  where w.workflow_type = 'BenchChild' and w.hero_id like 'm-%';
  for v_from in 1 .. cardinality(v_all) by v_batch loop
    v_ids := v_all[v_from : v_from + v_batch - 1];
    perform count(*) from geneva.start_steps(v_ids, array_fill(null::text, array[cardinality(v_ids)]));
    commit;
    perform count(*) from geneva.complete_steps(v_ids, array_fill('success'::text, array[cardinality(v_ids)]),
      array_fill(null::interval, array[cardinality(v_ids)]), v_all_jobs[v_from : v_from + v_batch - 1],
      array_fill(true, array[cardinality(v_ids)]), true);
    commit;
  end loop;
end
$$;
select count(*) as steps from geneva.workflows w
where w.workflow_type = 'BenchChild' and w.hero_id like 'm-%' and w.finished_at is not null \gset
\echo children=:steps
