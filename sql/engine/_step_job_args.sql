-- geneva._step_job_args: the arguments of the River job that triggers a step
-- execution: its id and the immutable facts a worker needs to evaluate its
-- conditions without a read (workflow id and type, hero, step name). The
-- job's contract with the Go worker (worker.StepArgs, pinned by
-- worker/defaults_internal_test.go), written once.
--
-- Called by: geneva._enqueue_step (one job), geneva._advance_many (a batch's
-- jobs, in one INSERT). Like geneva.now() it has no `set search_path`: it
-- names nothing but pg_catalog's jsonb_build_object, and without the setting
-- the planner inlines it into the caller's INSERT (stable, as
-- jsonb_build_object is: an immutable function calling it would not be
-- inlined).
create or replace function geneva._step_job_args(
  p_execution_id bigint,
  p_workflow_id bigint,
  p_workflow_type text,
  p_hero_type text,
  p_hero_id text,
  p_step_name text
)
returns jsonb
language sql
stable
parallel safe
as $$
  select pg_catalog.jsonb_build_object(
    'execution_id', p_execution_id,
    'workflow_id', p_workflow_id,
    'workflow_type', p_workflow_type,
    'hero_type', p_hero_type,
    'hero_id', p_hero_id,
    'step_name', p_step_name
  )
$$;
