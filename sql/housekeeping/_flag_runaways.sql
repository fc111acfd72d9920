-- geneva._flag_runaways: housekeeping's runaway check (manual: keep
-- workflows short-lived). Flags, in geneva.runaways, the ongoing workflows
-- with more executions than p_settings.runaway_executions, or whose one step
-- was executed more than p_settings.runaway_repeats times in a row (an
-- execution's attempt: reattempts, a resumable step's parts). A flag is a
-- note for operators (geneva.runaway_workflows), never an action: the
-- workflow runs on, and its flag stays while it is ongoing.
--
-- Cheap whatever the history: it reads only the executions inserted since
-- the last check (ids above geneva.housekeeping_rounds.runaway_checked_id,
-- by the primary key, at most p_limit of them, oldest first), and counts the
-- executions of each workflow among them that is ongoing and not flagged,
-- by step_executions_workflow_id, stopping at runaway_executions + 1. A
-- workflow that runs away keeps inserting executions, so each of its new
-- ones brings it back here: an execution committed after a check passed its
-- id (ids are drawn before commit) is counted with the workflow's next.
--
-- Called by: geneva.housekeep (step 6), under the settings it read.
-- Locks: the row of geneva.housekeeping_rounds (its mark; a concurrent
-- round's waits); the flags it inserts.
-- Returns how many workflows it flagged, and whether it read p_limit
-- executions (more may wait).
create or replace function geneva._flag_runaways(
  p_settings geneva.housekeeping_settings,
  p_limit integer,
  out flagged integer,
  out more boolean
)
language plpgsql
volatile
set search_path = pg_catalog, pg_temp
as $$
declare
  v_now timestamptz := geneva.now();
  v_from bigint;
  v_to bigint;
  v_read integer;
begin
  select r.runaway_checked_id into v_from from geneva.housekeeping_rounds r where r.singleton for update;
  v_from := coalesce(v_from, 0);

  perform pg_catalog.set_config('geneva.flagging', 'on', true);
  with fresh as (
    select e.id, e.workflow_id, e.attempt
    from geneva.step_executions e
    where e.id > v_from
    order by e.id
    limit p_limit
  ),
  touched as (
    select f.workflow_id, max(f.attempt) as repeats
    from fresh f
    group by f.workflow_id
  ),
  runaway as (
    select t.workflow_id
    from touched t
    join geneva.workflows w on w.id = t.workflow_id
    where w.finished_at is null and w.canceled_at is null
      and not exists (select from geneva.runaways r where r.workflow_id = t.workflow_id)
      and (
        t.repeats > p_settings.runaway_repeats
        or (
          select count(*)
          from (
            select from geneva.step_executions e
            where e.workflow_id = t.workflow_id
            limit p_settings.runaway_executions + 1
          ) c
        ) > p_settings.runaway_executions
      )
  ),
  flags as (
    insert into geneva.runaways (workflow_id, flagged_at)
    select r.workflow_id, v_now from runaway r
    on conflict (workflow_id) do nothing
    returning 1
  )
  select (select count(*) from flags), (select max(f.id) from fresh f), (select count(*) from fresh f)
  into flagged, v_to, v_read;
  perform pg_catalog.set_config('geneva.flagging', '', true);

  if v_to is not null then
    perform pg_catalog.set_config('geneva.housekeeping_rounds', 'on', true);
    update geneva.housekeeping_rounds r
    set runaway_checked_id = greatest(r.runaway_checked_id, v_to)
    where r.singleton;
    perform pg_catalog.set_config('geneva.housekeeping_rounds', '', true);
  end if;
  more := v_read = p_limit;
end;
$$;
