-- One parent's step ends with :n children (complete_steps, its reply's
-- "children"), as the worker records a Step.StartChildren: the call
-- bench/micro/fanout_create.sh counts the instructions of (a DO block:
-- valgrind counts only inside plpgsql_inline_handler). A warm-up parent of
-- 100 children first, so that the measured call runs on plans made.
\set ON_ERROR_STOP on
\set QUIET on
select geneva.define_workflow('BenchChild', '{"steps": [{"name": "a"}]}'::jsonb) \g /dev/null
select geneva.define_workflow('BenchFanout', '{"steps": [{"name": "fan_out"}, {"name": "join", "await": {"children": "all", "timeout": "1 hour"}}]}'::jsonb) \g /dev/null
select geneva.create_workflow('BenchFanout', 'User', 'warm') as parent \gset
select e.id as exec from geneva.step_executions e where e.workflow_id = :parent \gset
select count(*) from geneva.start_steps(array[:exec]::bigint[], array[null]::text[]) \g /dev/null
select count(*) from geneva.complete_steps(array[:exec]::bigint[], array['success'], array[null]::interval[],
  array[null]::bigint[], array[true], true, null, array[jsonb_build_object('children', (
    select jsonb_agg(jsonb_build_object('type', 'BenchChild', 'hero_type', 'User', 'hero_id', 'w-' || i))
    from generate_series(1, 100) i))]) \g /dev/null
select geneva.create_workflow('BenchFanout', 'User', 'p') as parent \gset
select e.id as exec from geneva.step_executions e where e.workflow_id = :parent \gset
select count(*) from geneva.start_steps(array[:exec]::bigint[], array[null]::text[]) \g /dev/null
create temp table fan as select :exec::bigint as exec, jsonb_agg(jsonb_build_object(
  'type', 'BenchChild', 'hero_type', 'User', 'hero_id', :parent || '-' || i)) as children
from generate_series(1, :n) i;
do $$
begin
  perform count(*) from geneva.complete_steps(array[(select exec from fan)], array['success'], array[null::interval],
    array[null::bigint], array[true], true, null, array[jsonb_build_object('children', (select children from fan))]);
end
$$;
select count(*) as children from geneva.workflows where parent_id = :parent \gset
\echo children=:children
