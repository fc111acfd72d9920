-- geneva._text_array: a JSON array of strings as a text[] (NULL for NULL).
--
-- Called by: geneva._end_executions, for an error's classes. (A function,
-- not the subquery inline: a subquery in the end's statement would be set
-- up at every call, whether or not a step failed.)
create or replace function geneva._text_array(p_value jsonb)
returns text[]
language sql
immutable
set search_path = pg_catalog, pg_temp
as $$
  select case when p_value is not null then array(select jsonb_array_elements_text(p_value)) end
$$;
