-- geneva.parse_wait: a wait given as JSON, as an interval, by the rule every
-- wait of a definition follows (geneva._parse_wait): a number of seconds, or
-- an interval's text ("90s", "5 minutes", "1 hour 30 minutes", "250 ms"),
-- from 0 to 100 years; JSON null (or none) is no wait.
--
-- Called by: the worker that runs HTTP steps, for a reply's "wait" (so that
-- a reply's wait and a definition's are read by one rule); a runner of HTTP
-- steps written in another language may call it too. Takes no locks.
-- Raises: 22023 for anything else, a negative wait or one over 100 years.
create or replace function geneva.parse_wait(p_wait jsonb)
returns interval
language plpgsql
stable
security definer
set search_path = pg_catalog, pg_temp
as $$
begin
  if p_wait is null or p_wait = 'null'::jsonb then
    return interval '0';
  end if;
  return geneva._parse_wait(p_wait, 'reply');
end;
$$;

comment on function geneva.parse_wait(jsonb) is
'Worker protocol: a wait given as JSON (seconds, or an interval''s text) as an interval, by the rule of a definition''s waits.';
