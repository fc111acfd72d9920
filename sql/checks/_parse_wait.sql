-- geneva._parse_wait: reads a wait from a definition: an interval string
-- ('30 seconds', '1 hour', 'PT5M') or a number of seconds.
--
-- Called by: geneva.define_workflow and geneva._validate_policy (waits of
-- definitions), geneva._backoff_wait and geneva._exception_effect (a
-- policy's wait, already validated). Takes no locks.
-- Raises: 22023 (naming p_where) for anything else, an unparsable string, or
-- a negative wait or one longer than 100 years (see geneva._check_wait).
create or replace function geneva._parse_wait(p_value jsonb, p_where text)
returns interval
language plpgsql
stable
set search_path = pg_catalog, pg_temp
as $$
declare
  v_wait interval;
begin
  -- (a number is checked before make_interval, which overflows silently)
  if jsonb_typeof(p_value) = 'number' and abs((p_value #>> '{}')::numeric) > 3155760000 then
    raise exception '%: wait % seconds is %: the longest is 100 years', p_where, p_value,
      case when (p_value #>> '{}')::numeric < 0 then 'negative' else 'too long' end
      using errcode = '22023',
            hint = 'A wait is from 0 to 100 years (3155760000 seconds).';
  end if;

  begin
    v_wait := case jsonb_typeof(p_value)
      when 'number' then make_interval(secs => (p_value #>> '{}')::double precision)
      when 'string' then (p_value #>> '{}')::interval
    end;
  exception when others then
    v_wait := null;
  end;

  if v_wait is null then
    raise exception '%: wait % is not an interval', p_where, p_value
      using errcode = '22023',
            hint = 'Give an interval such as "30 seconds" or a number of seconds.';
  end if;
  return geneva._check_wait(v_wait, p_where);
end;
$$;
