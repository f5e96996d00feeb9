#!/usr/bin/env bash
# Starts N service processes (node dist/main.js, STORAGE=postgres) against haproxy, on loopback
# ports SERVICE_PORT, SERVICE_PORT+1, …; waits until each answers /health. Builds dist/ first when
# it is missing or BUILD=1. The processes share MPP_CHALLENGE_SECRET and STRIPE_WEBHOOK_SECRET
# (made once per HA_DIR), so a challenge issued by one is redeemed by another and a processor
# webhook verifies on every one. Extra environment (PAYMENTS, RATE_LIMIT_PER_MINUTE, …) passes through;
# BASE_URL is each process's own address unless HA_BASE_URL names the public one (a load balancer).
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/env.sh"
n="${1:-2}"
# HA_DATABASE_URL: another database instead of the cluster's haproxy (bench.sh's single node).
database_url="${HA_DATABASE_URL:-$DATABASE_URL_HA}"
[ -n "${HA_DATABASE_URL:-}" ] || [ -f "$HA_DIR/etcd.pid" ] || { ha_log "the cluster is not up: run ops/ha/up.sh first"; exit 1; }
mkdir -p "$HA_DIR/log"

cd "$REPO_ROOT"
if [ ! -f dist/main.js ] || [ "${BUILD:-0}" = 1 ]; then ha_log "building (npm run build)"; npm run build >/dev/null; fi

secrets="$HA_DIR/secrets.env"
if [ ! -f "$secrets" ]; then
  umask 077
  {
    echo "MPP_CHALLENGE_SECRET=$(head -c 32 /dev/urandom | base64 | tr -d '\n')"
    echo "STRIPE_WEBHOOK_SECRET=whsec_$(head -c 24 /dev/urandom | base64 | tr -d '\n/+=')"
  } >"$secrets"
fi
set -a
. "$secrets"
set +a

# The service runs as whoever runs this script (only PostgreSQL needs its own user).
RUN_AS=()
for i in $(seq 0 $((n - 1))); do
  port=$((SERVICE_PORT + i))
  if [ -f "$HA_DIR/service-$port.pid" ] && kill -0 "$(cat "$HA_DIR/service-$port.pid")" 2>/dev/null; then continue; fi
  ha_log "starting service on 127.0.0.1:$port"
  # bench/loopback.mjs binds the server to 127.0.0.1 (the app itself listens on every interface).
  STORAGE=postgres DATABASE_URL="$database_url" PORT="$port" BASE_URL="${HA_BASE_URL:-http://127.0.0.1:$port}" \
    LOG_LEVEL="${LOG_LEVEL:-WARN}" \
    spawn_bg "$HA_DIR/service-$port.pid" "$HA_DIR/log/service-$port.log" \
    node --max-semi-space-size=8 --no-allocation-site-pretenuring --import ./bench/loopback.mjs dist/main.js
done
for i in $(seq 0 $((n - 1))); do
  port=$((SERVICE_PORT + i))
  wait_for 60 "service on port $port" curl -sf -m 2 "http://127.0.0.1:$port/health"
  echo "http://127.0.0.1:$port"
done
