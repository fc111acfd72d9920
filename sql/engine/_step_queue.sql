-- geneva._step_queue: the River queue of a step's jobs: the definition's
-- step_queues entry for it (an HTTP step's http queue, default geneva_http;
-- the type's queue for a step a Go worker runs), or the type's queue for a
-- step no longer defined (its job runs, and start_steps records it).
--
-- Called by: geneva._advance_many, geneva._insert_execution,
-- geneva._ensure_job, geneva.start_steps. Like geneva.now() it has no `set search_path`, so that
-- the planner inlines it into its callers; it
-- names only pg_catalog's array_position.
create or replace function geneva._step_queue(
  p_step_names text[],
  p_step_queues text[],
  p_queue text,
  p_step_name text
)
returns text
language sql
immutable
parallel safe
as $$
  select coalesce(p_step_queues[pg_catalog.array_position(p_step_names, p_step_name)], p_queue)
$$;
