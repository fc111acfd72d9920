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
  -- (the elements are read only when their whole length exceeds one
  -- element's limit, and geneva._check_length is called for the first one
  -- over it alone: called for each, a fan-out's 10,000 hero ids cost 40 ms;
  -- bench/NOTES.md)
  if octet_length(array_to_string(p_values, '')) > p_limit then
    perform geneva._check_length(v.v, p_limit, p_argument)
    from (
      select u.v from unnest(p_values) with ordinality as u (v, ord)
      where octet_length(u.v) > p_limit
      order by u.ord
      limit 1
    ) v;
  end if;
end;
$$;
