#!/usr/bin/env bash
# bench/history/engine_history.sh N [instructions]: the engine's claim and
# end path (bench/micro) on the tree's schema (dist/geneva.sql) with an empty
# history, against the same with N ended workflows (5 executions and an
# event each) in history, as housekeeping's move leaves them
# (history_fill.sql: history tables, history_counts, workflow_counts), the
# live tables holding only the loop's own workflows. Like engine_growth.sh
# (ended rows in the live tables, before design B); with "instructions",
# counts instructions (valgrind, MICRO_N workflows, default 200) instead of
# time (MICRO_N default 2000, ROUNDS default 2).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
n=${1:?N}
work=$(mktemp -d)
chmod 755 "$work"
trap 'rm -rf "$work"' EXIT
cp -r "$root/bench/micro" "$work/micro"
cp "$root/dist/geneva.sql" "$work/empty.sql"
{ cat "$root/dist/geneva.sql"; echo "\\set n $n"; cat "$here/history_fill.sql"; } > "$work/history_$n.sql"
if [ "${2:-}" = instructions ]; then
  bash "$work/micro/instructions.sh" -n "${MICRO_N:-200}" "$work/empty.sql" "$work/history_$n.sql"
else
  bash "$work/micro/run.sh" -n "${MICRO_N:-2000}" -r "${ROUNDS:-2}" "$work/empty.sql" "$work/history_$n.sql"
fi
