# bench/micro/valgrind_server.sh: sourced by instructions.sh and
# fanout_create.sh. Starts a throwaway PostgreSQL under valgrind (callgrind,
# counting only inside plpgsql_inline_handler: the scripts' DO blocks), in a
# temporary directory, on a port of its own, as the postgres user when run as
# root, with fsync off (the instructions, not the disk) and autovacuum and
# JIT off (nothing else counted); waits until it answers, and stops it and
# removes its files when the script exits.
#
# Needs bin (the PostgreSQL binaries' directory). Sets work (the directory:
# each backend's profile is $work/cg.<pid>, written when the backend exits),
# port, and as_pg (runs a command as the server's user).
work=$(mktemp -d)
chmod 755 "$work"
as_pg() { if [ "$(id -u)" = 0 ]; then su postgres -s /bin/bash -c "$*"; else bash -c "$*"; fi; }
[ "$(id -u)" = 0 ] && chown postgres "$work"
port=$(( 56000 + RANDOM % 2000 ))
as_pg "'$bin/initdb' -D '$work/pg' -A trust -U postgres >/dev/null"
cat > "$work/postgres.sh" <<EOS
#!/bin/bash
exec valgrind --tool=callgrind --callgrind-out-file='$work/cg.%p' --toggle-collect=plpgsql_inline_handler \
  --dump-instr=no '$bin/postgres' -D '$work/pg' -p $port -k '$work' -c listen_addresses=127.0.0.1 \
  -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c autovacuum=off -c jit=off \
  -c shared_buffers=256MB -c max_wal_size=4GB -c max_connections=20
EOS
chmod 755 "$work/postgres.sh"
as_pg "'$work/postgres.sh' > '$work/log' 2>&1 &"
# (the server, slow under valgrind, may still write its files for a while
# after it is told to stop: wait for it to go before removing them)
valgrind_server_stop() {
  as_pg "'$bin/pg_ctl' -D '$work/pg' stop -m fast" >/dev/null 2>&1 || pkill -f "$work/pg" 2>/dev/null || true
  for _ in $(seq 1 100); do pgrep -f "$work/pg" >/dev/null || break; sleep 0.2; done
  rm -rf "$work"
}
trap valgrind_server_stop EXIT
for _ in $(seq 1 120); do
  psql -qX "postgres://postgres@127.0.0.1:$port/postgres" -c "select 1" >/dev/null 2>&1 && break
  sleep 1
done
