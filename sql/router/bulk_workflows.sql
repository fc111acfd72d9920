-- geneva.bulk_workflows: the cells' geneva.bulk_workflows, on the router
-- (docs/cells.md).
--
-- The p_limit lowest matching ids of all the cells, as in one database:
-- when the cells' counts (geneva._cells_count_workflows) add up to more
-- than p_limit, a cut-off id is searched (halving the range between the
-- filter's after_id and the newest id, a count of every cell a step) so
-- that at most p_limit match up to it; then each cell acts on its own
-- (geneva._cells_bulk_workflows, RUN ON ALL) with the filter's up_to_id at
-- the cut-off. The results merge: matched and acted added up, refused and
-- retries joined, more when workflows past the cut-off match, last_id the
-- cut-off (or the highest acted on), so that `after_id = last_id` goes on
-- without skipping or repeating a workflow. action_id is null: each cell
-- logs its own call (action_ids, a cell each). Each cell's share commits
-- there on its own. The caller's name goes into the cells' action log as
-- "actor" (geneva._router_actor). A workflow created while the call runs,
-- below the cut-off, may make a cell reach p_limit first; then more is true
-- and last_id the lowest last id of such cells.
--
-- Called by: operators through the router.
-- Raises: 22004 for a NULL verb, filter or limit; 22023 for a limit below
-- 1; what the cells' geneva.bulk_workflows raises.
create or replace function geneva.bulk_workflows(
  p_verb text,
  p_filter jsonb,
  p_limit integer default 1000
)
returns jsonb
language plpgsql
volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
declare
  v_total bigint;
  v_newest bigint;
  v_low bigint;
  v_high bigint;
  v_mid bigint;
  v_cut bigint;
  v_filter jsonb := p_filter;
  v_results jsonb[];
  v_result jsonb;
  v_full bigint;
begin
  if p_verb is null or p_filter is null or p_limit is null then
    raise exception 'verb, filter and limit must not be null' using errcode = '22004';
  end if;
  if p_limit < 1 then
    raise exception 'bulk limit % is below 1', p_limit using errcode = '22023';
  end if;
  select coalesce(sum(c.workflows), 0), max(c.newest_id) into v_total, v_newest
  from geneva._cells_count_workflows(p_filter) c;
  if v_total > p_limit then
    -- the highest id up to which at most p_limit match
    v_low := coalesce((p_filter ->> 'after_id')::bigint, 0);
    v_high := least(v_newest, coalesce((p_filter ->> 'up_to_id')::bigint, v_newest));
    while v_low < v_high loop
      v_mid := v_low + (v_high - v_low + 1) / 2;
      select coalesce(sum(c.workflows), 0) into v_total
      from geneva._cells_count_workflows(p_filter || jsonb_build_object('up_to_id', v_mid)) c;
      if v_total <= p_limit then
        v_low := v_mid;
      else
        v_high := v_mid - 1;
      end if;
    end loop;
    v_cut := v_low;
    v_filter := p_filter || jsonb_build_object('up_to_id', v_cut);
  end if;

  select array_agg(r) into v_results
  from geneva._cells_bulk_workflows(p_verb, v_filter, p_limit, geneva._router_actor()) r;
  select min((r ->> 'last_id')::bigint) into v_full
  from unnest(v_results) r where (r ->> 'more')::boolean;

  select jsonb_build_object(
    'verb', p_verb,
    'matched', coalesce(sum((r ->> 'matched')::integer), 0),
    'acted', coalesce(sum((r ->> 'acted')::integer), 0),
    'refused', (select coalesce(jsonb_agg(f order by (f ->> 'workflow_id')::bigint), '[]')
      from unnest(v_results) x, jsonb_array_elements(x -> 'refused') f),
    'more', v_cut is not null or v_full is not null,
    'last_id', coalesce(v_full, v_cut, max((r ->> 'last_id')::bigint)),
    'action_id', null,
    'action_ids', coalesce(jsonb_agg(r -> 'action_id'), '[]')
  ) into v_result
  from unnest(v_results) r;
  if p_verb = 'retry' then
    v_result := v_result || jsonb_build_object('retries',
      (select coalesce(jsonb_object_agg(k, v), '{}') from unnest(v_results) x, jsonb_each(x -> 'retries') e(k, v)));
  end if;
  return v_result;
end;
$$;

comment on function geneva.bulk_workflows(text, jsonb, integer) is
'The cells'' geneva.bulk_workflows: the p_limit lowest matching ids of all cells, each cell acting on its own; the results merged.';
