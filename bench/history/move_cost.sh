#!/usr/bin/env bash
# bench/history/move_cost.sh DB [N] [BEFORE] [REPS]: what housekeeping's move
# (geneva._move_to_history) costs for N ended workflows (default 10,000;
# 3 steps and 1 event each, finished through start_steps and
# complete_steps), with the schema of git rev BEFORE (default 41b3d02) and
# with this tree's dist/geneva.sql, each in a database of its own (DB_before,
# DB_tree). Each rep moves all N in a transaction rolled back (then
# VACUUM), alternating the two schemas: EXPLAIN (ANALYZE, BUFFERS, WAL) of
# the call (its statements' buffers and WAL, the load-independent figures)
# and its time. bench/NOTES.md, "event_stats folded".
set -euo pipefail
db=$1
n=${2:-10000}
before=${3:-41b3d02}
reps=${4:-5}
cd "$(dirname "$0")/../.."
export PGHOST=${PGHOST:-127.0.0.1} PGUSER=${PGUSER:-postgres}

for what in before tree; do
  d=${db}_$what
  dropdb --if-exists "$d"
  createdb "$d"
  if [ "$what" = before ]; then git show "$before:dist/geneva.sql"; else cat dist/geneva.sql; fi |
    psql -X -q -d "$d" -v ON_ERROR_STOP=1 -f - >/dev/null
  psql -X -q -d "$d" -v ON_ERROR_STOP=1 -v n="$n" >/dev/null <<'SQL'
select geneva.define_workflow('M', '{"steps":[{"name":"a"},{"name":"b"},{"name":"c"}]}');
select count(geneva.create_workflow('M', 'User', g::text)) from generate_series(1, :n) g;
select count(geneva.send_event(w.id, 'ping', '{"n": 1}')) from geneva.workflows w;
do $$
declare
  v_ids bigint[];
begin
  for i in 1 .. 3 loop
    for v_chunk in 0 .. (select count(*) / 1000 from geneva.workflows) loop
      select array_agg(e.id order by e.id) into v_ids
      from (select e.id from geneva.step_executions e where e.state = 'scheduled' order by e.id limit 1000) e;
      exit when v_ids is null;
      select array_agg(s.execution_id order by s.ordinality) into v_ids
      from geneva.start_steps(v_ids, array_fill(null::text, array[cardinality(v_ids)])) s;
      perform geneva.complete_steps(v_ids, array_fill('success'::text, array[cardinality(v_ids)]),
        array_fill(null::interval, array[cardinality(v_ids)]), array_fill(null::bigint, array[cardinality(v_ids)]),
        array_fill(false, array[cardinality(v_ids)]));
    end loop;
  end loop;
end;
$$;
select geneva._history_ahead(now());
vacuum analyze;
SQL
  echo "$what: $(psql -X -A -t -d "$d" -c "select count(*) filter (where state = 'finished') || ' finished of ' || count(*) from geneva.workflows"), $(psql -X -A -t -d "$d" -c "select count(*) from geneva.step_executions") executions, $(psql -X -A -t -d "$d" -c "select count(*) from geneva.events") events"
done

echo "load: $(uptime | sed 's/.*load/load/')"
for rep in $(seq 1 "$reps"); do
  for what in before tree; do
    d=${db}_$what
    out=$(psql -X -A -t -d "$d" -v ON_ERROR_STOP=1 <<'SQL'
begin;
explain (analyze, buffers, wal, costs off) select cardinality(geneva._move_to_history(array(select id from geneva.workflows)));
rollback;
SQL
)
    psql -X -q -d "$d" -c "vacuum geneva.workflows, geneva.step_executions, geneva.events, geneva.workflows_history, geneva.step_executions_history, geneva.events_history, geneva.history_counts" 2>/dev/null
    psql -X -q -d "$d" -c "vacuum geneva.history_event_counts" 2>/dev/null || true
    echo "rep $rep $what: $(echo "$out" | grep -m1 'Buffers:' | sed 's/^ *//'); $(echo "$out" | grep -m1 'WAL:' | sed 's/^ *//'); $(echo "$out" | grep 'Execution Time')"
  done
done
echo "load: $(uptime | sed 's/.*load/load/')"
