#!/usr/bin/env bash
# bench/history/engine_growth.sh N [instructions]: the engine's claim and end
# path (bench/micro) on today's schema (dist/geneva.sql) with no ended
# workflows, against the same with N ended workflows (5M executions for 1M)
# in the live tables. Runs bench/micro's scripts from a copy whose loop
# takes the workflows of type micro only (the ended ones are of type old).
# With "instructions", counts instructions (valgrind) instead of time.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
n=${1:?N}
work=$(mktemp -d)
chmod 755 "$work"
trap 'rm -rf "$work"' EXIT
cp -r "$root/bench/micro" "$work/micro"
sed -i 's/select min(w.id), max(w.id) into v_first, v_last from geneva.workflows w;/select min(w.id), max(w.id) into v_first, v_last from geneva.workflows w where w.workflow_type = '"'micro'"' and w.finished_at is null and w.canceled_at is null;/' "$work/micro/claim_end.sql"
grep -q "workflow_type = 'micro'" "$work/micro/claim_end.sql"
cp "$root/dist/geneva.sql" "$work/empty.sql"
{ cat "$root/dist/geneva.sql"; echo "\\set n $n"; cat "$here/engine_fill.sql"; } > "$work/ended_$n.sql"
if [ "${2:-}" = instructions ]; then
  bash "$work/micro/instructions.sh" -n "${MICRO_N:-200}" "$work/empty.sql" "$work/ended_$n.sql"
else
  bash "$work/micro/run.sh" -n "${MICRO_N:-2000}" -r "${ROUNDS:-2}" "$work/empty.sql" "$work/ended_$n.sql"
fi
