-- geneva.send_event: the cells' geneva.send_event, on the router (docs/cells.md).
--
-- Runs geneva.send_event in the cell holding the partition of p_workflow_id
-- (p_workflow_id & (P - 1): a cell's ids carry their partition).
--
-- Called by: applications and operators through the router.
-- Raises: what the cell's geneva.send_event raises.
create or replace function geneva.send_event(p_workflow_id bigint,
  p_event text,
  p_payload jsonb default null,
  p_key text default null)
returns boolean
language plproxy
security definer
set search_path = pg_catalog, pg_temp
as $$
  cluster 'geneva';
  run on p_workflow_id;
$$;

comment on function geneva.send_event is
'The cells'' geneva.send_event, run in the cell its id routes to.';
