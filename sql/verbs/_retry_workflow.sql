-- geneva._retry_workflow: the one implementation of geneva.retry_workflow (see there: what
-- it does, what it locks and raises), which records its action
-- (geneva._log_action) with p_bulk_action_id: the id of the
-- geneva.bulk_workflows call it is part of, or NULL. A parameter, not a
-- setting: a caller cannot name a bulk call it did not make.
--
-- Called by: geneva.retry_workflow (NULL), geneva.bulk_workflows (its own row's id).
-- Raises: as geneva.retry_workflow.
create or replace function geneva._retry_workflow(p_workflow_id bigint, p_from_step text, p_bulk_action_id bigint)
returns bigint
language plpgsql
volatile
set search_path = pg_catalog, pg_temp
as $$
declare
  v_now timestamptz := geneva.now();
  v_workflow geneva.workflows := geneva._lock_workflow(p_workflow_id);
  v_definition geneva.workflow_definitions;
  v_execution geneva.step_executions;
  v_effect record;
  v_step text;
  v_new geneva.workflows;
  v_was text := v_workflow.state;
begin
  if v_workflow.state not in ('paused', 'finished', 'canceled') then
    raise exception 'workflow % cannot be retried', p_workflow_id
      using errcode = '55000',
            detail = format('Workflow is %s.', v_workflow.state),
            hint = 'Pause or cancel it first: only paused, finished and canceled workflows can be retried.',
            table = 'workflows';
  end if;

  v_definition := geneva._definition(v_workflow.workflow_type);
  if v_definition.workflow_type is null then
    raise exception 'unknown workflow type %', v_workflow.workflow_type
      using errcode = 'WF001',
            hint = 'Register the type with geneva.define_workflow (the Go worker does it at start-up).',
            table = 'workflow_definitions';
  end if;

  v_step := coalesce(
    p_from_step,
    case when v_workflow.state <> 'finished' then v_workflow.next_step_name end,
    v_definition.step_names[1]
  );
  if v_step is null or not v_step = any(v_definition.step_names) then
    raise exception 'workflow type % has no step %', v_workflow.workflow_type, coalesce(v_step, 'to retry from')
      using errcode = '22023',
            detail = format('Its steps are %s.', coalesce(nullif(array_to_string(v_definition.step_names, ', '), ''), 'none')),
            hint = 'Name one of its steps.';
  end if;

  -- guard: a paused original is canceled, as cancel_workflow does
  if v_workflow.state = 'paused' then
    v_execution := geneva._lock_active_execution(p_workflow_id);
    select e.* into strict v_effect
    from geneva._signal_effects() e
    where e.cause = 'operator' and e.signal = 'cancel';
    if v_execution.id is not null then
      perform geneva._end_execution(v_execution, v_effect.execution_state, v_effect.outcome);
    end if;
    v_workflow := geneva._advance(v_workflow, null, v_effect.workflow_move, null);
  end if;

  v_new := v_workflow;
  v_new.id := geneva._workflow_id(v_new.hero_type, v_new.hero_id, v_new.parent_id);
  v_new.state := 'ready';
  v_new.current_step_name := null;
  v_new.next_step_name := v_step;
  v_new.requested_action := null;
  v_new.created_at := v_now;
  v_new.updated_at := v_now;
  v_new.started_at := null;
  v_new.transitioned_at := null;
  v_new.paused_at := null;
  v_new.finished_at := null;
  v_new.canceled_at := null;
  v_new.hero_missing_at := null;
  v_new.retried_from := p_workflow_id;
  -- a child's new run is a child of the same parent, counted on it below;
  -- it is not its parent's step's child (the original keeps the key), and
  -- has no children of its own yet
  v_new.child_key := null;
  v_new.children := 0;
  v_new.children_ended := 0;
  -- a new run, under the version current now
  v_new.definition_version := v_definition.version;
  v_new.started_version := v_definition.version;

  -- the only inserters of workflows (sql/guards/workflows_guard_insert.sql)
  perform pg_catalog.set_config('geneva.inserting', 'on', true);
  begin
    insert into geneva.workflows select v_new.*;
  exception when unique_violation then
    raise exception 'hero % % already has an ongoing % workflow', v_new.hero_type, v_new.hero_id, v_new.workflow_type
      using errcode = '23505',
            detail = format('Workflow %s was %s.', p_workflow_id, v_was),
            hint = 'Finish or cancel the other one first.',
            table = 'workflows',
            constraint = 'workflows_one_ongoing_per_hero';
  end;
  perform pg_catalog.set_config('geneva.inserting', '', true);

  -- a child's new run counts on its parent (geneva._children_count, under
  -- its row lock, taken after the child's as a child's end takes it), ended
  -- or not, as the child it repeats did: its end is then counted as any
  -- child's, and the parent's join waits for it while it has not begun
  -- (a parent moved into history, its children all ended, counts none)
  if v_new.parent_id is not null then
    perform from geneva.workflows w where w.id = v_new.parent_id for no key update;
    if found then
      perform geneva._children_count(v_new.parent_id, array[v_new.id], false);
    end if;
  end if;

  perform geneva._insert_execution(v_new, v_definition, v_step, v_now, true, p_await => true);

  perform geneva._log_action(
    'retry_workflow', p_workflow_id, jsonb_build_object('from_step', p_from_step),
    jsonb_build_object('workflow_id', v_new.id, 'from_step', v_step, 'original_state', v_was),
    p_bulk_action_id => p_bulk_action_id
  );
  return v_new.id;
end;
$$;
