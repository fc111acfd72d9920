-- bench/history/reads.sql: the reads across live ∪ history, each run 21
-- times after a warm-up, fastest, median and worst in ms (the fastest is the
-- least moved by other work on a shared host; clock_timestamp around an
-- EXECUTE of the query, its rows discarded). :hist is a moved workflow's id,
-- :live a live one's. See bench/history/reads.sh.
\set ON_ERROR_STOP on
create function pg_temp.timed(p_query text, out min_ms numeric, out median_ms numeric, out max_ms numeric)
language plpgsql as $$
declare
  v_times numeric[] := '{}';
  v_start timestamptz;
begin
  execute 'select count(*) from (' || p_query || ') q';
  for i in 1 .. 21 loop
    v_start := clock_timestamp();
    execute 'select count(*) from (' || p_query || ') q';
    v_times := v_times || extract(epoch from clock_timestamp() - v_start) * 1000;
  end loop;
  select min(t)::numeric(10, 2), percentile_cont(0.5) within group (order by t)::numeric(10, 2), max(t)::numeric(10, 2)
  into min_ms, median_ms, max_ms from unnest(v_times) t;
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
