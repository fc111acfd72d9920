-- geneva._complete_job: marks the River job a worker ran as completed, in the
-- transaction that records what the job's step did, as River's JobCompleteTx
-- would (state completed, finalized_at now; only while it is running).
-- River's own completion of the job afterwards finds it done and does
-- nothing.
--
-- Called by: complete_step, fail_step, interrupt_step, with the p_job_id the
-- worker passed (NULL: nothing to do). Locks the job row.
-- (PL/pgSQL rather than SQL, here and in the other small helpers of the hot
-- path: PostgreSQL plans a non-inlined SQL function's query at every call,
-- PL/pgSQL once per session. Every lookup of a River job compares its state
-- as text: compared as River's enum, the planner prefers River's fetch index
-- (state, queue, ...) to the primary key and scans every job in that state.)
create or replace function geneva._complete_job(p_job_id bigint)
returns void
language plpgsql
volatile
set search_path = pg_catalog, pg_temp
as $$
begin
  if p_job_id is not null then
    update public.river_job j
    set state = 'completed',
      finalized_at = now()
    where j.id = p_job_id
      and j.state::text = 'running';
  end if;
end;
$$;
