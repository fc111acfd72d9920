-- geneva.housekeep: one round of housekeeping, in one short transaction.
--
-- Called by: geneva.housekeep_if_due (every worker's periodic round, with no
-- arguments), `geneva housekeep`, operators. Granted to operators only: its
-- thresholds decide what is deleted and what is recovered, so a worker's
-- role may not choose them (docs/security.md).
--
-- Each threshold not given (NULL) is the setting of
-- geneva.housekeeping_settings (geneva.set_housekeeping_settings), whose
-- defaults are the only ones: retention 30 days, stuck in progress 1 hour,
-- stuck scheduled 15 minutes, 'reattempt', batches of 1000.
-- p_keep_forever => true deletes nothing this round, whatever the setting
-- (NULL p_retention cannot say it: it means the setting).
--
-- 1. History (docs/history.md; geneva._history_ahead, _move_ended,
--    _history_retention): creates the history partitions of the current
--    interval and the next two (partition_interval); moves up to the batch
--    size of whole trees of ended workflows, each member ended before now -
--    move_after (or now - retention, when shorter), oldest end first, into
--    the history tables (not a deletion: workflow_counts still counts
--    them); and drops, or with archive = 'detach' detaches, every history
--    partition whose interval ended before now - retention, taking what it
--    held off workflow_counts. No retention (the setting NULL, or
--    p_keep_forever) drops nothing; the move goes on.
--    Deletes, as many at most, of the operators' actions
--    (geneva.operator_actions) recorded before now - the action retention
--    (a setting of its own, whatever the round is given, and never less
--    than its floor: an operator's round cannot erase the log); and of
--    create_workflow's idempotency keys past their time (whatever the
--    retention).
-- 2. Recovers up to the batch size of executions in_progress with no start,
--    checkpoint or heartbeat (updated_at) since now - stuck in progress after
--    (their worker died), and up to the batch size of scheduled executions of
--    ready workflows overdue since now - stuck scheduled after (their job was
--    lost, or the queue is that far behind), by the recovery action:
--    'reattempt' (completed/recovered, the same step scheduled now) or
--    'cancel' (canceled/recovered, workflow canceled). Executions of paused
--    workflows are never recovered. A scheduled execution whose River job
--    still waits is late, not lost: it is recovered in place (due now, no new
--    row, no attempt; see geneva._recover_execution).
-- 3. Repairs up to the batch size of workflows whose state has no matching
--    active execution (geneva.orphan_workflows; see geneva._repair_orphan).
-- 4. Offers the keys of limits with executions waiting their free slots (a
--    backstop: an end frees its slots at once), deletes the rate windows
--    that have passed, and the rows (geneva.limit_keys, geneva.limit_slots)
--    of up to the batch size of keys with no slot held, no one waiting and
--    no window. Executions waiting for a slot are never recovered as stuck.
-- 5. Flags runaway chains (geneva._flag_runaways: the settings
--    runaway_executions and runaway_repeats; geneva.runaway_workflows):
--    reads the executions inserted since the last round's check, up to 100
--    times the batch size. Flagged workflows run on.
-- 6. Folds the counts of ended workflows (geneva._fold_workflow_counts) and
--    of ended executions (geneva._fold_ended_executions).
--
-- Locks: the rows of the trees it moves (skip locked: a tree with a member
-- another transaction holds waits for a later round); the history parents,
-- ACCESS EXCLUSIVE, when it drops or detaches (without waiting: a reader of
-- history holding them puts the drop off to a later round) or creates a
-- partition; each recovered execution's workflow row, then the execution row,
-- then the locks of the limit keys it holds slots of (geneva.limit_keys),
-- skipping rows other transactions hold (the next round gets them); the
-- keys' rows it offers or deletes, and the slots' rows it deletes, likewise;
-- the settings row is read, not locked; the row of
-- geneva.housekeeping_rounds (the runaway check's mark), waiting for a
-- worker's round that holds it. A round given any argument is an
-- operator's action: recorded (geneva._log_action, verb housekeep, with
-- its arguments and counts); the workers' rounds (none given) are not.
-- Returns the counts: {"workflows_cleaned_up", "step_executions_cleaned_up"
-- (what the partitions dropped or detached held), "workflows_moved",
-- "partitions_created", "partitions_dropped", "partitions_detached"
-- (intervals: each is one partition of each history table),
-- "actions_cleaned_up", "idempotency_keys_cleaned_up",
-- "stuck_in_progress_recovered", "stuck_scheduled_recovered",
-- "orphans_repaired", "runaways_flagged", "more"}; "more"
-- is true when a batch was full and made progress, so another round may find
-- more.
-- Raises: 22004 for a NULL p_keep_forever; 22023 for an unknown recovery
-- action, a non-positive batch size, a negative interval, or a retention
-- with p_keep_forever (geneva._check_housekeeping_settings).
create or replace function geneva.housekeep(
  p_retention interval default null,
  p_stuck_in_progress_after interval default null,
  p_stuck_scheduled_after interval default null,
  p_recovery_action text default null,
  p_batch_size integer default null,
  p_keep_forever boolean default false
)
returns jsonb
language plpgsql
volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
declare
  v_now timestamptz := geneva.now();
  v_settings geneva.housekeeping_settings;
  v_retention interval;
  v_stuck_in_progress_after interval;
  v_stuck_scheduled_after interval;
  v_recovery_action text;
  v_batch_size integer;
  v_deleted bigint := 0;
  v_executions_deleted bigint := 0;
  v_moved integer := 0;
  v_created integer := 0;
  v_partitions integer := 0;
  v_in_progress integer := 0;
  v_scheduled integer := 0;
  v_candidates integer := 0;
  v_orphans integer := 0;
  v_workflow_id bigint;
  v_full boolean := false;
  v_execution_id bigint;
  v_actions integer := 0;
  v_keys integer := 0;
  v_result jsonb;
  v_key text;
  v_runaways integer;
  v_runaways_more boolean;
