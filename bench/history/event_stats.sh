#!/usr/bin/env bash
# bench/history/event_stats.sh DB [N] [BEFORE]: geneva.event_stats and
# geneva.engine_metrics with N ended workflows in history (default
# 1,000,000; bench/history/reads_fill.sql: 1 event each, 30 day partitions,
# 1,000 live), read by the schema of git rev BEFORE (default 41b3d02: event_stats
# reading every event in history), then by this tree's dist/geneva.sql
# installed over the same database (its install folds history's events into
# geneva.history_event_counts: geneva._history_event_counts_fill, timed).
# Prints, for each read and each schema, EXPLAIN (ANALYZE, BUFFERS)'s
# buffers (the load-independent figure), planning and execution times, and
# the median of 11 runs. bench/NOTES.md, "event_stats folded".
set -euo pipefail
db=$1
n=${2:-1000000}
before=${3:-41b3d02}
cd "$(dirname "$0")/../.."
export PGHOST=${PGHOST:-127.0.0.1} PGUSER=${PGUSER:-postgres}
q() { psql -X -q -d "$db" -v ON_ERROR_STOP=1 "$@"; }

reads() {
  for read in 'select * from geneva.event_stats' 'select * from geneva.engine_metrics'; do
    echo "-- $read"
    q -A -t -c "explain (analyze, buffers) $read" >/dev/null # (planned once: the catalog cached)
    plan=$(q -A -t -c "explain (analyze, buffers) $read")
    echo "execution: $(echo "$plan" | sed '/^Planning/,$d' | grep -m1 '^ *Buffers:' | sed 's/^ *//' | grep . || echo 'Buffers: none'); $(echo "$plan" | grep 'Execution Time')"
    echo "planning: $(echo "$plan" | grep -A1 '^Planning:' | tail -1 | sed 's/^ *//'); $(echo "$plan" | grep 'Planning Time')"
    echo "$plan" | grep -A1 '^JIT:' | tail -1 | sed 's/^ */JIT: /' || true
    q -A -t <<SQL
create function pg_temp.timed(p_query text) returns numeric language plpgsql as \$\$
declare v_times numeric[] := '{}'; v_start timestamptz;
begin
  execute 'select count(*) from (' || p_query || ') q';
  for i in 1 .. 11 loop
    v_start := clock_timestamp();
    execute 'select count(*) from (' || p_query || ') q';
    v_times := v_times || extract(epoch from clock_timestamp() - v_start) * 1000;
  end loop;
  return (select percentile_cont(0.5) within group (order by t)::numeric(10, 2) from unnest(v_times) t);
end \$\$;
select 'median of 11: ' || pg_temp.timed('$read') || ' ms';
SQL
  done
}

dropdb --if-exists "$db"
createdb "$db"
git show "$before:dist/geneva.sql" | q -f - >/dev/null
PGOPTIONS='-c geneva.moving=on' q -v n="$n" -f bench/history/reads_fill.sql >/dev/null
# what the move would have counted (reads_fill.sql writes history directly)
PGOPTIONS='-c geneva.moving=on' q -c "insert into geneva.history_counts (ended_on, workflow_type, state, workflows, step_executions)
  select ended_on, workflow_type, state, count(*), 5 * count(*) from geneva.workflows_history group by 1, 2, 3"
q -c "vacuum analyze geneva.history_counts" -c checkpoint
echo "== $before, $n workflows in history ($(uptime | sed 's/.*load/load/'))"
reads

# this tree's schema over the same database: the table (an earlier 001 has
# none), then the install, which folds history's events
sed -n '/^create table geneva.history_event_counts (/,/^);/p' migrations/001_create_schema.sql | q -f -
start=$(date +%s%N)
q -f dist/geneva.sql >/dev/null
echo "== install of this tree's dist/geneva.sql, folding history's events: $(( ($(date +%s%N) - start) / 1000000 )) ms," \
  "$(q -A -t -c "select count(*) || ' rows, ' || coalesce(sum(sent), 0) || ' events' from geneva.history_event_counts")"
q -c "vacuum analyze geneva.history_event_counts"
echo "== this tree, $n workflows in history ($(uptime | sed 's/.*load/load/'))"
reads
