-- bench/history/reads.sql: the reads across live ∪ history, each run 21
-- times after a warm-up, fastest, median and worst in ms (clock_timestamp
-- around an EXECUTE of the query, its rows discarded), then cpu_ms: this
-- backend's CPU time a run (user and system, /proc/self/stat, in 10 ms
-- ticks: the query run again until half a second of it has passed, or 2,000
-- times), the figure least moved by the other processes of a shared host,
-- which the wall times wait for. :hist is a moved workflow's id, :live a
-- live one's. Run as a superuser on Linux (pg_read_file of /proc). See
-- bench/history/reads.sh.
\set ON_ERROR_STOP on
create function pg_temp.ticks()
returns bigint
language sql as $$
  select f[12]::bigint + f[13]::bigint
  from (select string_to_array(split_part(pg_read_file('/proc/self/stat'), ') ', 2), ' ') as f) s
$$;
create function pg_temp.timed(p_query text, out min_ms numeric, out median_ms numeric, out max_ms numeric,
  out cpu_ms numeric)
language plpgsql as $$
declare
  v_times numeric[] := '{}';
  v_start timestamptz;
  v_ticks bigint;
  v_runs integer := 0;
begin
  execute 'select count(*) from (' || p_query || ') q';
  for i in 1 .. 21 loop
    v_start := clock_timestamp();
    execute 'select count(*) from (' || p_query || ') q';
    v_times := v_times || extract(epoch from clock_timestamp() - v_start) * 1000;
  end loop;
  select min(t)::numeric(10, 2), percentile_cont(0.5) within group (order by t)::numeric(10, 2), max(t)::numeric(10, 2)
  into min_ms, median_ms, max_ms from unnest(v_times) t;
  v_ticks := pg_temp.ticks();
  loop
    execute 'select count(*) from (' || p_query || ') q';
    v_runs := v_runs + 1;
    exit when pg_temp.ticks() - v_ticks >= 50 or v_runs >= 2000;
  end loop;
  cpu_ms := ((pg_temp.ticks() - v_ticks) * 10.0 / v_runs)::numeric(10, 3);
end;
$$;
select q as read, (pg_temp.timed(q)).*
from unnest(array[
  format('select geneva.get_workflow(%s)', :live),
  format('select geneva.get_workflow(%s)', :hist),
  format('select * from geneva.step_history(%s)', :hist),
  format('select geneva.get_step_execution(%s)', (:hist - 1) * 5 + 3),
  $q$select * from geneva.list_workflows('{}', 50)$q$,
  $q$select * from geneva.list_workflows('{"state": "ongoing"}', 50)$q$,
  $q$select * from geneva.list_workflows('{"state": "canceled"}', 50)$q$,
  $q$select * from geneva.list_workflows('{"type": "Type3"}', 50)$q$,
  $q$select * from geneva.list_workflows('{"error_class": "Rare"}', 50)$q$,
  $q$select * from geneva.list_workflows('{"hero_type": "User", "hero_id": "4242"}', 50)$q$,
  format($q$select * from geneva.list_workflows('{"before_id": %s}', 50)$q$, :hist),
  $q$select * from geneva.count_workflows('{"state": "ongoing"}')$q$,
  $q$select * from geneva.count_workflows('{"error_class": "Rare"}')$q$,
  $q$select * from geneva.count_workflows('{}')$q$,
  $q$select * from geneva.count_workflows('{"type": "Type3"}')$q$,
  $q$select * from geneva.count_workflows('{"state": "finished"}')$q$,
  $q$select * from geneva.count_workflows('{"type": "Type3", "state": "canceled"}')$q$,
  $q$select workflow_id from geneva.workflow_list order by workflow_id desc limit 50$q$,
  format('select * from geneva.workflow_timeline where workflow_id = %s', :hist),
  format('select * from geneva.workflow_timeline where workflow_id = %s', :live),
  format('select * from geneva.workflow_children where parent_id = %s', :hist),
  format('select * from geneva.step_errors where workflow_id = %s', :hist),
  $q$select * from geneva.event_stats$q$
]) q;
