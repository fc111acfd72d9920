-- geneva.send_hero_event: sends an event to every ongoing workflow of a hero
-- (of any type), as geneva.send_event does to one: each keeps its own copy,
-- whether a step of it awaits the event now or later.
--
-- Called by: applications and operators; above all from a trigger on the
-- application's own table (docs/events.md), so that the event commits or
-- rolls back with the business write that caused it.
--
-- Locks: the hero's ongoing workflows in id order, then each one's active
-- execution. Records the call (geneva._log_action: the hero and the
-- event's name; the payload is in geneva.events).
-- Returns the number of workflows reached (0 when the hero has none
-- ongoing).
-- Raises: 22004 for a NULL hero type, hero id or name; 22023 for an empty
-- hero type, hero id or name, or a payload nested over 64 levels deep;
-- 22001 for a hero type or name over 255 bytes, a hero id over 1024 or a
-- payload over 1 MiB. Nothing is written on any error.
create or replace function geneva.send_hero_event(
  p_hero_type text,
  p_hero_id text,
  p_event text,
  p_payload jsonb default null
)
returns integer
language plpgsql
volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
declare
  v_workflow geneva.workflows;
  v_reached integer := 0;
begin
  if p_hero_type is null or p_hero_id is null then
    raise exception 'hero type and hero id must not be null' using errcode = '22004';
  end if;
  -- (bounded as create_workflow's, before anything is written or logged)
  perform geneva._check_length(p_hero_type, 255, 'hero type');
  perform geneva._check_length(p_hero_id, 1024, 'hero id');
  if p_hero_type = '' or p_hero_id = '' then
    raise exception 'hero type and hero id must not be empty' using errcode = '22023';
  end if;
  perform geneva._check_event(p_event, p_payload);
  for v_workflow in
    select w.*
    from geneva.workflows w
    where w.hero_type = p_hero_type
      and w.hero_id = p_hero_id
      and w.state not in ('finished', 'canceled')
    order by w.id
    for no key update
  loop
    perform geneva._send_event(v_workflow, p_event, p_payload);
    v_reached := v_reached + 1;
  end loop;
  perform geneva._log_action(
    'send_hero_event', null,
    jsonb_build_object('hero_type', p_hero_type, 'hero_id', p_hero_id, 'event', p_event),
    jsonb_build_object('reached', v_reached)
  );
  return v_reached;
end;
$$;

comment on function geneva.send_hero_event(text, text, text, jsonb) is
'Sends an event to every ongoing workflow of a hero (for triggers on the application''s tables); returns how many it reached.';
