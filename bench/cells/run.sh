#!/usr/bin/env bash
# bench/cells/run.sh: what the PL/Proxy router adds to a call (docs/cells.md):
# the same calls through a router onto two cells of 4 partitions, on one of
# the cells directly, and on one database (not a cell), measured by pgbench on one connection, latency a call p50 and p99
# and calls a second. Then steps a second through the two cells against one
# database (internal/cmd/cellsteps): -W workflows of 5 no-op Go steps
# created on one database and run by one worker, then by two, then created
# through a router onto two fresh cells and run by a worker a cell.
#
#   make bench-cells                    # a throwaway PostgreSQL
#   DATABASE_URL=postgres://… bash bench/cells/run.sh [-T seconds] [-W workflows]
#
# The calls: create_workflow (routed by hero) and get_workflow (routed by
# id, of a workflow made beforehand; the id is read from a local table in
# the same statement, alike on both sides). No worker runs: the workflows
# stay ready; this is the call's cost, not a step's. Needs psql, pgbench,
# PL/Proxy (postgresql-15-plproxy) and DATABASE_URL (a superuser's: it
# creates and drops its own databases on that server).
set -euo pipefail
export PGOPTIONS="${PGOPTIONS:-} -c client_min_messages=warning"
cd "$(dirname "$0")/../.."

seconds=10
workflows=2000
while getopts T:W: flag; do
  case "$flag" in
    T) seconds="$OPTARG" ;;
    W) workflows="$OPTARG" ;;
    *) echo "usage: $0 [-T seconds] [-W workflows]" >&2; exit 2 ;;
  esac
done
: "${DATABASE_URL:?DATABASE_URL must name a database of a superuser on the server to use}"
pgbench="$(command -v pgbench || ls /usr/lib/postgresql/*/bin/pgbench | tail -1)"

db_url() { # the server's URL with another database
  local base="${DATABASE_URL%%\?*}" query=""
  [[ "$DATABASE_URL" == *\?* ]] && query="?${DATABASE_URL#*\?}"
  echo "${base%/*}/$1$query"
}
work="$(mktemp -d)"
geneva="$work/geneva"
go build -o "$geneva" ./cmd/geneva
databases=(bench_cells_one bench_cells_0 bench_cells_1 bench_cells_router
  bench_steps_one bench_steps_0 bench_steps_1 bench_steps_router)
cleanup() {
  for db in "${databases[@]}"; do psql -q "$DATABASE_URL" -c "drop database if exists $db with (force)" >/dev/null 2>&1 || true; done
  rm -rf "$work"
}
trap cleanup EXIT
for db in "${databases[@]}"; do
  psql -q "$DATABASE_URL" -c "drop database if exists $db with (force)" -c "create database $db" >/dev/null
done

"$geneva" --database-url "$(db_url bench_cells_one)" migrate >/dev/null
"$geneva" --database-url "$(db_url bench_cells_0)" migrate --cell --partitions 4 >/dev/null
"$geneva" --database-url "$(db_url bench_cells_1)" migrate --cell --partitions 4 >/dev/null
"$geneva" --database-url "$(db_url bench_cells_router)" migrate --router --partitions 4 \
  --cells "$(db_url bench_cells_0),$(db_url bench_cells_1)" >/dev/null
"$geneva" --database-url "$(db_url bench_steps_one)" migrate >/dev/null
"$geneva" --database-url "$(db_url bench_steps_0)" migrate --cell --partitions 4 >/dev/null
"$geneva" --database-url "$(db_url bench_steps_1)" migrate --cell --partitions 4 >/dev/null
"$geneva" --database-url "$(db_url bench_steps_router)" migrate --router --partitions 4 \
  --cells "$(db_url bench_steps_0),$(db_url bench_steps_1)" >/dev/null

cat > "$work/create.sql" <<'SQL'
\set hero random(1, 1000000000)
select geneva.create_workflow('Bench', 'User', :hero::text, true);
SQL
cat > "$work/get.sql" <<'SQL'
\set n random(1, 2000)
select (geneva.get_workflow(b.id)).state from bench_ids b where b.n = :n;
SQL

echo "what                  calls/s    p50 µs    p99 µs"
for side in one 0 router; do
  url="$(db_url bench_cells_$side)"
  label="$side"
  [ "$side" = 0 ] && label="a cell"
  psql -q "$url" -v ON_ERROR_STOP=1 >/dev/null <<'SQL'
select geneva.define_workflow('Bench', '{"steps": [{"name": "only"}]}');
create table bench_ids (n integer primary key, id bigint not null);
insert into bench_ids
select g, geneva.create_workflow('Bench', 'User', 'seed-' || g, true) from generate_series(1, 2000) g;
SQL
  for call in create get; do
    rm -f "$work"/log.*
    (cd "$work" && "$pgbench" -n -c 1 -T "$seconds" -f "$work/$call.sql" -l --log-prefix=log "$url" >"$work/out" 2>&1) ||
      { cat "$work/out" >&2; exit 1; }
    tps="$(sed -n 's/^tps = \([0-9.]*\).*/\1/p' "$work/out")"
    # the log's third field: a transaction's latency in µs
    cat "$work"/log.* | awk '{print $3}' | sort -n | awk -v tps="$tps" -v label="$call ($label)" '
      { v[NR] = $1 }
      END { printf "%-20s %8.0f %9d %9d\n", label, tps, v[int(NR * 0.50)], v[int(NR * 0.99)] }'
  done
done

echo
go run ./internal/cmd/cellsteps -workflows "$workflows" -one "$(db_url bench_steps_one)" \
  -router "$(db_url bench_steps_router)" -cells "$(db_url bench_steps_0),$(db_url bench_steps_1)"
