-- geneva.housekeep: one round of housekeeping, in one short transaction.
--
-- Called by: the worker's periodic housekeeping job (which calls it again
-- while it reports more to do), `geneva housekeep`, operators.
--
-- 1. Deletes up to p_batch_size finished or canceled workflows (with their
--    executions) that ended (transitioned_at) before now - p_retention; a NULL
--    retention deletes nothing.
-- 2. Recovers up to p_batch_size executions in_progress since before now -
--    p_stuck_in_progress_after (their worker died), and up to p_batch_size
--    scheduled executions of ready workflows overdue since before now -
--    p_stuck_scheduled_after (their job was lost), by p_recovery_action:
--    'reattempt' (completed/recovered, the same step scheduled now) or
--    'cancel' (canceled/recovered, workflow canceled). Executions of paused
--    workflows are never recovered.
--
-- Locks: each recovered execution's workflow row, then the execution row.
-- Returns the counts: {"workflows_deleted", "stuck_in_progress_recovered",
-- "stuck_scheduled_recovered", "more"}; "more" is true when a batch was full,
-- so another round may find more.
-- Raises: 22023 for an unknown recovery action, a non-positive batch size or
-- a negative interval.
create or replace function geneva.housekeep(
  p_retention interval default interval '30 days',
  p_stuck_in_progress_after interval default interval '1 hour',
  p_stuck_scheduled_after interval default interval '15 minutes',
  p_recovery_action text default 'reattempt',
  p_batch_size integer default 1000
)
returns jsonb
language plpgsql
volatile
set search_path = ''
as $$
declare
  v_now timestamptz := geneva.now();
  v_deleted integer := 0;
  v_in_progress integer := 0;
  v_scheduled integer := 0;
  v_execution_id bigint;
begin
  if p_recovery_action is null or p_recovery_action not in ('reattempt', 'cancel') then
    raise exception 'unknown recovery action %', p_recovery_action
      using errcode = '22023',
            hint = 'Recovery actions are reattempt and cancel.';
  end if;
  if p_batch_size is null or p_batch_size < 1 then
    raise exception 'batch size must be positive' using errcode = '22023';
  end if;
  if p_retention < interval '0' or p_stuck_in_progress_after < interval '0'
    or p_stuck_scheduled_after < interval '0' then
    raise exception 'housekeeping intervals must not be negative' using errcode = '22023';
  end if;

  -- 1. retention
  if p_retention is not null then
    with old as (
      select w.id
      from geneva.workflows w
      where w.state in ('finished', 'canceled')
        and w.transitioned_at < v_now - p_retention
      order by w.transitioned_at
      limit p_batch_size
      for update skip locked
    )
    delete from geneva.workflows w
    using old
    where w.id = old.id;
    get diagnostics v_deleted = row_count;
  end if;

  -- 2. stuck in_progress
  if p_stuck_in_progress_after is not null then
    for v_execution_id in
      select e.id
      from geneva.step_executions e
      where e.state = 'in_progress'
        and e.started_at < v_now - p_stuck_in_progress_after
      order by e.started_at
      limit p_batch_size
    loop
      if geneva._recover_execution(v_execution_id, p_recovery_action) then
        v_in_progress := v_in_progress + 1;
      end if;
    end loop;
  end if;

  -- 3. stuck scheduled (never those of paused workflows)
  if p_stuck_scheduled_after is not null then
    for v_execution_id in
      select e.id
      from geneva.step_executions e
      join geneva.workflows w on w.id = e.workflow_id
      where e.state = 'scheduled'
        and e.scheduled_for < v_now - p_stuck_scheduled_after
        and w.state = 'ready'
      order by e.scheduled_for
      limit p_batch_size
    loop
      if geneva._recover_execution(v_execution_id, p_recovery_action) then
        v_scheduled := v_scheduled + 1;
      end if;
    end loop;
  end if;

  return jsonb_build_object(
    'workflows_deleted', v_deleted,
    'stuck_in_progress_recovered', v_in_progress,
    'stuck_scheduled_recovered', v_scheduled,
    'more', v_deleted = p_batch_size or v_in_progress = p_batch_size or v_scheduled = p_batch_size
  );
end;
$$;

comment on function geneva.housekeep(interval, interval, interval, text, integer) is
'One round of housekeeping: deletes ended workflows past retention, recovers stuck executions; returns counts.';
