#!/usr/bin/env bash
# bench/micro/instructions.sh: the claim and end path's cost to PostgreSQL
# in CPU instructions, counted by valgrind (callgrind), for the schema of the
# working tree, a schema file or git refs: what bench/micro/run.sh measures
# in time, without the noise of a shared machine (two runs of one build agree
# to 0.1%, where times move by a third; bench/NOTES.md).
#
#   make bench-sql-instructions                                   # the tree
#   make bench-sql-instructions MICROFLAGS='-o HEAD~1 tree'
#
# Takes run.sh's flags and arguments (one round each: the count does not
# vary). Starts its own PostgreSQL under valgrind (initdb and pg_ctl of the
# PostgreSQL on PATH or PG_BIN, in a temporary directory; as the postgres
# user when run as root), counts the instructions of the backend that runs
# claim_end.sql's loop (a DO block: valgrind counts only inside
# plpgsql_inline_handler) and prints them a step, beside run.sh's output.
# Under valgrind everything runs some 50 times slower: keep -n small (200
# workflows take a minute a build). Needs valgrind and psql. KEEP=dir keeps
# each run's profile there (dir/<what>.callgrind) for callgrind_annotate.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
command -v valgrind >/dev/null || { echo "instructions.sh: valgrind is not installed (apt-get install valgrind)" >&2; exit 1; }
bin=${PG_BIN:-$(dirname "$(command -v pg_ctl 2>/dev/null || ls /usr/lib/postgresql/*/bin/pg_ctl | sort -V | tail -1)")}

# run.sh's flags, then what to compare
flags=() whats=()
while [ $# -gt 0 ]; do
  case $1 in
    -n | -b | -r) flags+=("$1" "$2"); shift 2 ;;
    -*) flags+=("$1"); shift ;;
    *) whats+=("$1"); shift ;;
  esac
done
[ ${#whats[@]} -gt 0 ] || whats=(tree)

# shellcheck source=valgrind_server.sh
. "$here/valgrind_server.sh"

for what in "${whats[@]}"; do
  before=$(ls "$work"/cg.* 2>/dev/null | sort || true)
  out=$(DATABASE_URL="postgres://postgres@127.0.0.1:$port/postgres" bash "$here/run.sh" -r 1 "${flags[@]}" "$what" 2>&1) || {
    echo "$out" >&2
    exit 1
  }
  sleep 1
  steps=$(echo "$out" | sed -n 's/.*steps=\([0-9]*\).*/\1/p' | head -1)
  best=0 bestfile=
  for f in $(comm -13 <(echo "$before") <(ls "$work"/cg.* | sort)); do
    t=$(grep -E "^(summary|totals):" "$f" | tail -1 | awk '{print $2}')
    if [ -n "$t" ] && [ "$t" -gt "$best" ]; then best=$t bestfile=$f; fi
  done
  if [ -n "${KEEP:-}" ] && [ -n "$bestfile" ]; then mkdir -p "$KEEP" && cp "$bestfile" "$KEEP/$(basename "$what").callgrind"; fi
  echo "$out" | head -1 | grep workflows= || true
  echo "$what: instructions_per_step=$((best / steps)) ($(echo "$out" | grep -o 'steps=[0-9]*' | head -1))"
done
