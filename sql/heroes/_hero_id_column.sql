-- geneva._hero_id_column: checks the column of a hero table that holds its
-- heroes' ids (geneva.track_hero's p_id_column), when a table is tracked and
-- every time its trigger fires (the column's type may have changed since).
--
-- The id becomes text (workflows.hero_id) inside geneva._trg_hero_deleted, a
-- security definer running as Geneva's owner: a conversion resolved on the
-- caller's types (a cast a role created for a type of its own, a domain) would
-- run the caller's code with the owner's privileges. So only built-in base
-- types are accepted, whose conversion to text is their built-in output
-- function, which no role but a superuser can replace: smallint, integer,
-- bigint, numeric, text, varchar, char and uuid.
--
-- Called by: track_hero, geneva._trg_hero_deleted. Takes no locks.
-- Raises: 22023 for a column the table does not have, or one of another
-- type.
create or replace function geneva._hero_id_column(p_table regclass, p_id_column name)
returns void
language plpgsql
stable
set search_path = pg_catalog, pg_temp
as $$
declare
  v_type oid;
begin
  select a.atttypid into v_type
  from pg_catalog.pg_attribute a
  where a.attrelid = p_table
    and a.attname = p_id_column
    and a.attnum > 0
    and not a.attisdropped;
  if not found then
    raise exception 'table % has no column %', p_table, p_id_column
      using errcode = '22023';
  end if;
  if v_type not in (
    'pg_catalog.int2'::pg_catalog.regtype, 'pg_catalog.int4'::pg_catalog.regtype,
    'pg_catalog.int8'::pg_catalog.regtype, 'pg_catalog.numeric'::pg_catalog.regtype,
    'pg_catalog.text'::pg_catalog.regtype, 'pg_catalog.varchar'::pg_catalog.regtype,
    'pg_catalog.bpchar'::pg_catalog.regtype, 'pg_catalog.uuid'::pg_catalog.regtype
  ) then
    raise exception 'column % of table % is of type %, not one a hero id may have',
      p_id_column, p_table, v_type::pg_catalog.regtype
      using errcode = '22023',
            hint = 'Hero id columns are smallint, integer, bigint, numeric, text, varchar, char or uuid (not a domain or a type of your own).';
  end if;
end;
$$;
