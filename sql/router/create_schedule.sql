-- geneva.create_schedule: the cells' geneva.create_schedule, on the router
-- (docs/cells.md).
--
-- A schedule lives in its hero's cell (the partition of
-- geneva._hero_hash): its worker fires it there, and the workflows it
-- creates are that cell's, with ids of the hero's partition, as through the
-- router. A schedule of the name in another cell (its hero elsewhere) is
-- refused: delete it, then create it again (a replace across cells would
-- not be one transaction). The caller's name goes into the cell's action
-- log as "actor" (geneva._router_actor).
--
-- Called by: operators through the router.
-- Raises: 22023 when a schedule of the name lives in another cell than the
-- hero's; what the cell's geneva.create_schedule raises.
create or replace function geneva.create_schedule(
  p_name text,
  p_cron text,
  p_workflow_type text,
  p_hero_type text,
  p_hero_id text,
  p_timezone text default 'UTC',
  p_catch_up text default 'latest',
  p_allow_multiple boolean default false
)
returns bigint
language plpgsql
volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
declare
  v_hash integer := coalesce(geneva._hero_hash(p_hero_type, p_hero_id), 0);
  v_existing integer;
  v_mask integer;
begin
  select h into v_existing from geneva._cells_schedule_hash(p_name) h limit 1;
  if v_existing is not null then
    select count(*)::integer - 1 into v_mask from geneva._cells_map();
    if (select m.connstr from geneva._cells_map() m where m.partition = v_existing & v_mask)
       is distinct from (select m.connstr from geneva._cells_map() m where m.partition = v_hash & v_mask) then
      raise exception 'schedule % lives in another cell than hero % %''s', p_name, p_hero_type, p_hero_id
        using errcode = '22023',
              detail = 'A schedule lives in its hero''s cell.',
              hint = 'Delete the schedule (geneva.delete_schedule), then create it again.';
    end if;
  end if;
  return geneva._cell_create_schedule(v_hash, p_name, p_cron, p_workflow_type, p_hero_type, p_hero_id,
    p_timezone, p_catch_up, p_allow_multiple, geneva._router_actor());
end;
$$;

comment on function geneva.create_schedule(text, text, text, text, text, text, text, boolean) is
'The cells'' geneva.create_schedule, run in the cell of the hero''s partition (a schedule lives there).';
