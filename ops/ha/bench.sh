#!/usr/bin/env bash
# What synchronous replication costs per buy: one service process buying for SECONDS with
# CONCURRENCY clients, first against the Patroni cluster (through haproxy, synchronous mode), then
# against a single PostgreSQL 15 on the same machine with the same durability settings (fsync and
# synchronous_commit on). Same run, same machine, so the difference is the standby's round trip.
# Prints one JSON line per setup. Brings the cluster up and down itself.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/env.sh"
seconds="${SECONDS_PER_RUN:-10}"
concurrency="${CONCURRENCY:-8}"
here="$(dirname "${BASH_SOURCE[0]}")"
cd "$REPO_ROOT"
[ -f dist/main.js ] || npm run build >/dev/null
trap 'bash "$here/down.sh" >/dev/null 2>&1 || true' EXIT

bash "$here/up.sh" >/dev/null
url="$(RATE_LIMIT_PER_MINUTE=1000000 RATE_LIMIT_PER_DAY=100000000 bash "$here/services.sh" 1 | tail -1)"
echo "{\"setup\":\"patroni, synchronous standby, via haproxy\",\"result\":$(node "$here/buy-load.mjs" "$url" "$seconds" "$concurrency")}"
bash "$here/down.sh" >/dev/null

# The single node: same binaries and durability, its own folder and port, stopped by the trap's down.sh.
mkdir -p "$HA_DIR/single" "$HA_DIR/log"
chmod 755 "$HA_DIR"
if [ "$(id -u)" = 0 ]; then chown -R postgres "$HA_DIR"; fi
"${RUN_AS[@]}" "$PG_BIN/initdb" -D "$HA_DIR/single/data" -U postgres --auth=trust -E UTF8 >/dev/null
"${RUN_AS[@]}" "$PG_BIN/pg_ctl" -D "$HA_DIR/single/data" -l "$HA_DIR/log/single.log" -w \
  -o "-c listen_addresses=127.0.0.1 -c port=$HAPROXY_PORT -c unix_socket_directories=$HA_DIR/single -c max_connections=200 -c fsync=on -c synchronous_commit=on" start >/dev/null
url="$(HA_DATABASE_URL="postgres://postgres@127.0.0.1:$HAPROXY_PORT/postgres" RATE_LIMIT_PER_MINUTE=1000000 RATE_LIMIT_PER_DAY=100000000 bash "$here/services.sh" 1 | tail -1)"
echo "{\"setup\":\"single PostgreSQL\",\"result\":$(node "$here/buy-load.mjs" "$url" "$seconds" "$concurrency")}"
for f in "$HA_DIR"/service-*.pid; do kill "$(cat "$f")" 2>/dev/null || true; rm -f "$f"; done
"${RUN_AS[@]}" "$PG_BIN/pg_ctl" -D "$HA_DIR/single/data" -m fast -w stop >/dev/null
