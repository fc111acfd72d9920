-- geneva._check_length: refuses a name longer than its limit, before anything
-- is written. The limits are in bytes (UTF-8), so that every index entry of
-- workflows fits a btree page whatever the characters: workflow types, step
-- names and hero types take at most 255 bytes, hero ids 1024, queue names
-- 127 (docs/sql-api.md, "Definitions").
--
-- Called by: geneva.define_workflow, geneva.create_workflows,
-- geneva.track_hero, geneva.send_hero_event, geneva._workflow_filter (a
-- filter's values), geneva._log_action (the actor). Takes no locks. NULL
-- passes.
-- Raises: 22001 (string_data_right_truncation) naming p_argument, its length
-- and the limit.
create or replace function geneva._check_length(p_value text, p_limit integer, p_argument text)
returns void
language plpgsql
immutable
set search_path = pg_catalog, pg_temp
as $$
begin
  if octet_length(p_value) > p_limit then
    raise exception '% is too long: % bytes, the limit is %', p_argument, octet_length(p_value), p_limit
      using errcode = '22001',
            detail = format('It starts with %s.', left(p_value, 40)),
            hint = 'Workflow types, step names and hero types take at most 255 bytes, hero ids 1024, queue names 127.';
  end if;
end;
$$;
