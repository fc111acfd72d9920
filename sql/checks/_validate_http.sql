-- geneva._validate_http: checks a step's "http" (an HTTP step, run by the
-- stock `geneva worker`): {"url": an absolute http or https URL of at most
-- 2048 bytes, "timeout": an interval or seconds from 1 second to 1 hour
-- (default 30 seconds; a longer task is a resumable step), "headers": an
-- object of at most 32 header names and string values, 16 KiB together
-- (not Geneva-*, Content-Type, Content-Length, Host or Transfer-Encoding,
-- which the worker sets), "queue":
-- the River queue its jobs go to (default geneva_http)}.
--
-- Called by: geneva.define_workflow. Takes no locks.
-- Raises: 22023, naming p_where, for anything else.
create or replace function geneva._validate_http(p_http jsonb, p_where text)
returns void
language plpgsql
stable
set search_path = pg_catalog, pg_temp
as $$
declare
  v_key text;
  v_timeout interval;
  v_url text := p_http ->> 'url';
begin
  if jsonb_typeof(p_http) is distinct from 'object' then
    raise exception '%: http must be an object with url, and optionally timeout, headers and queue', p_where
      using errcode = '22023';
  end if;
  for v_key in select jsonb_object_keys(p_http) loop
    if v_key not in ('url', 'timeout', 'headers', 'queue') then
      raise exception '%: unknown http key "%"', p_where, v_key
        using errcode = '22023',
              hint = 'HTTP keys are url, timeout, headers and queue.';
    end if;
  end loop;
  if jsonb_typeof(p_http -> 'url') is distinct from 'string'
    or octet_length(v_url) > 2048
    or v_url !~ '^[Hh][Tt][Tt][Pp][Ss]?://[^/?#[:space:]@]+(/[^[:space:]]*)?([?#][^[:space:]]*)?$' then
    raise exception '%: http url % is not an absolute http or https URL', p_where, coalesce((p_http -> 'url')::text, 'missing')
      using errcode = '22023',
            hint = 'Give the endpoint''s whole address, such as "https://steps.example.com/charge" (at most 2048 bytes, no credentials).';
  end if;
  if p_http ? 'timeout' then
    v_timeout := geneva._parse_wait(p_http -> 'timeout', p_where || ': http timeout');
    if v_timeout < interval '1 second' or v_timeout > interval '1 hour' then
      raise exception '%: http timeout % is not between 1 second and 1 hour', p_where, v_timeout
        using errcode = '22023',
              hint = 'A step that takes longer should be resumable: reply "suspend" with a cursor and carry on in the next request.';
    end if;
  end if;
  if p_http ? 'headers' then
    if jsonb_typeof(p_http -> 'headers') <> 'object'
      or exists (
        select from jsonb_each(p_http -> 'headers') h
        where jsonb_typeof(h.value) <> 'string'
          or h.key !~ '^[!#$%&''*+.^_`|~0-9A-Za-z-]+$' or octet_length(h.key) > 256
          or h.value #>> '{}' ~ '[\r\n]'
          or octet_length(h.value #>> '{}') > 8192
      ) then
      raise exception '%: http headers must be an object of header names and string values', p_where
        using errcode = '22023';
    end if;
    if (select count(*) > 32 or coalesce(sum(octet_length(h.key) + octet_length(h.value)), 0) > 16384
        from jsonb_each_text(p_http -> 'headers') h) then
      raise exception '%: http headers are at most 32, of 16 KiB together', p_where
        using errcode = '22023';
    end if;
    select h.key into v_key
    from jsonb_object_keys(p_http -> 'headers') h (key)
    where lower(h.key) like 'geneva-%'
      or lower(h.key) in ('content-type', 'content-length', 'host', 'transfer-encoding', 'traceparent', 'tracestate')
    limit 1;
    if found then
      raise exception '%: http header % is set by the worker', p_where, v_key
        using errcode = '22023';
    end if;
  end if;
  if p_http ? 'queue'
    and (jsonb_typeof(p_http -> 'queue') <> 'string' or char_length(p_http ->> 'queue') not between 1 and 127) then
    raise exception '%: http queue must be a name of 1 to 127 characters', p_where
      using errcode = '22023';
  end if;
end;
$$;
