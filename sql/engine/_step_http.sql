-- geneva._step_http: a step's "http" in a definition (its endpoint, timeout,
-- headers and queue: see geneva._validate_http), NULL for a step a Go worker
-- runs or one no longer defined. What the worker that runs HTTP steps calls,
-- read from the current definition when the step starts, with its timeout
-- in seconds (a number: the definition may give an interval's text, or
-- none: the default, 30 seconds, is decided here).
--
-- Called by: geneva.start_steps, geneva._end_running (a step started
-- inline). Like geneva.now() it has no `set search_path`, so that the
-- planner inlines it into its callers (it names only pg_catalog's functions).
create or replace function geneva._step_http(
  p_definition jsonb,
  p_step_names text[],
  p_step_name text
)
returns jsonb
language sql
stable
parallel safe
as $$
  -- (no FROM: a function whose body has one is not inlined, but planned
  -- anew at every call of the statement that calls it)
  select case
      when p_definition -> 'steps' -> (pg_catalog.array_position(p_step_names, p_step_name) - 1) -> 'http' is null
        then null
      when pg_catalog.jsonb_typeof(
          p_definition -> 'steps' -> (pg_catalog.array_position(p_step_names, p_step_name) - 1) -> 'http' -> 'timeout'
        ) = 'number'
        then p_definition -> 'steps' -> (pg_catalog.array_position(p_step_names, p_step_name) - 1) -> 'http'
      -- the default, written only here: 30 seconds
      else p_definition -> 'steps' -> (pg_catalog.array_position(p_step_names, p_step_name) - 1) -> 'http'
        || pg_catalog.jsonb_build_object('timeout', pg_catalog.date_part('epoch', coalesce(
          (p_definition -> 'steps' -> (pg_catalog.array_position(p_step_names, p_step_name) - 1) -> 'http' ->> 'timeout')::interval,
          interval '30 seconds'
        )))
    end
$$;
