#!/usr/bin/env bash
# Gateway WebSocket benchmark: echo round trips through a tunnel, against the same echo upstream on
# this machine,
#   1. the upstream directly,
#   2. Headroom in front (routes[].upgrade: [websocket], a concurrent-requests policy that never
#      triggers, so that each tunnel holds a lease for its life),
#   3. nginx in front (proxy_set_header Upgrade / Connection "upgrade"), the peer.
# Each connection sends a binary message and waits for its echo, again and again, so the figures
# are round trips per second and the latency of one (what a proxy adds to an interactive protocol),
# and bytes per second for the larger message size. The upstream and the load client are
# python3-websockets (ws_echo.py beside this script). Everything binds to 127.0.0.1, uses its own
# temp directory, and stops by itself. Requires nginx and python3-websockets (Debian: apt-get install
# -y nginx python3-websockets), Java 17 and Maven.
#
# Usage: headroom-benchmarks/load/gateway-ws-load.sh [seconds per run, default 10] [connections, default 16]
# Environment: HEADROOM_BENCH_ROUNDS (rounds of the three runs per message size, default 3; the two
# proxies swap order each round), HEADROOM_BENCH_SIZES (message sizes in bytes, default "64 65536"),
# HEADROOM_BENCH_PYTHON (a python3 with websockets, default /usr/bin/python3),
# HEADROOM_BENCH_JAVA, HEADROOM_BENCH_JAVA_FLAGS, HEADROOM_BENCH_WARMUP (s, default 10),
# HEADROOM_BENCH_WORKERS, HEADROOM_BENCH_JAR: as in gateway-load.sh.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
secs="${1:-10}"
conns="${2:-16}"
work="$(mktemp -d /tmp/headroom-ws-load.XXXXXX)"
pids=()
cleanup() {
  for p in "${pids[@]:-}"; do [[ -n "$p" ]] && kill "$p" 2>/dev/null || true; done
  [[ -f "$work/peer.pid" ]] && kill "$(cat "$work/peer.pid")" 2>/dev/null || true
  sleep 0.3
  rm -rf "$work"
}
trap cleanup EXIT

PY="${HEADROOM_BENCH_PYTHON:-/usr/bin/python3}"
"$PY" -c 'import websockets' 2>/dev/null || { echo "$PY has no websockets: apt-get install -y python3-websockets" >&2; exit 1; }
command -v nginx >/dev/null || [[ -x /usr/sbin/nginx ]] || { echo "nginx not found: apt-get install -y nginx" >&2; exit 1; }
NGINX="$(command -v nginx || echo /usr/sbin/nginx)"

free_port() { "$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }
UP=$(free_port); PEER=$(free_port)

# the echo upstream, in its own session (see gateway-load.sh on autogroup scheduling)
setsid "$PY" "$here/ws_echo.py" serve "$UP" > "$work/echo.out" 2>&1 &
pids+=($!)

workers="${HEADROOM_BENCH_WORKERS:-1}"
mkdir -p "$work/peer"
cat > "$work/peer.conf" <<CONF
worker_processes $workers;
pid $work/peer.pid;
error_log $work/peer/error.log warn;
daemon on;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path $work/peer/body;
  proxy_temp_path $work/peer/proxy;
  fastcgi_temp_path $work/peer/fastcgi;
  uwsgi_temp_path $work/peer/uwsgi;
  scgi_temp_path $work/peer/scgi;
  # the WebSocket proxying of nginx's documentation (https://nginx.org/en/docs/http/websocket.html),
  # with the forwarding fields Headroom sends, so that both proxies hand the upstream the same work
  map \$http_upgrade \$connection_upgrade { default upgrade; '' close; }
  server {
    listen 127.0.0.1:$PEER;
    location / {
      proxy_pass http://127.0.0.1:$UP;
      proxy_http_version 1.1;
      proxy_set_header Upgrade \$http_upgrade;
      proxy_set_header Connection \$connection_upgrade;
      proxy_set_header Host \$http_host;
      proxy_set_header X-Forwarded-For \$proxy_add_x_forwarded_for;
      proxy_read_timeout 300s;
    }
  }
}
CONF
"$NGINX" -c "$work/peer.conf" -p "$work/peer" -e "$work/peer/error.log"

jar="${HEADROOM_BENCH_JAR:-$root/headroom-cli/target/headroom-cli-0.1.0-SNAPSHOT-all.jar}"
if [[ ! -f "$jar" ]]; then (cd "$root" && mvn -B -q -pl headroom-cli -am package -DskipTests); fi
cat > "$work/headroom.yaml" <<CONF
service: {name: WebSocket load test}
admin: {enabled: false}
timeouts: {tunnelIdle: 5m}
upstreams:
  echo: {url: "http://127.0.0.1:$UP"}
