# Settings of the local high-availability rehearsal (sourced by the other scripts). Every address is
# loopback; every port can be overridden from the environment (the failover test picks free ones).
HA_DIR="${HA_DIR:-/tmp/agent-commerce-ha}"
HA_SCOPE="${HA_SCOPE:-agent-commerce}"
ETCD_PORT="${ETCD_PORT:-23790}"
ETCD_PEER_PORT="${ETCD_PEER_PORT:-23800}"
PG1_PORT="${PG1_PORT:-54331}"
PG2_PORT="${PG2_PORT:-54332}"
API1_PORT="${API1_PORT:-8091}"
API2_PORT="${API2_PORT:-8092}"
HAPROXY_PORT="${HAPROXY_PORT:-54330}"
HAPROXY_STATS_PORT="${HAPROXY_STATS_PORT:-8404}"
SERVICE_PORT="${SERVICE_PORT:-3101}"
PG_BIN="${PG_BIN:-/usr/lib/postgresql/15/bin}"
# Patroni's leader key lives this long without renewal: the time a dead primary holds the cluster.
HA_TTL="${HA_TTL:-10}"
HA_LOOP_WAIT="${HA_LOOP_WAIT:-1}"
HA_RETRY_TIMEOUT="${HA_RETRY_TIMEOUT:-4}"
HA_PG_PASSWORD="${HA_PG_PASSWORD:-postgres}"
DATABASE_URL_HA="postgres://postgres:${HA_PG_PASSWORD}@127.0.0.1:${HAPROXY_PORT}/postgres"

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"

# PostgreSQL refuses to run as root: as root, the cluster runs as the postgres user.
if [ "$(id -u)" = 0 ]; then
  RUN_AS=(runuser -u postgres --)
else
  RUN_AS=()
fi

# spawn_bg PIDFILE LOGFILE COMMAND...: starts COMMAND in the background in a session of its own (as
# RUN_AS); PIDFILE gets the pid of COMMAND itself (not of runuser or setsid around it), so a kill -9
# of that pid kills the program, and waits until the file is there.
spawn_bg() {
  local pidfile="$1" log="$2"
  shift 2
  rm -f "$pidfile"
  "${RUN_AS[@]}" setsid sh -c 'echo $$ >"$0" && exec "$@"' "$pidfile" "$@" >"$log" 2>&1 </dev/null &
  local i
  for i in $(seq 1 100); do [ -s "$pidfile" ] && return 0; sleep 0.05; done
  ha_log "no pid file $pidfile"
  return 1
}

ha_log() { printf '%s ha: %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

# wait_for SECONDS DESCRIPTION COMMAND...: runs COMMAND every 0.2 s until it succeeds.
wait_for() {
  local seconds="$1" what="$2"
  shift 2
  local deadline=$((SECONDS + seconds))
  until "$@" >/dev/null 2>&1; do
    if [ "$SECONDS" -ge "$deadline" ]; then
      ha_log "timed out after ${seconds}s waiting for: $what"
      return 1
    fi
    sleep 0.2
  done
}

# The HTTP status of a Patroni REST endpoint (000 when it does not answer).
patroni_status() { curl -s -o /dev/null -m 1 -w '%{http_code}' "http://127.0.0.1:$1$2" || true; }

# The Patroni REST port of the current primary, or nothing.
primary_api_port() {
  local port
  for port in "$API1_PORT" "$API2_PORT"; do
    if [ "$(patroni_status "$port" /primary)" = 200 ]; then echo "$port"; return 0; fi
  done
  return 1
}
