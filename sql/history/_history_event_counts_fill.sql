-- geneva._history_event_counts_fill: folds into geneva.history_event_counts
-- the events of history that no move folded (docs/history.md, "Counts and
-- invariants"): those moved by an earlier Geneva, before the move folded
-- them, which geneva.event_stats, reading the folded counts only, would no
-- longer count. A day is folded when history holds workflows that ended on
-- it (geneva.history_counts, the move's) and history_event_counts has no row
-- of it: its events are read from their partition (pruned by the day),
-- counted by type and name, and inserted. Idempotent: a day folded once has
-- its rows, and the move folds every later day's events as it moves them; a
-- day without events is read again at each call (its partition's events of
-- that day: none, with daily partitions). A detached partition's days are
-- no longer in history_counts (its events are counted no more, as its
-- workflows).
--
-- Called by: sql/install.sql, at every install (geneva migrate, psql -f
-- dist/geneva.sql), after the move that folds was installed in the same
-- transaction. Sets geneva.moving around its insert (history_guard).
-- Returns the days folded.
create or replace function geneva._history_event_counts_fill()
returns integer
language plpgsql
volatile
set search_path = pg_catalog, pg_temp
as $$
declare
  v_days date[];
begin
  select coalesce(array_agg(distinct c.ended_on), '{}') into v_days
  from geneva.history_counts c
  where not exists (select from geneva.history_event_counts e where e.ended_on = c.ended_on);
  if cardinality(v_days) = 0 then
    return 0;
  end if;
  perform pg_catalog.set_config('geneva.moving', 'on', true);
  insert into geneva.history_event_counts (ended_on, workflow_type, event, sent, consumed, last_sent_at)
  select x.ended_on, w.workflow_type, x.name, count(*), count(x.consumed_by), max(x.sent_at)
  from geneva.events_history x
  join geneva.workflows_history w on w.id = x.workflow_id and w.ended_on = x.ended_on
  where x.ended_on = any(v_days) and w.ended_on = any(v_days)
  group by 1, 2, 3;
  perform pg_catalog.set_config('geneva.moving', '', true);
  return (select count(distinct e.ended_on)::integer from geneva.history_event_counts e where e.ended_on = any(v_days));
end;
$$;
