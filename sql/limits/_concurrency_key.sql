-- geneva._concurrency_key: the key its type's "concurrency" gives a workflow
-- (geneva._limit_key), NULL when the type has none (or it is "by": "parent"
-- and the workflow has no parent): the one slot a step held
-- to that limit only (geneva._limit_carries) needs, which its next step may
-- carry on or wait for.
--
-- Called by: geneva._limit_next, geneva._insert_execution,
-- geneva.create_workflows. Takes no locks.
-- Like geneva.now() it has no `set search_path`, so that the planner can
-- inline it.
create or replace function geneva._concurrency_key(
  p_definition jsonb,
  p_workflow_type text,
  p_group text,
  p_hero_type text,
  p_hero_id text,
  p_parent_id bigint
)
returns text
language sql
stable
parallel safe
as $$
  select case when p_definition ? 'concurrency' then
    geneva._limit_key(
      'concurrency', p_workflow_type, p_definition -> 'concurrency' ->> 'by',
      p_workflow_type, p_group, p_hero_type, p_hero_id, p_parent_id
    )
  end
$$;
