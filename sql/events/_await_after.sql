-- geneva._await_after: for an await "since": "wait", the id of the newest
-- event of the names it awaits that the workflow has now, as the step is
-- reached (0 when none): the events it ignores are those, with every older
-- one, consumed or not (they stay for whoever awaits them otherwise). NULL
-- for "kept" (the default), which counts every event not consumed yet.
-- Exact, with ids: a sender holds the workflow's lock, which the caller
-- holds now, from before it draws its event's id until it commits.
--
-- Called by: geneva._insert_execution, geneva._advance_many, with the
-- workflow locked (or just inserted). Reads events_workflow_name.
-- Like geneva._await_name it has no `set search_path`, so that the planner
-- inlines it; it names only pg_catalog's functions and operators.
create or replace function geneva._await_after(p_workflow_id bigint, p_await jsonb)
returns bigint
language sql
stable
parallel safe
as $$
  select case when p_await operator(pg_catalog.->>) 'since' operator(pg_catalog.=) 'wait' then (
    select coalesce(pg_catalog.max(ev.id), 0)
    from geneva.events ev
    where ev.workflow_id operator(pg_catalog.=) p_workflow_id
      and ev.name operator(pg_catalog.=) any (coalesce(
        geneva._await_names(p_await), array[geneva._await_name(p_await)]
      ))
  ) end;
$$;
