-- geneva._signal_effects: the one table of what each way a step execution
-- can end does to it and to its workflow: docs/sql-api.md's outcome table,
-- which a test compares with it (tests/readme_outcomes_test.go).
--
-- A row is keyed by its cause and its signal:
--   step        what complete_step's p_signal (a step that returned) says
--   exception   what a step's error does (geneva._exception_effect): an
--               exception policy's action, or a handler's decision (the
--               only source of its "finished")
--   exhausted   a reattempt policy's terminal_action, once the step's
--               consecutive exception reattempts reached the cap
--   precondition  what start_step records instead of starting the step: the
--               step is no longer defined, the hero is missing (also when
--               the hero trigger of geneva.track_hero sees it deleted),
--               cancel_if or skip_if held
--   timeout     what start_steps records for a step that awaited an event
--               (its definition's "await") until its timeout: the await's
--               on_timeout (cancel, pause or skip; run starts the step
--               without an event and ends nothing)
--   worker      interrupt_step: a shutting-down worker gives the step back
--   housekeeping  geneva.housekeep's p_recovery_action for a stuck execution
--   repair      orphan: housekeeping's repair of the active execution of a
--               workflow whose state does not match it (geneva._repair_orphan)
--   operator    cancel_workflow, skip_step and schedule_step ending a
--               workflow's scheduled (or paused) execution, and the next
--               execution an operator's cancel stopped (geneva._advance)
--   event       an event of its type's cancel_on sent to a workflow
--               (geneva._send_event): its scheduled (or paused) execution,
--               or the next execution it stopped at the step boundary
--   stray       an execution whose workflow can no longer take it: a late
--               job (start_step) or report (complete_step, fail_step,
--               interrupt_step) finds the workflow ended or not performing
-- and says what the execution becomes (execution_state, outcome), what
-- geneva._advance then does to the workflow (workflow_move: next, skip, same,
-- finish, cancel or pause; see geneva._advance; none: the caller moves the
-- workflow itself, or it stays as it is), and the metadata merged into
-- the ended execution (its caller adds what only it knows: the error classes,
-- the policy, a reattempt's or a recovery's reason). A rewind's successor
-- starts without the cursor (metadata.rewind).
--
-- Called by: the functions above, each for its own cause; complete_step,
-- fail_step (a handler's decision), geneva._validate_policy (a terminal
-- action) and housekeep (a recovery action) also check their argument against
-- it, as an unknown signal has no row; tests.
-- Like geneva.now() it has no `set search_path`: it names nothing, and
-- without the setting the planner inlines it into the caller's query, where it
-- costs a scan of these few rows.
create or replace function geneva._signal_effects()
returns table (
  cause text,
  signal text,
  execution_state text,
  outcome text,
  workflow_move text,
  metadata jsonb
)
language sql
immutable
parallel safe
as $$
  select *
  from (values
    ('step', 'success', 'completed', 'success', 'next', null::jsonb),
    ('step', 'finished', 'completed', 'success', 'finish', null),
    ('step', 'reattempt', 'completed', 'reattempted', 'same', '{"reattempt_reason": "flow_control"}'),
    ('step', 'reattempt_rewind', 'completed', 'reattempted', 'same',
      '{"reattempt_reason": "flow_control", "rewind": true}'),
    ('step', 'skip', 'skipped', 'skipped_by_flow_control', 'next', null),
    ('step', 'cancel', 'canceled', 'canceled_by_flow_control', 'cancel', null),
    ('step', 'pause', 'canceled', 'paused_by_flow_control', 'pause', null),
    ('step', 'suspend', 'completed', 'suspended', 'same', null),
    ('exception', 'pause', 'failed', 'paused_by_exception', 'pause', null),
    ('exception', 'cancel', 'failed', 'canceled_by_exception', 'cancel', null),
    ('exception', 'skip', 'skipped', 'skipped_by_exception', 'next', null),
    ('exception', 'reattempt', 'completed', 'reattempted_by_exception', 'same', null),
    ('exception', 'finished', 'completed', 'success', 'finish', null),
    ('exhausted', 'pause', 'failed', 'reattempts_exhausted', 'pause', null),
    ('exhausted', 'cancel', 'failed', 'reattempts_exhausted', 'cancel', null),
    ('exhausted', 'skip', 'failed', 'reattempts_exhausted', 'next', null),
    ('precondition', 'step_not_defined', 'failed', 'step_not_defined', 'pause', null),
    ('precondition', 'hero_missing', 'canceled', 'canceled_hero_missing', 'cancel', null),
    ('precondition', 'cancel', 'canceled', 'canceled_by_condition', 'cancel', null),
    ('precondition', 'skip', 'skipped', 'skipped_by_condition', 'next', null),
    ('timeout', 'cancel', 'canceled', 'canceled_by_timeout', 'cancel', null),
    ('timeout', 'pause', 'canceled', 'paused_by_timeout', 'pause', null),
    ('timeout', 'skip', 'skipped', 'skipped_by_timeout', 'next', null),
    ('worker', 'interrupt', 'completed', 'recovered', 'same', '{"recovery_reason": "interrupted"}'),
    ('housekeeping', 'reattempt', 'completed', 'recovered', 'same', null),
    ('housekeeping', 'cancel', 'canceled', 'recovered', 'cancel', null),
    ('repair', 'orphan', 'canceled', 'recovered', 'none', null),
    ('operator', 'cancel', 'canceled', 'canceled_externally', 'cancel', null),
    ('event', 'cancel', 'canceled', 'canceled_by_event', 'cancel', null),
    ('operator', 'skip', 'skipped', 'skipped_externally', 'skip', null),
    ('stray', 'cancel', 'canceled', 'canceled_externally', 'none', null)
  ) as e (cause, signal, execution_state, outcome, workflow_move, metadata)
$$;
