-- geneva._limit_keys: the limits an execution of a step is held to, each with
-- the key of its workflow: the type's "concurrency" and "rate_limit" and
-- the step's named "limits" (geneva.limits), with their bounds.
--
-- A key is a JSON array as text (geneva._limit_key). A limit "by": "parent"
-- does not hold a workflow without a parent: it has no key, and no row here.
--
-- Called by: geneva._limit_admit (at a claim). Takes no locks.
-- Like geneva.now() it has no `set search_path`, so that the planner can
-- inline it.
create or replace function geneva._limit_keys(
  p_workflow geneva.workflows,
  p_definition geneva.workflow_definitions,
  p_step_name text
)
returns table (limit_key text, concurrency integer, rate integer, per interval)
language sql
stable
as $$
  select k.limit_key, l.concurrency, l.rate, l.per
  from (
    select 'concurrency' as kind, p_workflow.workflow_type as name, c ->> 'by' as by,
      (c ->> 'limit')::integer as concurrency, null::integer as rate, null::interval as per
    from (select p_definition.definition -> 'concurrency' as c) x
    where c is not null
    union all
    select 'rate_limit', p_workflow.workflow_type, r ->> 'by', null, (r ->> 'limit')::integer,
      case pg_catalog.jsonb_typeof(r -> 'per')
        when 'number' then pg_catalog.make_interval(secs => (r ->> 'per')::double precision)
        else (r ->> 'per')::interval
      end
    from (select p_definition.definition -> 'rate_limit' as r) x
    where r is not null
    union all
    select 'limit', n.name, l.by, l.concurrency, l.rate, l.per
    from pg_catalog.jsonb_array_elements_text(
      p_definition.definition -> 'steps' -> (pg_catalog.array_position(p_definition.step_names, p_step_name) - 1) -> 'limits'
    ) as n (name)
    join geneva.limits l on l.name = n.name
  ) l
  cross join lateral (
    select geneva._limit_key(
      l.kind, l.name, l.by, p_workflow.workflow_type, p_workflow.group_name, p_workflow.hero_type, p_workflow.hero_id,
      p_workflow.parent_id
    ) as limit_key
  ) k
  where k.limit_key is not null
$$;
