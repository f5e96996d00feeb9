#!/usr/bin/env bash
# The failure to rehearse: kill -9 of the primary's Patroni and of its postmaster, as a machine that
# loses power would. Prints the killed node's REST port. The standby takes over once the leader key
# expires (HA_TTL seconds).
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/env.sh"
port="$(primary_api_port)" || { ha_log "no primary"; exit 1; }
node="node$([ "$port" = "$API1_PORT" ] && echo 1 || echo 2)"
postmaster="$(head -1 "$HA_DIR/$node/data/postmaster.pid")"
kill -KILL "$(cat "$HA_DIR/$node.pid")" "$postmaster"
ha_log "killed $node (Patroni $(cat "$HA_DIR/$node.pid"), postmaster $postmaster)"
echo "$port"
