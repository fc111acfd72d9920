-- geneva.untrack_hero: removes the trigger geneva.track_hero attached.
--
-- Called by: the application's migrations. Removing a trigger that is not
-- there is harmless. The caller needs the TRIGGER privilege on the table,
-- as for track_hero.
-- Records the action (geneva._log_action).
-- Raises: 22004 for a NULL argument; 42501 when the caller lacks TRIGGER on
-- the table; 42P01 (from the regclass cast) for an unknown table.
create or replace function geneva.untrack_hero(p_table regclass, p_hero_type text)
returns void
language plpgsql
volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
begin
  if p_table is null or p_hero_type is null then
    raise exception 'table and hero type must not be null' using errcode = '22004';
  end if;
  if not pg_catalog.has_table_privilege(session_user, p_table, 'TRIGGER') then
    raise exception 'permission denied: % may not drop triggers on table %', session_user, p_table
      using errcode = '42501',
            hint = 'Untrack a hero table as a role with the TRIGGER privilege on it (its owner has it).';
  end if;
  execute format('drop trigger if exists %I on %s', geneva._hero_trigger_name(p_hero_type), p_table);
  perform geneva._log_action(
    'untrack_hero', null, jsonb_build_object('table', p_table::text, 'hero_type', p_hero_type), null
  );
end;
$$;

comment on function geneva.untrack_hero(regclass, text) is
'Removes the hero-deletion trigger geneva.track_hero attached.';
