-- geneva._cells_map: the router's map, each partition and its cell's
-- connection string (docs/cells.md).
--
-- Read from the options p0 … p(P-1) of the cluster's foreign server,
-- geneva: what PL/Proxy routes by.
--
-- Called by: the router's create_workflows.
create or replace function geneva._cells_map()
returns table (partition integer, connstr text)
language sql
stable
set search_path = pg_catalog, pg_temp
as $$
  select pg_catalog.substr(o.option_name, 2)::integer, o.option_value
  from pg_catalog.pg_foreign_server s
  cross join lateral pg_catalog.pg_options_to_table(s.srvoptions) o
  where s.srvname operator(pg_catalog.=) 'geneva' and o.option_name operator(pg_catalog.~) '^p[0-9]+$'
$$;
