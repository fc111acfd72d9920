-- geneva.list_workflows: the workflows a filter matches, newest first, a
-- page at a time, each with its latest error (geneva.step_errors' latest:
-- its last execution with an error).
--
-- Called by: applications, operators, dashboards, goclient.ListWorkflows
-- (the web dashboard's Workflows page), `geneva ls`. Takes no locks.
--
-- p_filter is the one workflow filter (geneva._workflow_filter: type,
-- state or ongoing, step, error_class, hero_type, hero_id, group,
-- created_before, created_after, before_id, after_id, up_to_id, parent_id), which
-- geneva.count_workflows counts and geneva.bulk_workflows acts on. Pages go
-- by id, never OFFSET: pass a page's last id as the filter's before_id to
-- get the next one. The query has only the clauses of the keys given, and
-- is planned with their values, so that each filter reads its own index
-- (see _workflow_filter), newest first, and stops at the page's end. The
-- workflows moved into history are listed with the live ones
-- (docs/history.md): the filter reads both, and each workflow's latest
-- error is read from its own table or partition (its ended_on: a probe
-- pruned to one at run time), by a second statement planned once a
-- session, so that a call plans the page only.
-- Raises: 22004 for a NULL filter or limit; 22023 for a limit outside 1 to
-- 10000 and a bad filter, 22001 for a filter's string over 1024 bytes (as
-- geneva._workflow_filter).
-- (the columns before parent_id, root_id, children and children_ended:
-- dropped, so that an installed database is upgraded in place)
drop function if exists geneva.list_workflows(jsonb, integer);

create or replace function geneva.list_workflows(
  p_filter jsonb default '{}',
  p_limit integer default 100
)
returns table (
  id bigint,
  workflow_type text,
  hero_type text,
  hero_id text,
  state text,
  current_step_name text,
  next_step_name text,
  allow_multiple boolean,
  requested_action text,
  created_at timestamptz,
  updated_at timestamptz,
  started_at timestamptz,
  transitioned_at timestamptz,
  paused_at timestamptz,
  finished_at timestamptz,
  canceled_at timestamptz,
  group_name text,
  retried_from bigint,
  definition_version integer,
  started_version integer,
  parent_id bigint,
  root_id bigint,
  children integer,
  children_ended integer,
  last_error_class text,
  last_error_message text,
  last_error_step text,
  last_error_at timestamptz
)
language plpgsql
stable
security definer
set search_path = pg_catalog, pg_temp
as $$
declare
  -- (rows of geneva._workflows_all, whose columns are workflows_history's:
  -- its type, as the views are installed after this function)
  v_page geneva.workflows_history[];
begin
  if p_limit is null then
    raise exception 'limit must not be null' using errcode = '22004';
  end if;
  if p_limit not between 1 and 10000 then
    raise exception 'limit % is not between 1 and 10000', p_limit using errcode = '22023';
  end if;

  -- the page: planned with the filter's clauses and values, at each call
  execute format(
    'select array(select w::geneva.workflows_history from (select w.* from %s order by w.id desc limit $2) w order by w.id desc)',
    geneva._workflow_filter(p_filter)
  ) into v_page using p_filter, p_limit;

  -- its latest errors: a static statement, planned once a session (an
  -- EXECUTE is planned at each call, over every partition), each probe
  -- pruned at run time to its workflow's table or partition (ended_on)
  return query
  select w.id, w.workflow_type, w.hero_type, w.hero_id, w.state, w.current_step_name, w.next_step_name,
    w.allow_multiple, w.requested_action, w.created_at, w.updated_at, w.started_at, w.transitioned_at,
    w.paused_at, w.finished_at, w.canceled_at, w.group_name, w.retried_from, w.definition_version,
    w.started_version, w.parent_id, w.root_id, w.children,
    geneva._children_ended_now(w.id, w.children, w.children_ended),
    le.error_class_name, le.error_message, le.step_name, le.finished_at
  from unnest(v_page) with ordinality w
  left join lateral (
    select le.error_class_name, le.error_message, le.step_name, le.finished_at
    from geneva._step_executions_all le
    where le.workflow_id = w.id and le.ended_on = w.ended_on and le.error_class_name is not null
    order by le.id desc
    limit 1
  ) le on true
  order by w.ordinality;
end;
$$;

comment on function geneva.list_workflows(jsonb, integer) is
'The workflows the filter matches (geneva._workflow_filter''s keys), newest first, each with its latest error; paged by the filter''s before_id.';
