-- geneva._log_action: appends an operator's action to geneva.operator_actions
-- (read through geneva.action_log), in the caller's transaction: the action
-- and its record commit or roll back together, and a refused call (which
-- raises) leaves none.
--
-- Called by: every operator verb once it has acted (pause_workflow,
-- resume_workflow, cancel_workflow, skip_step, schedule_step, retry_workflow,
-- bulk_workflows, send_event, send_hero_event, define_workflow when it
-- writes, define_limit, create_schedule when it writes, pause_schedule and
-- resume_schedule when they change it, delete_schedule,
-- set_housekeeping_settings when something is given, housekeep when given
-- arguments, track_hero, untrack_hero, drop_archived_partition as archive).
--
-- performed_by is session_user, the login role (not current_user: the verbs
-- run as the owner). The transaction-local setting geneva.actor adds to the
-- arguments who is behind the login role as the caller says (the web
-- dashboard sets it to its signed-in user; a claim, recorded as given, next
-- to the role that is the fact), as "actor": a name, at most 255 bytes
-- (22001, and the verb's call fails with it). p_bulk_action_id, the id of a
-- geneva.bulk_workflows call's own row, passed down by bulk_workflows to the
-- verbs it calls (never a setting: a caller could set one and tie its own
-- actions to a bulk call it did not make), adds "bulk_action_id". p_id
-- gives the row's id when the caller reserved it (bulk_workflows, whose row
-- comes after those of its verbs).
--
-- Locks: inserts only.
-- Returns the row's id.
-- Raises: 22001 for an actor over 255 bytes (geneva._check_length).
create or replace function geneva._log_action(
  p_verb text,
  p_workflow_id bigint,
  p_arguments jsonb,
  p_result jsonb,
  p_id bigint default null,
  p_bulk_action_id bigint default null
)
returns bigint
language plpgsql
volatile
set search_path = pg_catalog, pg_temp
as $$
declare
  v_id bigint := coalesce(p_id, nextval('geneva.operator_actions_id_seq'));
  v_actor text := nullif(pg_catalog.current_setting('geneva.actor', true), '');
begin
  perform geneva._check_length(v_actor, 255, 'actor (geneva.actor)');
  -- the only inserter of actions (sql/guards/operator_actions_guard.sql)
  perform pg_catalog.set_config('geneva.logging', 'on', true);
  insert into geneva.operator_actions (id, at, performed_by, verb, workflow_id, arguments, result)
  values (
    v_id, geneva.now(), session_user, p_verb, p_workflow_id,
    coalesce(p_arguments, '{}')
    || case when v_actor is not null then jsonb_build_object('actor', v_actor) else '{}' end
    || case when p_bulk_action_id is not null then jsonb_build_object('bulk_action_id', p_bulk_action_id) else '{}' end,
    p_result
  );
  perform pg_catalog.set_config('geneva.logging', '', true);
  return v_id;
end;
$$;
