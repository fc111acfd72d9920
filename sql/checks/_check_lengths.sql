-- geneva._check_lengths: geneva._check_length for each element of a list
-- (NULL elements and a NULL list pass).
--
-- Called by: geneva.create_workflows.
-- Raises: 22001 for the first element over p_limit bytes, as
-- geneva._check_length.
create or replace function geneva._check_lengths(p_values text[], p_limit integer, p_argument text)
returns void
language plpgsql
immutable
set search_path = pg_catalog, pg_temp
as $$
begin
  -- (the elements are read one by one only when their whole length exceeds
  -- one element's limit)
  if octet_length(array_to_string(p_values, '')) > p_limit then
    perform geneva._check_length(v, p_limit, p_argument) from unnest(p_values) v;
  end if;
end;
$$;
