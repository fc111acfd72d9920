-- geneva._cron_field: one field of a cron expression, as the sorted values it
-- matches, and whether it is a star (`*` or `?`, with no step or step 1:
-- see geneva._cron_parse for what a star day field means).
--
-- A field is a comma-separated list of `*`, `?`, `N` or `N-M`, each with an
-- optional `/step` (`N/step` is `N-max/step`); N and M are numbers within
-- p_min..p_max, or (month and day of week) names, in any case. The day of
-- week takes 7 for Sunday as 0 (`5-7` is Friday to Sunday); p_end is
-- where `*` and `N/step` end (6 for the day of week, else p_max).
--
-- Called by: geneva._cron_parse. Takes no locks.
-- Raises: 22023 naming the field (p_field) and the part that is wrong.
create or replace function geneva._cron_field(
  p_text text,
  p_field text,
  p_min integer,
  p_max integer,
  p_end integer,
  p_names text[],
  out matched integer[],
  out star boolean
)
language plpgsql
immutable
set search_path = pg_catalog, pg_temp
as $$
declare
  v_part text;
  v_parts text[];
  v_range text;
  v_bounds text[];
  v_step integer;
  v_low integer;
  v_high integer;
  v_value text;
  v_number integer;
  v_values integer[] := '{}';
  v_i integer;
begin
  star := false;
  if p_text = '' then
    raise exception 'cron % field is empty', p_field using errcode = '22023';
  end if;
  foreach v_part in array string_to_array(p_text, ',') loop
    -- guard: range/step
    v_parts := string_to_array(v_part, '/');
    if array_length(v_parts, 1) > 2 or v_part = '' then
      raise exception 'cron % field: % is not a value, range or step', p_field, quote_literal(v_part)
        using errcode = '22023',
              hint = 'A field is a comma-separated list of *, N or N-M, each with an optional /step.';
    end if;
    v_step := 1;
    if array_length(v_parts, 1) = 2 then
      if v_parts[2] !~ '^[0-9]{1,4}$' or v_parts[2]::integer = 0 then
        raise exception 'cron % field: the step in % must be a positive number', p_field, quote_literal(v_part)
          using errcode = '22023';
      end if;
      v_step := v_parts[2]::integer;
    end if;
    v_range := v_parts[1];
    if v_range in ('*', '?') then
      v_low := p_min;
      v_high := p_end;
      star := star or v_step = 1;
    else
      v_bounds := string_to_array(v_range, '-');
      if array_length(v_bounds, 1) > 2 or v_range = '' then
        raise exception 'cron % field: % is not a value or range', p_field, quote_literal(v_part)
          using errcode = '22023';
      end if;
      for v_i in 1 .. array_length(v_bounds, 1) loop
        v_value := lower(v_bounds[v_i]);
        if v_value ~ '^[0-9]{1,4}$' then
          v_number := v_value::integer;
        elsif array_position(p_names, v_value) is not null then
          v_number := array_position(p_names, v_value) - 1 + p_min;
        else
          raise exception 'cron % field: % is not a number%', p_field, quote_literal(v_bounds[v_i]),
            case when p_names is not null then ' or a name' else '' end
            using errcode = '22023',
                  hint = case when p_names is not null
                    then format('Names are %s.', array_to_string(p_names, ', '))
                    else 'Values are numbers.' end;
        end if;
        if v_number < p_min or v_number > p_max then
          raise exception 'cron % field: % is out of range %-%', p_field, v_number, p_min, p_max
            using errcode = '22023';
        end if;
        if v_i = 1 then
          v_low := v_number;
        end if;
        v_high := v_number;
      end loop;
      if array_length(v_bounds, 1) = 1 and array_length(v_parts, 1) = 2 then
        v_high := greatest(p_end, v_low); -- N/step: from N to the end
      end if;
      if v_low > v_high then
        raise exception 'cron % field: range % starts after it ends', p_field, quote_literal(v_part)
          using errcode = '22023';
      end if;
    end if;
    v_values := v_values || array(select generate_series(v_low, v_high, v_step));
  end loop;
  matched := array(select distinct v from unnest(v_values) v order by v);
end;
$$;
