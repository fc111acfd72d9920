-- geneva.list_workflows: workflows by state, type and hero, newest first, a
-- page at a time.
--
-- Called by: applications, operators, goclient.ListWorkflows, `geneva ls`.
-- Takes no locks. Every filter is optional (NULL: any). Pages go by id:
-- pass the last id of a page as p_before_id to get the next one.
-- Raises: 22004 for a NULL limit; 22023 for a limit outside 1 to 10000, or
-- an unknown state (a typo would otherwise match nothing, silently).
create or replace function geneva.list_workflows(
  p_state text default null,
  p_workflow_type text default null,
  p_hero_type text default null,
  p_hero_id text default null,
  p_limit integer default 100,
  p_before_id bigint default null
)
returns setof geneva.workflows
language plpgsql
stable
security definer
set search_path = pg_catalog, pg_temp
as $$
begin
  if p_limit is null then
    raise exception 'limit must not be null' using errcode = '22004';
  end if;
  if p_limit not between 1 and 10000 then
    raise exception 'limit % is not between 1 and 10000', p_limit using errcode = '22023';
  end if;
  if p_state not in ('ready', 'performing', 'paused', 'finished', 'canceled') then
    raise exception 'unknown workflow state %', p_state
      using errcode = '22023',
            hint = 'A workflow is ready, performing, paused, finished or canceled.';
  end if;

  return query
  select w.*
  from geneva.workflows w
  where (p_state is null or w.state = p_state)
    and (p_workflow_type is null or w.workflow_type = p_workflow_type)
    and (p_hero_type is null or w.hero_type = p_hero_type)
    and (p_hero_id is null or w.hero_id = p_hero_id)
    and (p_before_id is null or w.id < p_before_id)
  order by w.id desc
  limit p_limit;
end;
$$;

comment on function geneva.list_workflows(text, text, text, text, integer, bigint) is
'Workflows filtered by state, type and hero, newest first, paged by id.';
