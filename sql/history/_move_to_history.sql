-- geneva._move_to_history: moves ended workflows out of the live tables into
-- history (docs/history.md): each workflow, its executions and its events
-- inserted into geneva.workflows_history, step_executions_history and
-- events_history under the day it ended (ended_on: its transitioned_at's
-- date in UTC), then deleted from the live tables (its executions, events
-- and runaway flag with it, by their cascades), in the caller's transaction.
-- The move is not a deletion: the counts (geneva.workflow_counts) still
-- count the workflow; retention's drop of its partition will, by what
-- geneva.history_counts (added to here, by day, type and state) says the
-- partition holds. Its events are folded likewise into
-- geneva.history_event_counts (by day, type and event name: sent, consumed,
-- last sent), in the statement that inserts them into history, for
-- geneva.event_stats.
--
-- Of p_ids, only the workflows that have ended and that no other
-- transaction holds are moved (skip locked: the rest wait for another
-- round). Callers pass whole ended trees (a parent with its children): a
-- parent's child keys and counts stay live while any of its tree could read
-- them.
--
-- Called by: geneva._move_ended (housekeeping's move, which passes whole
-- trees it has locked), tests. Sets geneva.moving and geneva.retention
-- around its writes (the history guards and the live tables' delete guards
-- read it). Locks the workflows' rows
-- (for update, skip locked), and the rows of geneva.history_counts and
-- history_event_counts it adds to, in their keys' order (the order a
-- second round moving at once takes them in).
-- Returns the ids moved.
create or replace function geneva._move_to_history(p_ids bigint[])
returns bigint[]
language plpgsql
volatile
set search_path = pg_catalog, pg_temp
as $$
declare
  v_ids bigint[];
  v_day date;
begin
  select array_agg(w.id order by w.id) into v_ids
  from (
    select w.id
    from geneva.workflows w
    where w.id = any(p_ids) and w.state in ('finished', 'canceled')
    order by w.id
    for update skip locked
  ) w;
  if v_ids is null then
    return '{}';
  end if;

  for v_day in
    select distinct (w.transitioned_at at time zone 'UTC')::date
    from geneva.workflows w
    where w.id = any(v_ids)
  loop
    -- a partition that cannot be made now (readers hold the history
    -- tables: geneva._history_partition) puts the whole move off, so that
    -- a tree never moves in part
    if geneva._history_partition(v_day) is null then
      return '{}';
    end if;
  end loop;

  perform pg_catalog.set_config('geneva.moving', 'on', true);
  insert into geneva.workflows_history
  select w.*, (w.transitioned_at at time zone 'UTC')::date
  from geneva.workflows w
  where w.id = any(v_ids);
  insert into geneva.step_executions_history
  select e.*, (w.transitioned_at at time zone 'UTC')::date
  from geneva.step_executions e
  join geneva.workflows w on w.id = e.workflow_id
  where e.workflow_id = any(v_ids);
  -- the events, and what they add to geneva.history_event_counts (by day,
  -- type and name: geneva.event_stats reads these, not the partitions),
  -- from the rows the insert returns
  with moved as (
    insert into geneva.events_history
    select x.*, (w.transitioned_at at time zone 'UTC')::date
    from geneva.events x
    join geneva.workflows w on w.id = x.workflow_id
    where x.workflow_id = any(v_ids)
    returning ended_on, workflow_id, name, consumed_by, sent_at
  )
  insert into geneva.history_event_counts as c (ended_on, workflow_type, event, sent, consumed, last_sent_at)
  select m.ended_on, w.workflow_type, m.name, count(*), count(m.consumed_by), max(m.sent_at)
  from moved m
  join geneva.workflows w on w.id = m.workflow_id
  group by 1, 2, 3
  order by 1, 2, 3
  on conflict (ended_on, workflow_type, event) do update
  set sent = c.sent + excluded.sent,
      consumed = c.consumed + excluded.consumed,
      last_sent_at = greatest(c.last_sent_at, excluded.last_sent_at);

  -- what history holds, for retention's counts (geneva.history_counts)
  insert into geneva.history_counts as c (ended_on, workflow_type, state, workflows, step_executions)
  select (w.transitioned_at at time zone 'UTC')::date, w.workflow_type, w.state, count(*),
    coalesce(sum((select count(*) from geneva.step_executions e where e.workflow_id = w.id)), 0)
  from geneva.workflows w
  where w.id = any(v_ids)
  group by 1, 2, 3
  order by 1, 2, 3
  on conflict (ended_on, workflow_type, state) do update
  set workflows = c.workflows + excluded.workflows,
      step_executions = c.step_executions + excluded.step_executions;

  perform pg_catalog.set_config('geneva.retention', 'on', true);
  delete from geneva.workflows w where w.id = any(v_ids);
  perform pg_catalog.set_config('geneva.retention', '', true);
  perform pg_catalog.set_config('geneva.moving', '', true);
  return v_ids;
end;
$$;
