#!/usr/bin/env bash
# Brings up, on this machine and on loopback only: etcd, two PostgreSQL 15 nodes under Patroni in
# synchronous mode, and haproxy routing to whichever node Patroni's REST API calls the primary.
# Returns once haproxy routes to the primary only, it takes writes, and the standby is synchronous.
# Prints the DATABASE_URL to use. Packages: apt-get install -y patroni etcd-server haproxy.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/env.sh"

for cmd in etcd patroni haproxy curl "$PG_BIN/postgres" "$PG_BIN/psql"; do
  command -v "$cmd" >/dev/null || { ha_log "missing: $cmd (apt-get install -y patroni etcd-server haproxy postgresql-15)"; exit 1; }
done
if [ -e "$HA_DIR/etcd.pid" ]; then ha_log "$HA_DIR is in use: run ops/ha/down.sh first"; exit 1; fi

mkdir -p "$HA_DIR"/{etcd,node1,node2,log}
chmod 755 "$HA_DIR"
if [ "$(id -u)" = 0 ]; then chown -R postgres "$HA_DIR"; fi

# etcd 3.4: Debian's Patroni 3.0 talks to it through the v2 API (python3-etcd), off by default in 3.4.
ha_log "starting etcd on 127.0.0.1:$ETCD_PORT"
spawn_bg "$HA_DIR/etcd.pid" "$HA_DIR/log/etcd.log" etcd --name ha --data-dir "$HA_DIR/etcd" --enable-v2=true \
  --listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
  --listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
  --initial-cluster "ha=http://127.0.0.1:$ETCD_PEER_PORT" --listen-metrics-urls "http://127.0.0.1:0"
wait_for 30 "etcd health" curl -sf "http://127.0.0.1:$ETCD_PORT/health"

node_config() { # name pg_port api_port
  cat <<YAML
scope: $HA_SCOPE
namespace: /service/
name: $1
log:
  level: WARNING
restapi:
  listen: 127.0.0.1:$3
  connect_address: 127.0.0.1:$3
etcd:
  host: 127.0.0.1:$ETCD_PORT
bootstrap:
  dcs:
    ttl: $HA_TTL
    loop_wait: $HA_LOOP_WAIT
    retry_timeout: $HA_RETRY_TIMEOUT
    maximum_lag_on_failover: 1048576
    # A commit is acknowledged only once the standby has it: losing the primary loses no
    # acknowledged write, and Patroni promotes only the synchronous standby.
    synchronous_mode: true
    postgresql:
      use_pg_rewind: true
      use_slots: true
      parameters:
        max_connections: 200
        wal_level: replica
        hot_standby: "on"
        max_wal_senders: 10
        max_replication_slots: 10
        wal_log_hints: "on"
        synchronous_commit: "on"
  initdb:
    - encoding: UTF8
    - data-checksums
  pg_hba:
    - local all all trust
    - host replication replicator 127.0.0.1/32 md5
    - host all all 127.0.0.1/32 md5
postgresql:
  listen: 127.0.0.1:$2
  connect_address: 127.0.0.1:$2
  data_dir: $HA_DIR/$1/data
  bin_dir: $PG_BIN
  pgpass: $HA_DIR/$1/pgpass
  authentication:
    replication:
      username: replicator
      password: replicator-$HA_PG_PASSWORD
    superuser:
      username: postgres
      password: $HA_PG_PASSWORD
  # A replica's base backup asks the primary for a checkpoint: pg_basebackup's default is a spread
  # one, paced over checkpoint_completion_target x checkpoint_timeout (~270 s) whatever the number of
  # dirty buffers, so a standby cloned while the primary had writes in memory took minutes to join.
  basebackup:
    - checkpoint: fast
  parameters:
    unix_socket_directories: $HA_DIR/$1
    listen_addresses: 127.0.0.1
tags:
  nofailover: false
  noloadbalance: false
YAML
}

