# bench/history/hits.sh N: the buffer pages a step of bench/micro's loop (200
# workflows, batches of 8, inline) reads, and which indexes, with N ended
# workflows in the live tables (engine_fill.sql); on the server at $U.
# Run from the worktree root.
set -e
U=${U:-postgres://postgres@127.0.0.1:55432}
n=$1
work=$(mktemp -d)
cp -r bench/micro $work/micro
sed -i 's/select min(w.id), max(w.id) into v_first, v_last from geneva.workflows w;/select min(w.id), max(w.id) into v_first, v_last from geneva.workflows w where w.workflow_type = '"'micro'"' and w.finished_at is null and w.canceled_at is null;/' $work/micro/claim_end.sql
psql -qX $U/postgres -c "drop database if exists hits" -c "create database hits"
psql -qX $U/hits -v ON_ERROR_STOP=1 -f dist/geneva.sql >/dev/null
if [ "$n" -gt 0 ]; then psql -qX $U/hits -v ON_ERROR_STOP=1 -v n=$n -f bench/history/engine_fill.sql >/dev/null; fi
psql -qX $U/hits -c "select geneva.define_workflow('micro', '{\"steps\": [{\"name\": \"a\"}, {\"name\": \"b\"}, {\"name\": \"c\"}, {\"name\": \"d\"}, {\"name\": \"e\"}]}'::jsonb)" >/dev/null
psql -qX $U/hits -v workflows=200 -v batch=8 -v inline=true -v groups=0 -f $work/micro/claim_end.sql -c "select pg_stat_force_next_flush()" 2>&1 | grep -o "steps=.*"
sleep 1
psql -AtX $U/hits -c "select 'blks_hit a step: ' || round((blks_hit + blks_read) / 1000.0, 1) from pg_stat_database where datname = 'hits'"
psql -AtX $U/hits -c "select relname, idx_blks_hit + heap_blks_hit from pg_statio_user_tables where schemaname = 'geneva' and idx_blks_hit + heap_blks_hit > 0 order by 2 desc limit 6" | tr '\n' ' '; echo
psql -AtX $U/hits -c "select indexrelname, idx_blks_hit from pg_statio_user_indexes where schemaname = 'geneva' and idx_blks_hit > 0 order by 2 desc limit 12" | tr '\n' ' '; echo
rm -rf $work