begin
  -- guard: the arguments given, then the settings for those not given
  perform geneva._check_housekeeping_settings(
    p_retention, p_stuck_in_progress_after, p_stuck_scheduled_after, p_recovery_action, p_batch_size, p_keep_forever,
    null -- (one round has no interval)
  );
  v_settings := geneva._housekeeping_settings();
  v_retention := case when not p_keep_forever then coalesce(p_retention, v_settings.retention) end;
  v_stuck_in_progress_after := coalesce(p_stuck_in_progress_after, v_settings.stuck_in_progress_after);
  v_stuck_scheduled_after := coalesce(p_stuck_scheduled_after, v_settings.stuck_scheduled_after);
  v_recovery_action := coalesce(p_recovery_action, v_settings.recovery_action);
  v_batch_size := coalesce(p_batch_size, v_settings.batch_size);

  -- 1. history (docs/history.md): the partitions ahead; the move of whole
  -- ended trees, move_after after their end (or their retention, when
  -- shorter: what is past it leaves the live tables to be dropped with its
  -- partition); retention's drop (or detach) of the expired partitions
  v_created := geneva._history_ahead(v_now);
  select m.moved, m.more into v_moved, v_full
  from geneva._move_ended(v_now - least(v_settings.move_after, coalesce(v_retention, v_settings.move_after)), v_batch_size) m;
  if v_retention is not null then
    select r.partitions, r.workflows, r.step_executions into v_partitions, v_deleted, v_executions_deleted
    from geneva._history_retention(v_now - v_retention, v_settings.archive) r;
  end if;

  -- the operators' actions, after the log's own retention, never younger
  -- than its floor
  perform pg_catalog.set_config('geneva.retention', 'on', true);
  delete from geneva.operator_actions a
  where a.id in (
    select o.id from geneva.operator_actions o
    where o.at < v_now - greatest(v_settings.action_retention, v_settings.action_retention_floor)
    order by o.at
    limit v_batch_size
  );
  get diagnostics v_actions = row_count;
  perform pg_catalog.set_config('geneva.retention', '', true);
  v_full := v_full or v_actions = v_batch_size;

  -- expired idempotency keys (a create taking one over waits for its row)
  perform pg_catalog.set_config('geneva.retention', 'on', true);
  delete from geneva.idempotency_keys k
  where (k.workflow_type, k.idempotency_key) in (
    select o.workflow_type, o.idempotency_key from geneva.idempotency_keys o
    where o.expires_at <= v_now
    order by o.expires_at
    limit v_batch_size
    for update skip locked
  );
  get diagnostics v_keys = row_count;
  perform pg_catalog.set_config('geneva.retention', '', true);
  v_full := v_full or v_keys = v_batch_size;

  -- 2. stuck in_progress: no start or checkpoint for too long
  v_candidates := 0;
  for v_execution_id in
    select e.id
    from geneva.step_executions e
    where e.state = 'in_progress'
      and e.updated_at < v_now - v_stuck_in_progress_after
    order by e.updated_at
    limit v_batch_size
  loop
    v_candidates := v_candidates + 1;
    if geneva._recover_execution(
      v_execution_id, v_recovery_action, v_now - v_stuck_in_progress_after, '-infinity'
    ) then
      v_in_progress := v_in_progress + 1;
    end if;
  end loop;
  v_full := v_full or (v_candidates = v_batch_size and v_in_progress > 0);

  -- 3. stuck scheduled: overdue, the workflow ready (never paused)
  v_candidates := 0;
  for v_execution_id in
    select e.id
    from geneva.step_executions e
    join geneva.workflows w on w.id = e.workflow_id
    where e.state = 'scheduled'
      and e.scheduled_for < v_now - v_stuck_scheduled_after
      and e.limit_wait_key is null
      and w.state = 'ready'
    order by e.scheduled_for
    limit v_batch_size
  loop
    v_candidates := v_candidates + 1;
    if geneva._recover_execution(
      v_execution_id, v_recovery_action, '-infinity', v_now - v_stuck_scheduled_after
    ) then
      v_scheduled := v_scheduled + 1;
    end if;
  end loop;
  v_full := v_full or (v_candidates = v_batch_size and v_scheduled > 0);

  -- 4. orphans: a workflow state without its active execution
  v_candidates := 0;
  for v_workflow_id in
    select o.workflow_id from geneva.orphan_workflows o limit v_batch_size
  loop
    v_candidates := v_candidates + 1;
    if geneva._repair_orphan(v_workflow_id) then
      v_orphans := v_orphans + 1;
    end if;
  end loop;
  v_full := v_full or (v_candidates = v_batch_size and v_orphans > 0);

  -- 5. limits: every key with executions waiting is offered its free slots
  -- (a backstop: an end frees its slots at once), each whose lock is free
  -- now (not waited for; geneva._limit_lock takes it again at no cost);
  -- the rate windows that have passed go, and so do the rows of keys with
  -- no slot held, no one waiting and no window (those whose lock and slots
  -- are free now: a claim may be taking a free slot)
  perform geneva._limit_release(array(
    select k.limit_key
    from geneva.limit_keys k
    where k.limit_key in (
      select e.limit_wait_key
      from geneva.step_executions e
      -- (a waiter is scheduled: see geneva.step_executions_limit_waiting)
      where e.limit_wait_key is not null
    )
    order by k.limit_key
    for update skip locked
  ));
  perform pg_catalog.set_config('geneva.limiting', 'on', true);
  delete from geneva.limit_windows lw where lw.window_end < v_now;
  for v_key in
    select k.limit_key
    from geneva.limit_keys k
    where not exists (select from geneva.limit_slots s where s.limit_key = k.limit_key and s.workflow_id is not null)
      and not exists (
        select from geneva.step_executions e
        where e.limit_wait_key >= k.limit_key and e.limit_wait_key <= k.limit_key
      )
      and not exists (select from geneva.limit_windows lw where lw.limit_key = k.limit_key)
    order by k.limit_key
    limit v_batch_size
    for update skip locked
  loop
    if (
      select count(*)
      from (select from geneva.limit_slots s where s.limit_key = v_key order by s.slot for update skip locked) l
    ) = (select count(*) from geneva.limit_slots s where s.limit_key = v_key) then
      delete from geneva.limit_slots s where s.limit_key = v_key;
      delete from geneva.limit_keys k where k.limit_key = v_key;
    end if;
  end loop;
  perform pg_catalog.set_config('geneva.limiting', '', true);

  -- 6. runaway chains: the workflows the executions inserted since the last
  -- check belong to, flagged when past the settings (never stopped)
  select f.flagged, f.more into v_runaways, v_runaways_more
  from geneva._flag_runaways(v_settings, least(v_batch_size::bigint * 100, 2147483647)::integer) f;
  v_full := v_full or v_runaways_more;

  -- 7. the counts of ended workflows (geneva.workflow_counts) and executions
  -- (geneva.step_stats, geneva.step_throughput, geneva.engine_metrics)
  perform geneva._fold_workflow_counts();
  perform geneva._fold_ended_executions();

  v_result := jsonb_build_object(
    'orphans_repaired', v_orphans,
    'workflows_cleaned_up', v_deleted,
    'step_executions_cleaned_up', v_executions_deleted,
    'workflows_moved', v_moved,
    'partitions_created', v_created,
    'partitions_dropped', case when v_settings.archive = 'drop' then v_partitions else 0 end,
    'partitions_detached', case when v_settings.archive = 'detach' then v_partitions else 0 end,
    'actions_cleaned_up', v_actions,
    'idempotency_keys_cleaned_up', v_keys,
    'stuck_in_progress_recovered', v_in_progress,
    'stuck_scheduled_recovered', v_scheduled,
    'runaways_flagged', v_runaways,
    'more', v_full
  );
  if p_keep_forever or p_retention is not null or p_stuck_in_progress_after is not null
    or p_stuck_scheduled_after is not null or p_recovery_action is not null or p_batch_size is not null then
    perform geneva._log_action(
      'housekeep', null,
      jsonb_strip_nulls(jsonb_build_object(
        'retention', p_retention, 'stuck_in_progress_after', p_stuck_in_progress_after,
        'stuck_scheduled_after', p_stuck_scheduled_after, 'recovery_action', p_recovery_action,
        'batch_size', p_batch_size, 'keep_forever', nullif(p_keep_forever, false)
      )),
      v_result
    );
  end if;
  return v_result;
end;
$$;

comment on function geneva.housekeep(interval, interval, interval, text, integer, boolean) is
'One round of housekeeping (operators): moves ended workflows into history, drops (or detaches) history partitions past retention, recovers stuck executions; each threshold not given is geneva.housekeeping_settings''s; returns counts.';
