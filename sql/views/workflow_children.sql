-- geneva.workflow_children: every child workflow with its parent
-- (create_workflow's p_parent_id, docs/children.md): its id, type, hero,
-- state, and when it ended (finished or canceled; NULL while ongoing: a
-- paused child has not ended), and the root of its tree. A parent's counts
-- by state are a group by of it (`geneva show` prints them); the counts its
-- join decides on are the parent's children and its stripes' ends
-- (geneva.workflow_list's children and children_ended).
--
-- Reads across history (docs/history.md): a tree moves into history whole,
-- so a moved parent's children are there too.
--
-- For dashboards and operators. Reads workflows_parent_id (and each history
-- partition's workflows_history_parent_id): a query that names the parent
-- reads its children only.
create or replace view geneva.workflow_children as
select
  w.parent_id,
  w.id as workflow_id,
  w.workflow_type,
  w.hero_type,
  w.hero_id,
  w.state,
  coalesce(w.finished_at, w.canceled_at) as ended_at,
  w.root_id,
  w.created_at
from geneva._workflows_all w
where w.parent_id is not null;

comment on view geneva.workflow_children is
'Child workflows with their parent: id, type, hero, state, when each ended, and their tree''s root.';
