-- geneva._check_event: validates an event's name, payload and key before
-- anything is written.
--
-- Called by: geneva.send_event, geneva.send_hero_event. Takes no locks.
-- Raises: 22004 for a NULL name; 22023 for an empty one, one that starts
-- with geneva: (the engine's: a join's geneva:children), an empty key, or a
-- payload nested over 64 levels deep (geneva._check_json_depth); 22001 for a
-- name or a key over 255 bytes or a payload over 1 MiB (as its jsonb text).
create or replace function geneva._check_event(p_event text, p_payload jsonb, p_key text)
returns void
language plpgsql
immutable
set search_path = pg_catalog, pg_temp
as $$
begin
  if p_event is null then
    raise exception 'event name must not be null' using errcode = '22004';
  end if;
  if p_event = '' then
    raise exception 'event name must not be empty' using errcode = '22023';
  end if;
  if p_event like 'geneva:%' then
    raise exception 'event name % is reserved: names that start with geneva: are the engine''s', p_event
      using errcode = '22023',
            hint = 'A join''s event (geneva:children) is sent by its children''s ends.';
  end if;
  if octet_length(p_event) > 255 then
    raise exception 'event name is too long: % bytes, the limit is 255', octet_length(p_event)
      using errcode = '22001',
            detail = format('It starts with %s.', left(p_event, 40));
  end if;
  if octet_length(p_payload::text) > 1048576 then
    raise exception 'event % payload is too large: % bytes, the limit is 1 MiB', p_event, octet_length(p_payload::text)
      using errcode = '22001',
            hint = 'Send a reference to large data (an id, a URL), not the data itself.';
  end if;
  perform geneva._check_json_depth(p_payload, format('event %s payload', p_event));
  perform geneva._check_length(p_key, 255, format('event %s key', p_event));
  if p_key = '' then
    raise exception 'event % key must not be empty', p_event using errcode = '22023',
      hint = 'Pass NULL to send without a key.';
  end if;
end;
$$;
