-- geneva.action_log: the operators' actions (geneva.operator_actions), who
-- did what to which workflow and what came of it; newest last by
-- action_id. performed_by is the login role (session_user); actor, the
-- person the caller named (the web dashboard's signed-in user), when it
-- named one; bulk_action_id, the bulk_workflows call an action was part of.
--
-- For operators, the dashboard's workflow page and `geneva show` (filter on
-- workflow_id: operator_actions_workflow_id). A plain projection.
create or replace view geneva.action_log as
select
  a.id as action_id,
  a.at,
  a.performed_by,
  a.arguments ->> 'actor' as actor,
  a.verb,
  a.workflow_id,
  a.arguments,
  a.result,
  (a.arguments ->> 'bulk_action_id')::bigint as bulk_action_id
from geneva.operator_actions a;

comment on view geneva.action_log is
'The operators'' actions: when, which login role (and actor), which verb on which workflow, with what arguments and result.';
