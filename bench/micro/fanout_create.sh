#!/usr/bin/env bash
# bench/micro/fanout_create.sh: the instructions PostgreSQL spends creating
# one parent's children with its step's end (fanout_create.sql: one
# complete_steps of N children, 10,000 by default, as geneva-bench's
# fan-out run creates them), for the schema of the working tree, a schema
# file or git refs, each in a fresh database, counted by valgrind
# (callgrind) as bench/micro/instructions.sh counts the claim and end.
#
#   bash bench/micro/fanout_create.sh [-n 10000] main tree
#   bash bench/micro/fanout_create.sh -s [-r] -n 1000 main tree
#
# -s counts a child's whole life instead (fanout_steps.sql): N one-step
# children created by their parent's step's end, then claimed and ended 4
# a call, each call its own transaction, with their River jobs' ids, as the
# worker does; with -r, the same N one-step workflows without a parent,
# created 100 a call, as an application does. The figure is a step's (a
# workflow's): what a child costs beside a workflow without a parent.
#
# Starts its own PostgreSQL under valgrind (fsync off: the instructions,
# not the disk), one database per schema. 10,000 children take some
# minutes a schema (valgrind runs some 50 times slower). KEEP=dir keeps
# each run's profile there for callgrind_annotate.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
command -v valgrind >/dev/null || { echo "fanout_create.sh: valgrind is not installed" >&2; exit 1; }
bin=${PG_BIN:-$(dirname "$(command -v pg_ctl 2>/dev/null || ls /usr/lib/postgresql/*/bin/pg_ctl | sort -V | tail -1)")}
n=10000 sql=fanout_create.sql mode=children
while getopts "n:sr" flag; do
  case $flag in
    n) n=$OPTARG ;;
    s) sql=fanout_steps.sql ;;
    r) mode=roots ;;
    *) exit 2 ;;
  esac
done
shift $((OPTIND - 1))
[ $# -gt 0 ] || set -- tree

# shellcheck source=valgrind_server.sh
. "$here/valgrind_server.sh"

i=0
for what in "$@"; do
  i=$((i + 1))
  if [ "$what" = tree ]; then
    cp "$root/dist/geneva.sql" "$work/$i.sql"
  elif [ -f "$what" ]; then
    cp "$what" "$work/$i.sql"
  else
    git -C "$root" show "$what:dist/geneva.sql" > "$work/$i.sql"
  fi
  psql -qX -h 127.0.0.1 -p "$port" -U postgres -c "create database fan$i" >/dev/null
  psql -qX -h 127.0.0.1 -p "$port" -U postgres -d "fan$i" -v ON_ERROR_STOP=1 -f "$work/$i.sql" >/dev/null
  before=$(ls "$work"/cg.* 2>/dev/null | sort || true)
  out=$(psql -X -h 127.0.0.1 -p "$port" -U postgres -d "fan$i" -v n="$n" -v mode="$mode" -f "$here/$sql" 2>&1) || {
    echo "$out" >&2
    exit 1
  }
  # (the backend's profile is written when it exits, slowly under valgrind)
  best=0
  for _ in $(seq 1 120); do
    sleep 2
    for f in $(comm -13 <(echo "$before") <(ls "$work"/cg.* | sort)); do
      t=$(grep -E "^(summary|totals):" "$f" | tail -1 | awk '{print $2}')
      if [ -n "$t" ] && [ "$t" -gt "$best" ]; then best=$t; fi
    done
    [ "$best" -gt 0 ] && break
  done
  if [ -n "${KEEP:-}" ]; then
    mkdir -p "$KEEP"
    for f in $(comm -13 <(echo "$before") <(ls "$work"/cg.* | sort)); do cp "$f" "$KEEP/$mode-$i-$(basename "$f")"; done
  fi
  echo "$what ($mode, $sql): $(echo "$out" | grep -o 'children=[0-9]*') instructions=$best per_child=$((best / n))"
done
