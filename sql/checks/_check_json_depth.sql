-- geneva._check_json_depth: refuses JSON nested deeper than 64 arrays or
-- objects one inside another, before anything is written. PostgreSQL takes
-- JSON nested far deeper than a worker can decode (Go's encoding/json stops
-- at 10,000 levels), and a value the worker cannot read would fail the step
-- it comes with; no event or cursor needs more than a few levels.
--
-- One jsonpath, which visits each value at most 64 levels down and never
-- deeper, so its cost is the value's size, not its depth (a few
-- microseconds for an ordinary payload). NULL passes.
--
-- Called by: geneva._check_event (events' payloads: send_event,
-- send_hero_event), geneva.checkpoint_step (cursors, an HTTP step's reply's
-- among them). Takes no locks.
-- Raises: 22023 naming p_argument.
create or replace function geneva._check_json_depth(p_value jsonb, p_argument text)
returns void
language plpgsql
immutable
set search_path = pg_catalog, pg_temp
as $$
begin
  -- (an array or object at level 64, the root being level 0, is the 65th)
  if pg_catalog.jsonb_path_exists(p_value, 'strict $.**{64} ? (@.type() == "array" || @.type() == "object")') then
    raise exception '% is nested too deeply: the limit is 64 levels of arrays and objects', p_argument
      using errcode = '22023',
            hint = 'Flatten it: a worker decodes at most that many levels.';
  end if;
end;
$$;
