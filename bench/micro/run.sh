#!/usr/bin/env bash
# bench/micro/run.sh: the claim and end path's cost to PostgreSQL, on one
# connection, with nothing else running (bench/micro/claim_end.sql), for the
# schema of the working tree or of git refs, alternated round by round so
# that a change can be measured alone (bench/NOTES.md).
#
#   make bench-sql                                   # the working tree, defaults
#   make bench-sql MICROFLAGS='-b 32 -l HEAD~1 tree' # HEAD~1 against the tree
#
# Flags: -n workflows (2000), -b executions a call (8), -r rounds (3), -o
# every step its own claim (not inline), -l the type has a concurrency limit
# never reached (100000 by type), -s one always full (2 by group, each
# batch's workflows in groups of 4: half of them wait for a slot). Arguments: what to compare, each "tree" (the
# working tree's dist/geneva.sql: run `make sql` first), a schema file (an
# experiment's variant of it) or a git ref (its committed dist/geneva.sql); default "tree". Needs psql and DATABASE_URL
# (a superuser's: each run creates and drops its own database); `make
# bench-sql` starts a throwaway server when none is given.
# Prints, per run, µs and WAL bytes a step, then each function's own time a
# call (µs) for the functions called at least 100 times, most time first.
set -euo pipefail

workflows=2000 batch=8 rounds=3 inline=true limit=false saturated=false
while getopts "n:b:r:ols" flag; do
  case $flag in
    n) workflows=$OPTARG ;;
    b) batch=$OPTARG ;;
    r) rounds=$OPTARG ;;
    o) inline=false ;;
    l) limit=true ;;
    s) saturated=true ;;
    *) exit 2 ;;
  esac
done
shift $((OPTIND - 1))
[ $# -gt 0 ] || set -- tree
: "${DATABASE_URL:?set DATABASE_URL (make bench-sql starts a throwaway server)}"

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=$(mktemp -d)
db=geneva_micro
trap 'psql -qX "$DATABASE_URL" -c "set client_min_messages = warning" -c "drop database if exists $db" >/dev/null 2>&1; rm -rf "$work"' EXIT

# the schema of each thing compared, by its position
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
done

definition='{"steps": [{"name": "a"}, {"name": "b"}, {"name": "c"}, {"name": "d"}, {"name": "e"}]}'
groups=0
if $limit; then
  definition='{"concurrency": {"by": "type", "limit": 100000}, "steps": [{"name": "a"}, {"name": "b"}, {"name": "c"}, {"name": "d"}, {"name": "e"}]}'
fi
if $saturated; then
  definition='{"concurrency": {"by": "group", "limit": 2}, "steps": [{"name": "a"}, {"name": "b"}, {"name": "c"}, {"name": "d"}, {"name": "e"}]}'
  groups=$(( batch / 4 > 0 ? batch / 4 : 1 ))
fi

url() { # database $1 on DATABASE_URL's server: a URL's path, or a keyword DSN's dbname
  case $DATABASE_URL in
    postgres://* | postgresql://*)
      python3 -c 'import sys, urllib.parse as u
p = u.urlsplit(sys.argv[1])
print(p.scheme + "://" + p.netloc + "/" + sys.argv[2] + ("?" + p.query if p.query else ""))' "$DATABASE_URL" "$1" ;;
    *) echo "$DATABASE_URL dbname=$1" ;;
  esac
}

echo "workflows=$workflows batch=$batch inline=$inline limit=$limit saturated=$saturated groups=$groups"
for round in $(seq 1 "$rounds"); do
  i=0
  for what in "$@"; do
    i=$((i + 1))
    psql -qX "$DATABASE_URL" -c "set client_min_messages = warning" -c "drop database if exists $db" -c "create database $db" >/dev/null
    psql -qX "$(url $db)" -v ON_ERROR_STOP=1 -f "$work/$i.sql" >/dev/null
    psql -qX "$(url $db)" -v ON_ERROR_STOP=1 -c "select geneva.define_workflow('micro', '$definition'::jsonb)" >/dev/null
    if ! psql -qX "$(url $db)" -v workflows="$workflows" -v batch="$batch" -v inline="$inline" -v groups="$groups" \
      -f "$here/claim_end.sql" > "$work/out" 2>&1; then
      echo "$what round $round failed:" >&2
      cat "$work/out" >&2
      exit 1
    fi
    result=$(sed -n 's/.*NOTICE: *//p' "$work/out")
    functions=$(psql -AtqX "$(url $db)" -c "
      select string_agg(funcname || '=' || round((self_time / calls)::numeric * 1000), ' ' order by self_time desc)
      from pg_stat_user_functions where calls >= 100")
    echo "$what round $round: $result"
    echo "  own µs a call: $functions"
    psql -qX "$DATABASE_URL" -c "drop database $db" >/dev/null
  done
done
