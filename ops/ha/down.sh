#!/usr/bin/env bash
# Stops everything ops/ha started (service processes, haproxy, both Patroni nodes and their
# PostgreSQL, etcd) by the process ids it recorded, and removes HA_DIR. Safe to run twice.
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/env.sh"
[ -d "$HA_DIR" ] || exit 0

stop_pid() { # pidfile signal
  [ -f "$1" ] || return 0
  local pid
  pid="$(cat "$1")"
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    kill "-$2" "$pid" 2>/dev/null
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null
  fi
  rm -f "$1"
}

for f in "$HA_DIR"/service-*.pid; do [ -e "$f" ] && stop_pid "$f" TERM; done
stop_pid "$HA_DIR/haproxy.pid" TERM
for node in node1 node2; do
  stop_pid "$HA_DIR/$node.pid" TERM
  # A postmaster left behind (its Patroni was killed -9): stop it by its own pid file.
  if [ -f "$HA_DIR/$node/data/postmaster.pid" ]; then
    pm="$(head -1 "$HA_DIR/$node/data/postmaster.pid")"
    [ -n "$pm" ] && kill -QUIT "$pm" 2>/dev/null
  fi
done
# bench.sh's single node, if a run stopped half-way.
if [ -f "$HA_DIR/single/data/postmaster.pid" ]; then
  pm="$(head -1 "$HA_DIR/single/data/postmaster.pid")"
  [ -n "$pm" ] && kill -QUIT "$pm" 2>/dev/null
fi
stop_pid "$HA_DIR/etcd.pid" TERM
rm -rf "$HA_DIR"
ha_log "down"
