-- geneva.drop_archived_partition: drops a history partition once `geneva
-- archive` has written it out and synced the file (docs/history.md,
-- "Archive"): the partition of geneva.workflows_history named, with its
-- siblings of executions and events, detached first when still attached,
-- then dropped, in the caller's transaction. p_workflows is how many
-- workflows the archive wrote: a partition that holds another number now
-- is refused (it changed since; write it again), so nothing is dropped that
-- no file holds. A partition already gone returns false: dropping again
-- after a crash is harmless.
--
-- Its workflows leave geneva.workflow_counts, and its events
-- geneva.event_stats: an attached partition's, as retention's drop takes
-- them off (geneva._history_forget: its days' geneva.history_counts and
-- history_event_counts); a detached one left the counts when housekeeping
-- detached it.
--
-- Called by: operators, `geneva archive`. Records the action
-- (geneva._log_action, verb archive).
-- Locks: an attached partition's three parents (geneva.workflows_history,
-- step_executions_history, events_history, with their partitions), ACCESS
-- EXCLUSIVE, as DETACH takes them; a detached partition's tables only;
-- all asked for without waiting (a reader of history holding any makes
-- the call fail, 55P03, rather than queue readers behind it or deadlock
-- with one). Claims and ends never wait: the live tables are not locked.
-- Returns true when it dropped the partition, false when there was none.
-- Raises: 22004 for a NULL argument; 22023 for a name that is not a history
-- partition's, and for one whose range ends after the retention's horizon
-- (geneva._archive_horizon); 55000 when the partition holds another number
-- of workflows than p_workflows; 55P03 when a reader holds a lock on the
-- history tables (nothing dropped: call again).
create or replace function geneva.drop_archived_partition(p_partition text, p_workflows bigint)
returns boolean
language plpgsql
volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
declare
  v_part record;
  v_count bigint;
begin
  if p_workflows is null then
    raise exception 'workflows written must not be null' using errcode = '22004';
  end if;
  select p.* into v_part from geneva._archive_partition(p_partition) p;
  if not found then
    return false;
  end if;
  perform geneva._archive_horizon(v_part.upper_day);

  -- without waiting: a reader of history (a view, get_workflow) holds the
  -- parents while it runs and locks them one by one as it plans, so a drop
  -- waiting for one while holding another would queue every reader behind
  -- it, or meet that reader in a deadlock; it fails now and is run again
  -- (geneva archive says so)
  begin
    if v_part.attached then
      lock table geneva.workflows_history, geneva.step_executions_history, geneva.events_history
        in access exclusive mode nowait;
    end if;
    execute format('lock table geneva.%I, geneva.%I, geneva.%I in access exclusive mode nowait',
      v_part.partition_name, v_part.executions_table, v_part.events_table);
  exception when lock_not_available then
    raise exception 'history partition % is being read: not dropped, try again', p_partition
      using errcode = '55P03',
            detail = 'A reader of history (a view, get_workflow, a list) holds a lock on the history tables; dropping waits for no reader.',
            hint = 'Run geneva archive (or drop_archived_partition) again: the partition is written again whole, then dropped.';
  end;

  execute format('select count(*) from geneva.%I', v_part.partition_name) into v_count;
  if v_count <> p_workflows then
    raise exception 'history partition % holds % workflows, the archive %', p_partition, v_count, p_workflows
      using errcode = '55000',
            hint = 'Write the partition out again (geneva archive), then drop it.';
  end if;

  if v_part.attached then
    perform geneva._history_forget(v_part.lower_day, v_part.upper_day);
    execute format('alter table geneva.events_history detach partition geneva.%I', v_part.events_table);
    execute format('alter table geneva.step_executions_history detach partition geneva.%I', v_part.executions_table);
    execute format('alter table geneva.workflows_history detach partition geneva.%I', v_part.partition_name);
  end if;
  execute format('drop table geneva.%I, geneva.%I, geneva.%I',
    v_part.events_table, v_part.executions_table, v_part.partition_name);

  perform geneva._log_action(
    'archive', null,
    jsonb_build_object('partition', p_partition, 'workflows', p_workflows),
    jsonb_build_object('dropped', true, 'attached', v_part.attached,
      'lower_day', v_part.lower_day, 'upper_day', v_part.upper_day)
  );
  return true;
end;
$$;

comment on function geneva.drop_archived_partition(text, bigint) is
'Drops a history partition geneva archive has written out (detaching it first when attached), if it holds the workflows the archive wrote; false when it is gone already.';
