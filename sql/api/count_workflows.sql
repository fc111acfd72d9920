-- geneva.count_workflows: how many workflows a filter matches, and the
-- highest id among them (NULL when none): what geneva.list_workflows would
-- list without a limit, and what geneva.bulk_workflows would act on.
--
-- Called by: operators, dashboards, goclient.CountWorkflows (the web
-- dashboard's "N workflows match": it then acts with the same filter and
-- up_to_id set to newest_id, on those it counted and not on workflows
-- created since). Takes no locks.
--
-- p_filter is the one workflow filter (geneva._workflow_filter). A filter of
-- a type, an ended state (finished, canceled), both or neither is answered
-- from the folded counts, whatever history holds: the ended workflows by
-- type and state (geneva.ended_workflow_counts plus its deltas, what
-- geneva.workflow_counts reads, which count the moved workflows until
-- retention drops their partition) and, without a state, the ongoing ones
-- (workflows_ongoing_type); newest_id is then a walk back from each
-- table's and history partition's newest id to its first match, in the
-- history partitions between the first and last day that hold one
-- (geneva.history_counts names them). Any other filter is a search: the
-- count reads every matching workflow, live and in history
-- (docs/history.md): a filter an index serves (hero, paused, ongoing,
-- error class, parent) costs what it matches, any other every workflow,
-- and grows with history.
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
declare
  v_from constant text := geneva._workflow_filter(p_filter);
  v_type text := p_filter ->> 'type';
  v_state text := p_filter ->> 'state';
  v_first date;
  v_last date;
  v_count bigint;
  v_newest bigint;
begin
  if p_filter - 'type' - 'state' <> '{}' or coalesce(v_state, 'finished') not in ('finished', 'canceled') then
    return query execute format(
      'select count(*), max(w.id) from %s',
      v_from
    ) using p_filter;
    return;
  end if;

  -- folded: the ended ones by type and state, and the ongoing ones
  select coalesce(sum(c.workflows), 0)::bigint into v_count
  from (
    select e.workflow_type, e.state, e.workflows from geneva.ended_workflow_counts e
    union all
    select d.workflow_type, d.state, d.delta from geneva.ended_workflow_count_deltas d
  ) c
  where (v_type is null or c.workflow_type = v_type) and (v_state is null or c.state = v_state);
  if v_state is null then
    v_count := v_count + (
      select count(*)
      from geneva.workflows w
      where w.finished_at is null and w.canceled_at is null and (v_type is null or w.workflow_type = v_type)
    );
  end if;
  if v_count = 0 then
    return query select 0::bigint, null::bigint;
    return;
  end if;

  -- the newest: each branch's newest id walked back to its first match, in
  -- the history partitions from the first to the last day that holds one.
  -- (Static statements: planned once a session, not at each call as an
  -- EXECUTE is, over every partition; the days prune at run time.)
  select min(c.ended_on), max(c.ended_on) into v_first, v_last
  from geneva.history_counts c
  where c.workflows > 0 and (v_type is null or c.workflow_type = v_type) and (v_state is null or c.state = v_state);
  select max(x.id) into v_newest
  from (
    (select w.id
     from geneva.workflows w
     where (v_type is null or w.workflow_type = v_type)
       and (v_state is distinct from 'finished' or w.finished_at is not null)
       and (v_state is distinct from 'canceled' or w.canceled_at is not null)
     order by w.id desc
     limit 1)
    union all
    (select w.id
     from geneva.workflows_history w
     where w.ended_on between v_first and v_last
       and (v_type is null or w.workflow_type = v_type)
       and (v_state is distinct from 'finished' or w.finished_at is not null)
       and (v_state is distinct from 'canceled' or w.canceled_at is not null)
     order by w.id desc
     limit 1)
  ) x;
  return query select v_count, v_newest;
end;
$$;

comment on function geneva.count_workflows(jsonb) is
'How many workflows the filter matches (geneva._workflow_filter''s keys), and the highest id among them; a type and an ended state are counted from the folded counts.';
