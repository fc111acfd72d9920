-- geneva._hero_trigger_name: the name of the trigger geneva.track_hero puts on
-- a hero table for a hero type: geneva_hero_<hero type>, or, when that would
-- not fit PostgreSQL's 63-byte names (and two long types would share a cut
-- name), geneva_hero_ and the md5 of the hero type.
--
-- Called by: track_hero and untrack_hero. Takes no locks.
create or replace function geneva._hero_trigger_name(p_hero_type text)
returns text
language sql
immutable
set search_path = pg_catalog, pg_temp
as $$
  select case
    when octet_length('geneva_hero_' || p_hero_type) <= 63 then 'geneva_hero_' || p_hero_type
    else 'geneva_hero_' || md5(p_hero_type)
  end
$$;
