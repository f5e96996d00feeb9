#!/usr/bin/env bash
# Brings a killed node back (ops/ha/rejoin.sh node1): starts its Patroni again, which rewinds the
# old primary's data with pg_rewind and follows the new primary; returns once the node is the
# synchronous standby again, so the cluster once more survives losing the primary.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/env.sh"
node="${1:?usage: rejoin.sh node1|node2}"
case "$node" in node1) api="$API1_PORT" ;; node2) api="$API2_PORT" ;; *) ha_log "no such node: $node"; exit 1 ;; esac
if [ -f "$HA_DIR/$node.pid" ] && kill -0 "$(cat "$HA_DIR/$node.pid")" 2>/dev/null; then ha_log "$node's Patroni is running"; exit 0; fi
# A postmaster that outlived its Patroni (kill -9 of Patroni alone) is stopped first.
if [ -f "$HA_DIR/$node/data/postmaster.pid" ]; then
  pm="$(head -1 "$HA_DIR/$node/data/postmaster.pid")"
  if [ -n "$pm" ] && kill -0 "$pm" 2>/dev/null; then kill -QUIT "$pm"; sleep 1; fi
fi
ha_log "starting Patroni $node again"
spawn_bg "$HA_DIR/$node.pid" "$HA_DIR/log/$node.log" patroni "$HA_DIR/$node/patroni.yml"
wait_for 120 "$node as the synchronous standby" sh -c "[ \"\$(curl -s -o /dev/null -m 1 -w '%{http_code}' http://127.0.0.1:$api/sync)\" = 200 ]"
ha_log "$node is the synchronous standby"
