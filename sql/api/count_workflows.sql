-- geneva.count_workflows: how many workflows a filter matches, and the
-- highest id among them (NULL when none): what geneva.list_workflows would
-- list without a limit, and what geneva.bulk_workflows would act on.
--
-- Called by: operators, dashboards, goclient.CountWorkflows (the web
-- dashboard's "N workflows match": it then acts with the same filter and
-- up_to_id set to newest_id, on those it counted and not on workflows
-- created since). Takes no locks.
--
-- p_filter is the one workflow filter (geneva._workflow_filter). The count
-- reads every matching workflow: a filter an index serves (hero, paused,
-- ongoing, error class) costs what it matches, any other the whole table.
-- Raises: 22004 for a NULL filter; 22023 for a bad filter, 22001 for a
-- filter's string over 1024 bytes (as geneva._workflow_filter).
create or replace function geneva.count_workflows(p_filter jsonb default '{}')
returns table (
  workflows bigint,
  newest_id bigint
)
language plpgsql
stable
security definer
set search_path = pg_catalog, pg_temp
as $$
begin
  return query execute format(
    'select count(*), max(w.id) from %s',
    geneva._workflow_filter(p_filter)
  ) using p_filter;
end;
$$;

comment on function geneva.count_workflows(jsonb) is
'How many workflows the filter matches (geneva._workflow_filter''s keys), and the highest id among them.';
