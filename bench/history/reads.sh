#!/usr/bin/env bash
# bench/history/reads.sh DB [N]: installs dist/geneva.sql into a new database
# DB on $PGHOST (default 127.0.0.1, user postgres), times the reads across
# live ∪ history with 1,000 live workflows only, fills history with N ended
# workflows (default 1,000,000; bench/history/reads_fill.sql) and times them
# again. Prints both tables (bench/NOTES.md).
set -euo pipefail
db=$1
n=${2:-1000000}
cd "$(dirname "$0")/../.."
export PGHOST=${PGHOST:-127.0.0.1} PGUSER=${PGUSER:-postgres}
dropdb --if-exists "$db"
createdb "$db"
psql -q -X -d "$db" -v ON_ERROR_STOP=1 -f dist/geneva.sql >/dev/null
psql -q -X -d "$db" -v ON_ERROR_STOP=1 -v n=0 -f bench/history/reads_fill.sql >/dev/null
live=$(psql -X -A -t -d "$db" -c "select max(id) from geneva.workflows")
echo "empty history (1,000 live workflows)"
psql -X -d "$db" -v live="$live" -v hist="$live" -f bench/history/reads.sql
dropdb "$db"; createdb "$db"
psql -q -X -d "$db" -v ON_ERROR_STOP=1 -f dist/geneva.sql >/dev/null
time psql -q -X -d "$db" -v ON_ERROR_STOP=1 -v n="$n" -f bench/history/reads_fill.sql >/dev/null
echo "history of $n ended workflows ($((n * 5)) executions, $n events, 32 day partitions), 1,000 live"
live=$(psql -X -A -t -d "$db" -c "select max(id) from geneva.workflows")
psql -X -d "$db" -v live="$live" -v hist=$((n / 2)) -f bench/history/reads.sql
