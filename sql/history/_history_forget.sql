-- geneva._history_forget: what a history partition held leaves the counts,
-- as it is dropped or detached: the workflows that ended on its days
-- (geneva.history_counts, filled by the move) are taken off
-- geneva.workflow_counts (ended_workflow_count_deltas), and their
-- history_counts rows deleted, without reading the partition; so are their
-- events' counts (geneva.history_event_counts, filled by the move): they
-- leave geneva.event_stats. A detached partition's workflows and events are
-- counted no more, as a dropped one's: what geneva archive writes out later
-- is no longer the engine's.
--
-- Called by: geneva._history_retention (a partition dropped or detached),
-- geneva.drop_archived_partition (an attached partition dropped by geneva
-- archive; a detached one was forgotten when retention detached it).
-- Returns the workflows and executions forgotten.
create or replace function geneva._history_forget(p_lower date, p_upper date)
returns table (workflows bigint, step_executions bigint)
language plpgsql
volatile
set search_path = pg_catalog, pg_temp
as $$
declare
  v_w bigint;
  v_e bigint;
begin
  select coalesce(sum(c.workflows), 0), coalesce(sum(c.step_executions), 0) into v_w, v_e
  from geneva.history_counts c
  where c.ended_on >= p_lower and c.ended_on < p_upper;
  perform pg_catalog.set_config('geneva.folding', 'on', true);
  insert into geneva.ended_workflow_count_deltas (workflow_type, state, delta)
  select c.workflow_type, c.state, -sum(c.workflows)::integer
  from geneva.history_counts c
  where c.ended_on >= p_lower and c.ended_on < p_upper
  group by c.workflow_type, c.state;
  perform pg_catalog.set_config('geneva.folding', '', true);
  perform pg_catalog.set_config('geneva.retention', 'on', true);
  delete from geneva.history_counts c
  where c.ended_on >= p_lower and c.ended_on < p_upper;
  delete from geneva.history_event_counts c
  where c.ended_on >= p_lower and c.ended_on < p_upper;
  perform pg_catalog.set_config('geneva.retention', '', true);
  return query select v_w, v_e;
end;
$$;
