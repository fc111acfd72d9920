-- geneva.create_workflows: the cells' geneva.create_workflows, on the router
-- (docs/cells.md).
--
-- Splits the list by cell: each hero goes to the cell of its partition
-- (geneva._hero_hash & (P - 1), P from the map, geneva._cells_map), every
-- hero to the parent's for children; each cell's share is one call of the
-- cell's create_workflows (geneva._cell_create_workflows), in the order of
-- the cells' first partitions, and the ids come back in the list's order.
-- Each share is atomic in its cell, the list is not: a share refused (a
-- hero's ongoing workflow: 23505) leaves the shares of the cells called
-- before it created, and raises. Give idempotency keys (a retry returns the
-- workflows created) or p_skip_ongoing when a list spans cells.
--
-- Called by: applications and operators through the router.
-- Raises: 22004 for a NULL list; 22023 for p_groups or p_idempotency_keys
-- of another length than p_hero_ids (before any cell is called); what the
-- cells' geneva.create_workflows raises (p_child_keys, which goes with a
-- parent, hence to one cell, is checked there).
create or replace function geneva.create_workflows(
  p_workflow_type text,
  p_hero_type text,
  p_hero_ids text[],
  p_allow_multiple boolean default false,
  p_trace_context text default null,
  p_groups text[] default null,
  p_idempotency_keys text[] default null,
  p_parent_id bigint default null,
  p_skip_ongoing boolean default false,
  p_child_keys text[] default null
)
returns bigint[]
language plpgsql
volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
declare
  v_mask integer;
  v_ids bigint[];
  v_share record;
  v_share_ids bigint[];
begin
  if p_hero_ids is null then
    raise exception 'hero ids must not be null' using errcode = '22004';
  end if;
  if cardinality(p_groups) <> cardinality(p_hero_ids)
     or cardinality(p_idempotency_keys) <> cardinality(p_hero_ids) then
    raise exception 'groups and idempotency keys must be as many as the hero ids (%)', cardinality(p_hero_ids)
      using errcode = '22023';
  end if;
  if cardinality(p_hero_ids) = 0 then
    -- the cells' answer to an empty list, from any cell
    return geneva._cell_create_workflows(0, p_workflow_type, p_hero_type, p_hero_ids, p_allow_multiple,
      p_trace_context, p_groups, p_idempotency_keys, p_parent_id, p_skip_ongoing, p_child_keys);
  end if;
  select count(*)::integer - 1 into v_mask from geneva._cells_map();
  v_ids := array_fill(null::bigint, array[cardinality(p_hero_ids)]);

  for v_share in
    select min(h.partition) as partition, array_agg(h.i order by h.i) as indexes
    from (
      select i,
        (coalesce(p_parent_id, geneva._hero_hash(p_hero_type, p_hero_ids[i])::bigint) & v_mask)::integer as partition
      from generate_subscripts(p_hero_ids, 1) i
    ) h
    join geneva._cells_map() m on m.partition = h.partition
    group by m.connstr
    order by 1
  loop
    v_share_ids := geneva._cell_create_workflows(
      v_share.partition, p_workflow_type, p_hero_type,
      array(select p_hero_ids[i] from unnest(v_share.indexes) with ordinality u(i, o) order by o),
      p_allow_multiple, p_trace_context,
      case when p_groups is not null then
        array(select p_groups[i] from unnest(v_share.indexes) with ordinality u(i, o) order by o) end,
      case when p_idempotency_keys is not null then
        array(select p_idempotency_keys[i] from unnest(v_share.indexes) with ordinality u(i, o) order by o) end,
      p_parent_id, p_skip_ongoing,
      case when p_child_keys is not null then
        array(select p_child_keys[i] from unnest(v_share.indexes) with ordinality u(i, o) order by o) end);
    for j in 1 .. cardinality(v_share.indexes) loop
      v_ids[v_share.indexes[j]] := v_share_ids[j];
    end loop;
  end loop;
  return v_ids;
end;
$$;

comment on function geneva.create_workflows is
'The cells'' geneva.create_workflows: each cell''s share of the list (by hero; children: the parent''s cell) created there, the ids in the list''s order.';
