-- geneva._cells_error_classes: every cell's geneva.error_classes, on the
-- router (docs/cells.md).
--
-- RUN ON ALL: each cell's classes, at most p_limit a cell; the router's
-- geneva.error_classes merges them.
--
-- Called by: the router's geneva.error_classes.
-- Raises: what the cells' geneva.error_classes raises.
create or replace function geneva._cells_error_classes(p_limit integer)
returns setof text
language plproxy
set search_path = pg_catalog, pg_temp
as $$
  cluster 'geneva';
  run on all;
  target geneva.error_classes;
$$;
