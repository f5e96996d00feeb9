#!/usr/bin/env bash
# The cluster as Patroni sees it (leader, sync standby, lag), and which node haproxy routes to.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/env.sh"
"${RUN_AS[@]}" patronictl -c "$HA_DIR/node1/patroni.yml" list || true
curl -sf -m 1 "http://127.0.0.1:$HAPROXY_STATS_PORT/;csv" | awk -F, '$1 == "primary" && $2 ~ /^node/ { print "haproxy", $2, $18 }'