start_node() { # name pg_port api_port
  node_config "$@" >"$HA_DIR/$1/patroni.yml"
  if [ "$(id -u)" = 0 ]; then chown postgres "$HA_DIR/$1/patroni.yml"; fi
  ha_log "starting Patroni $1 (PostgreSQL 127.0.0.1:$2, REST 127.0.0.1:$3)"
  spawn_bg "$HA_DIR/$1.pid" "$HA_DIR/log/$1.log" patroni "$HA_DIR/$1/patroni.yml"
}

start_node node1 "$PG1_PORT" "$API1_PORT"
wait_for 90 "node1 to lead" sh -c "[ \"\$(curl -s -o /dev/null -m 1 -w '%{http_code}' http://127.0.0.1:$API1_PORT/primary)\" = 200 ]"
start_node node2 "$PG2_PORT" "$API2_PORT"

cat >"$HA_DIR/haproxy.cfg" <<CFG
global
    maxconn 2000
    pidfile $HA_DIR/haproxy.pid
defaults
    mode tcp
    timeout connect 2s
    timeout client 30m
    timeout server 30m
    timeout check 1s
# Writes go to the primary only: a node is up when Patroni's REST API answers 200 to /primary.
# When it stops being the primary its sessions are cut at once (on-marked-down), so the service's
# pooled connections fail fast and reconnect to the new primary instead of hanging.
listen primary
    bind 127.0.0.1:$HAPROXY_PORT
    option httpchk GET /primary
    http-check expect status 200
    default-server inter 500ms fastinter 250ms downinter 500ms fall 2 rise 1 on-marked-down shutdown-sessions
    server node1 127.0.0.1:$PG1_PORT maxconn 180 check port $API1_PORT
    server node2 127.0.0.1:$PG2_PORT maxconn 180 check port $API2_PORT
listen stats
    mode http
    bind 127.0.0.1:$HAPROXY_STATS_PORT
    stats enable
    stats uri /
CFG
if [ "$(id -u)" = 0 ]; then chown postgres "$HA_DIR/haproxy.cfg"; fi
ha_log "starting haproxy on 127.0.0.1:$HAPROXY_PORT"
"${RUN_AS[@]}" haproxy -D -f "$HA_DIR/haproxy.cfg" >"$HA_DIR/log/haproxy.log" 2>&1

# haproxy's view: UP only for the node whose REST API says primary (CSV: pxname,svname,…,status is field 18).
haproxy_routes_only_to() { # node
  local csv
  csv="$(curl -sf -m 1 "http://127.0.0.1:$HAPROXY_STATS_PORT/;csv")" || return 1
  [ "$(printf '%s\n' "$csv" | awk -F, '$1 == "primary" && $2 != "FRONTEND" && $2 != "BACKEND" && $18 ~ /^UP/ { print $2 }')" = "$1" ]
}

# Ready: the standby streams synchronously, haproxy routes to the primary alone, and a write through it lands.
wait_for 120 "node2 as the synchronous standby" sh -c "[ \"\$(curl -s -o /dev/null -m 1 -w '%{http_code}' http://127.0.0.1:$API2_PORT/sync)\" = 200 ]"
primary_node="node$([ "$(primary_api_port)" = "$API1_PORT" ] && echo 1 || echo 2)"
wait_for 30 "haproxy to route to $primary_node only" haproxy_routes_only_to "$primary_node"
wait_for 30 "haproxy to route writes to the primary" env PGPASSWORD="$HA_PG_PASSWORD" PGCONNECT_TIMEOUT=2 \
  "$PG_BIN/psql" -X -q -h 127.0.0.1 -p "$HAPROXY_PORT" -U postgres -d postgres -v ON_ERROR_STOP=1 \
  -c "CREATE TABLE IF NOT EXISTS ha_ready (at timestamptz); INSERT INTO ha_ready VALUES (now()); DROP TABLE ha_ready"
ha_log "up: primary on REST port $(primary_api_port), haproxy 127.0.0.1:$HAPROXY_PORT"
echo "DATABASE_URL=$DATABASE_URL_HA"
