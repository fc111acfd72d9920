-- geneva.track_hero: makes deleting a row of an application's hero table
-- cancel the ongoing workflows of that hero, in the same transaction
-- (canceled_hero_missing), unless their definition says
-- "may_proceed_without_hero": true.
--
-- Called by: the application's migrations, once per hero table and type:
--   select geneva.track_hero('public.users', 'User');
-- It attaches a statement-level AFTER DELETE trigger named
-- geneva_hero_<hero type> (see geneva._trg_hero_deleted and
-- geneva._hero_trigger_name for hero types too long for a name); calling it
-- again replaces it. p_id_column is the column workflows' hero_id holds (as text).
-- The table is a regclass and every identifier is quoted, so odd or hostile
-- names cannot inject SQL.
--
-- It runs as Geneva's owner (security definer), who needs the TRIGGER
-- privilege on the table (an owner of the application's tables has it). The
-- caller needs it too (its session's login role, which holds what its
-- granted roles hold): a role may not attach Geneva's trigger, nor take the
-- lock that attaching it holds, on a table it could not put a trigger on
-- itself. Geneva's own tables and River's are refused, and so is an id
-- column of a type that is not built in (see geneva._hero_id_column).
--
-- Records the action (geneva._log_action).
-- Raises: 22004 for a NULL argument; 22001 for a hero type longer than 255
-- bytes; 42501 when the caller lacks TRIGGER on the table; 22023 for an
-- empty hero type, a column the table does not have or whose type a hero id
-- may not have, or a table of Geneva's or River's; 42P01 (from the regclass
-- cast) for an unknown table.
create or replace function geneva.track_hero(
  p_table regclass,
  p_hero_type text,
  p_id_column name default 'id'
)
returns void
language plpgsql
volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
begin
  if p_table is null or p_hero_type is null or p_id_column is null then
    raise exception 'table, hero type and id column must not be null' using errcode = '22004';
  end if;
  perform geneva._check_length(p_hero_type, 255, 'hero type');
  if p_hero_type = '' then
    raise exception 'hero type must not be empty' using errcode = '22023';
  end if;
  if exists (
    select from pg_catalog.pg_class c
    join pg_catalog.pg_namespace n on n.oid = c.relnamespace
    where c.oid = p_table
      and (n.nspname = 'geneva' or (n.nspname = 'public' and c.relname like 'river\_%'))
  ) then
    raise exception 'table % is Geneva''s or River''s, not a hero table', p_table using errcode = '22023';
  end if;
  if not pg_catalog.has_table_privilege(session_user, p_table, 'TRIGGER') then
    raise exception 'permission denied: % may not create triggers on table %', session_user, p_table
      using errcode = '42501',
            hint = 'Track a hero table as a role with the TRIGGER privilege on it (its owner has it).';
  end if;
  perform geneva._hero_id_column(p_table, p_id_column);

  execute format(
    'create or replace trigger %I after delete on %s referencing old table as old_heroes '
    'for each statement execute function geneva._trg_hero_deleted(%L, %L)',
    geneva._hero_trigger_name(p_hero_type), p_table, p_hero_type, p_id_column
  );
  perform geneva._log_action(
    'track_hero', null,
    jsonb_build_object('table', p_table::text, 'hero_type', p_hero_type, 'id_column', p_id_column), null
  );
end;
$$;

comment on function geneva.track_hero(regclass, text, name) is
'Makes deleting a hero row cancel its ongoing workflows (canceled_hero_missing) in the same transaction.';
