-- geneva.housekeep: one round of housekeeping, in one short transaction.
--
-- Called by: the worker's periodic housekeeping job (which calls it again
-- while it reports more to do), `geneva housekeep`, operators.
--
-- 1. Deletes up to p_batch_size finished or canceled workflows (with their
--    executions) that ended (transitioned_at) before now - p_retention; a NULL
--    retention deletes nothing.
-- 2. Recovers up to p_batch_size executions in_progress with no start,
--    checkpoint or heartbeat (updated_at) since now - p_stuck_in_progress_after
--    (their worker died), and up to p_batch_size scheduled executions of ready
--    workflows overdue since now - p_stuck_scheduled_after (their job was
--    lost, or the queue is that far behind), by p_recovery_action:
--    'reattempt' (completed/recovered, the same step scheduled now) or
--    'cancel' (canceled/recovered, workflow canceled). Executions of paused
--    workflows are never recovered. A scheduled execution whose River job
--    still waits is late, not lost: it is recovered in place (due now, no new
--    row, no attempt; see geneva._recover_execution).
-- 3. Repairs up to p_batch_size workflows whose state has no matching active
--    execution (geneva.orphan_workflows; see geneva._repair_orphan).
-- 4. Folds the counts of ended workflows (geneva._fold_workflow_counts) and
--    of ended executions (geneva._fold_ended_executions).
--
-- Locks: each recovered execution's workflow row, then the execution row,
-- skipping rows other transactions hold (the next round gets them).
-- Returns the counts: {"workflows_cleaned_up", "step_executions_cleaned_up",
-- "stuck_in_progress_recovered", "stuck_scheduled_recovered",
-- "orphans_repaired", "more"}; "more"
-- is true when a batch was full and made progress, so another round may find
-- more.
-- Raises: 22004 for a NULL recovery action or batch size; 22023 for an
-- unknown recovery action, a non-positive batch size or a negative interval.
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
security definer
set search_path = pg_catalog, pg_temp
as $$
declare
  v_now timestamptz := geneva.now();
  v_old bigint[];
  v_deleted integer := 0;
  v_executions_deleted integer := 0;
  v_in_progress integer := 0;
  v_scheduled integer := 0;
  v_candidates integer := 0;
  v_orphans integer := 0;
  v_workflow_id bigint;
  v_full boolean := false;
  v_execution_id bigint;
begin
  if p_recovery_action is null or p_batch_size is null then
    raise exception 'recovery action and batch size must not be null' using errcode = '22004';
  end if;
  if not exists (
    select from geneva._signal_effects() e where e.cause = 'housekeeping' and e.signal = p_recovery_action
  ) then
    raise exception 'unknown recovery action %', p_recovery_action
      using errcode = '22023',
            hint = format('Recovery actions are %s.', (
              select string_agg(e.signal, ' and ') from geneva._signal_effects() e where e.cause = 'housekeeping'
            ));
  end if;
  if p_batch_size < 1 then
    raise exception 'batch size must be positive' using errcode = '22023';
  end if;
  if p_retention < interval '0' or p_stuck_in_progress_after < interval '0'
    or p_stuck_scheduled_after < interval '0' then
    raise exception 'housekeeping intervals must not be negative' using errcode = '22023';
  end if;

  -- 1. retention (rows another transaction holds wait for the next round);
  -- the executions go with their workflows (on delete cascade), counted first
  if p_retention is not null then
    select coalesce(array_agg(w.id), '{}') into v_old
    from (
      select w.id
      from geneva.workflows w
      where w.state in ('finished', 'canceled')
        and w.transitioned_at < v_now - p_retention
      order by w.transitioned_at
      limit p_batch_size
      for update skip locked
    ) w;
    select count(*) into v_executions_deleted
    from geneva.step_executions e
    where e.workflow_id = any(v_old);
    -- the only deleter of workflows (sql/triggers/workflows_guard_columns.sql)
    perform pg_catalog.set_config('geneva.retention', 'on', true);
    delete from geneva.workflows w where w.id = any(v_old);
    get diagnostics v_deleted = row_count;
    perform pg_catalog.set_config('geneva.retention', '', true);
    v_full := v_deleted = p_batch_size;
  end if;

  -- 2. stuck in_progress: no start or checkpoint for too long
  if p_stuck_in_progress_after is not null then
    v_candidates := 0;
    for v_execution_id in
      select e.id
      from geneva.step_executions e
      where e.state = 'in_progress'
        and e.updated_at < v_now - p_stuck_in_progress_after
      order by e.updated_at
      limit p_batch_size
    loop
      v_candidates := v_candidates + 1;
      if geneva._recover_execution(
        v_execution_id, p_recovery_action, v_now - p_stuck_in_progress_after, '-infinity'
      ) then
        v_in_progress := v_in_progress + 1;
      end if;
    end loop;
    v_full := v_full or (v_candidates = p_batch_size and v_in_progress > 0);
  end if;

  -- 3. stuck scheduled: overdue, the workflow ready (never paused)
  if p_stuck_scheduled_after is not null then
    v_candidates := 0;
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
      v_candidates := v_candidates + 1;
      if geneva._recover_execution(
        v_execution_id, p_recovery_action, '-infinity', v_now - p_stuck_scheduled_after
      ) then
        v_scheduled := v_scheduled + 1;
      end if;
    end loop;
    v_full := v_full or (v_candidates = p_batch_size and v_scheduled > 0);
  end if;

  -- 4. orphans: a workflow state without its active execution
  v_candidates := 0;
  for v_workflow_id in
    select o.workflow_id from geneva.orphan_workflows o limit p_batch_size
  loop
    v_candidates := v_candidates + 1;
    if geneva._repair_orphan(v_workflow_id) then
      v_orphans := v_orphans + 1;
    end if;
  end loop;
  v_full := v_full or (v_candidates = p_batch_size and v_orphans > 0);

  -- 5. the counts of ended workflows (geneva.workflow_counts) and executions
  -- (geneva.step_stats, geneva.step_throughput, geneva.engine_metrics)
  perform geneva._fold_workflow_counts();
  perform geneva._fold_ended_executions();

  return jsonb_build_object(
    'orphans_repaired', v_orphans,
    'workflows_cleaned_up', v_deleted,
    'step_executions_cleaned_up', v_executions_deleted,
    'stuck_in_progress_recovered', v_in_progress,
    'stuck_scheduled_recovered', v_scheduled,
    'more', v_full
  );
end;
$$;

comment on function geneva.housekeep(interval, interval, interval, text, integer) is
'One round of housekeeping: deletes ended workflows past retention, recovers stuck executions; returns counts.';
