-- geneva.workflow_list: every workflow, with whether it is ongoing (ready,
-- performing or paused), for filtered lists paged by id (keyset, newest
-- first). A plain projection, so filters on its columns reach the indexes;
-- filter by error class through geneva.step_errors. group_name is the
-- workflow's group (create_workflow's p_group); a filter on it has no index
-- of its own and walks the primary key, newest first.
--
-- Reads across history (docs/history.md): the live workflows, then those
-- moved into geneva.workflows_history (final_step_at NULL: they ended), one
-- union all whose branches each take the filter: a list newest first is a
-- merge of one backward walk of the primary key a table and partition.
--
-- For the dashboard and operators. Reads workflows by its primary key,
-- workflows_hero (no index names the state: a filter on it walks the
-- primary key, newest first), and the same of each history partition.
create or replace view geneva.workflow_list as
select
  w.id as workflow_id,
  w.workflow_type,
  w.hero_type,
  w.hero_id,
  w.state,
  w.state in ('ready', 'performing', 'paused') as ongoing,
  w.current_step_name,
  w.next_step_name,
  w.allow_multiple,
  w.requested_action,
  w.created_at,
  w.updated_at,
  w.started_at,
  w.transitioned_at,
  w.paused_at,
  w.finished_at,
  w.canceled_at,
  w.group_name,
  -- the workflow it retries (geneva.retry_workflow): a workflow's retries
  -- are those whose retried_from is its id (workflows_retried_from); last
  -- with group_name: create or replace view appends columns only
  w.retried_from,
  -- the definition's version it follows now, and the one it started
  -- under (geneva.definition_versions)
  w.definition_version,
  w.started_version,
  -- its parent and its tree's root (create_workflow's p_parent_id; NULL for
  -- a root), and its children: how many, how many ended (docs/children.md;
  -- geneva._children_ended_now's expression, inline: the view's readers
  -- are not granted the function, nor the stripes)
  w.parent_id,
  w.root_id,
  w.children,
  case when w.children = w.children_ended then w.children_ended
    else w.children - coalesce((
      select sum(s.ongoing)::integer
      from geneva.children_stripes s
      where s.parent_id = w.id
    ), 0)
  end as children_ended,
  -- the earliest instant its last step can start: exact when the steps'
  -- "after" offsets decide, a lower bound with waits and awaits; NULL once
  -- ended (geneva.final_step_at: granted to the readers of this view, as
  -- the helper it calls is to no one)
  case when w.finished_at is null and w.canceled_at is null then geneva.final_step_at(w.id) end as final_step_at
from geneva.workflows w
union all
select
  h.id as workflow_id,
  h.workflow_type,
  h.hero_type,
  h.hero_id,
  h.state,
  h.state in ('ready', 'performing', 'paused') as ongoing,
  h.current_step_name,
  h.next_step_name,
  h.allow_multiple,
  h.requested_action,
  h.created_at,
  h.updated_at,
  h.started_at,
  h.transitioned_at,
  h.paused_at,
  h.finished_at,
  h.canceled_at,
  h.group_name,
  h.retried_from,
  h.definition_version,
  h.started_version,
  h.parent_id,
  h.root_id,
  h.children,
  h.children_ended,
  null::timestamptz as final_step_at
from geneva.workflows_history h;

comment on view geneva.workflow_list is
'Every workflow with whether it is ongoing; filter on its columns and page by workflow_id.';