policies:
  conversations:
    quota: 100000
    window: 1m
    unit: concurrent-requests
    partition: client-ip
    why: Never triggers; each tunnel holds a lease for its life.
routes:
  - {method: GET, path: "/**", upstream: echo, policies: [conversations], upgrade: [websocket]}
CONF
JAVA_FLAGS="${HEADROOM_BENCH_JAVA_FLAGS:--Xms256m -Xmx256m -XX:+UseParallelGC}"
JAVA_BIN="${HEADROOM_BENCH_JAVA:-java}"
setsid "$JAVA_BIN" $JAVA_FLAGS -jar "$jar" serve --config "$work/headroom.yaml" --port 0 --threads "$workers" --no-watch \
  > "$work/headroom.out" 2> "$work/headroom.err" &
pids+=($!)
for _ in $(seq 1 100); do grep -q "listening on" "$work/headroom.out" 2>/dev/null && break; sleep 0.1; done
HR=$(sed -n 's#listening on http://127.0.0.1:##p' "$work/headroom.out")
[[ -n "$HR" ]] || { echo "headroom did not start" >&2; cat "$work/headroom.err" >&2; exit 1; }
for _ in $(seq 1 50); do "$PY" -c "import socket; socket.create_connection(('127.0.0.1', $UP)).close()" 2>/dev/null && break; sleep 0.1; done

sizes=(${HEADROOM_BENCH_SIZES:-64 65536})
run() { # url seconds size: prints "messages bytes seconds p50 p99"
  "$PY" "$here/ws_echo.py" load "$1" "$2" "$conns" "$3"
}

# warm-up: the JVM compiles the tunnel's path (and the handshake's) while it runs
warm="${HEADROOM_BENCH_WARMUP:-10}"
for size in "${sizes[@]}"; do
  run "ws://127.0.0.1:$HR/echo" "$warm" "$size" >/dev/null
  run "ws://127.0.0.1:$PEER/echo" 2 "$size" >/dev/null
done

# rounds: each path once per round per size, the two proxies swapping places from round to round
rounds="${HEADROOM_BENCH_ROUNDS:-3}"
declare -A MSGS BYTES TOOK P50S P99S
measure() { # name url size
  local n b t p50 p99
  read -r n b t p50 p99 < <(run "$2" "$secs" "$3")
  local k="$1|$3"
  MSGS[$k]=$(( ${MSGS[$k]:-0} + n )); BYTES[$k]=$(( ${BYTES[$k]:-0} + b ))
  TOOK[$k]=$(awk -v a="${TOOK[$k]:-0}" -v b="$t" 'BEGIN { print a + b }')
  P50S[$k]="${P50S[$k]:-} $p50"; P99S[$k]="${P99S[$k]:-} $p99"
}
names=(upstream-direct headroom nginx)
for round in $(seq 1 "$rounds"); do
  for size in "${sizes[@]}"; do
    measure upstream-direct "ws://127.0.0.1:$UP/echo" "$size"
    if (( round % 2 == 1 )); then
      measure headroom "ws://127.0.0.1:$HR/echo" "$size"
      measure nginx "ws://127.0.0.1:$PEER/echo" "$size"
    else
      measure nginx "ws://127.0.0.1:$PEER/echo" "$size"
      measure headroom "ws://127.0.0.1:$HR/echo" "$size"
    fi
  done
done

median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
worst() { tr ' ' '\n' | grep -v '^$' | sort -g | tail -1; }
echo "WebSocket echo through a tunnel: $conns connections, one message in flight each, ${secs}s x $rounds rounds per path and size"
printf '%-16s %9s %12s %10s %9s %9s\n' path size round-trip/s MB/s-1way p50-ms p99-ms
for size in "${sizes[@]}"; do
  for name in "${names[@]}"; do
    k="$name|$size"
    printf '%-16s %9s %12.0f %10.2f %9s %9s\n' "$name" "$size" \
      "$(awk -v n="${MSGS[$k]}" -v t="${TOOK[$k]}" 'BEGIN { print n / t }')" \
      "$(awk -v b="${BYTES[$k]}" -v t="${TOOK[$k]}" 'BEGIN { print b / t / 1e6 }')" \
      "$(median <<<"${P50S[$k]}")" "$(worst <<<"${P99S[$k]}")"
  done
done
