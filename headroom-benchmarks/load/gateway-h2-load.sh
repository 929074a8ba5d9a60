#!/usr/bin/env bash
# Gateway load benchmark over HTTP/2 towards clients: h2load with many streams per connection against
#   1. Headroom (listen.http2: true, h2c by prior knowledge) with limits that never trigger,
#   2. nginx with HTTP/2 (h2c by prior knowledge) and limit_req in front (never triggering), the peer,
#   3. Headroom with limits that refuse half the traffic (every other request hits a spent quota),
#   4. nginx with limit_req refusing half the traffic the same way,
# both proxying to the same upstream over HTTP/1.1 with keep-alive (an nginx server block returning a
# small JSON body). The proxies swap order each round. Everything binds to 127.0.0.1, uses its own
# temp directory, and stops by itself. Requires h2load (Debian: apt-get install -y nghttp2-client) and
# nginx, Java 17 and Maven. Model: gateway-load.sh (HTTP/1.1, wrk).
#
# Usage: headroom-benchmarks/load/gateway-h2-load.sh [seconds per run, default 10] [connections, default 8]
# Environment: HEADROOM_BENCH_STREAMS (concurrent streams per connection, h2load -m, default 32),
# HEADROOM_BENCH_ROUNDS (default 3), HEADROOM_BENCH_JAVA, HEADROOM_BENCH_JAVA_FLAGS (default -Xms256m
# -Xmx256m -XX:+UseParallelGC), HEADROOM_BENCH_WARMUP (s, default 20), HEADROOM_BENCH_WORKERS
# (Headroom's event loops and the peer's worker processes, default 1), HEADROOM_BENCH_JAR (the gateway
# jar, default this checkout's, built when missing).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
secs="${1:-10}"
conns="${2:-8}"
streams="${HEADROOM_BENCH_STREAMS:-32}"
work="$(mktemp -d /tmp/headroom-h2-load.XXXXXX)"
pids=()
cleanup() {
  for p in "${pids[@]:-}"; do [[ -n "$p" ]] && kill "$p" 2>/dev/null || true; done
  for n in upstream peer; do [[ -f "$work/$n.pid" ]] && kill "$(cat "$work/$n.pid")" 2>/dev/null || true; done
  sleep 0.3
  rm -rf "$work"
}
trap cleanup EXIT

command -v h2load >/dev/null || { echo "h2load not found: apt-get install -y nghttp2-client" >&2; exit 1; }
command -v nginx >/dev/null || [[ -x /usr/sbin/nginx ]] || { echo "nginx not found: apt-get install -y nginx" >&2; exit 1; }
NGINX="$(command -v nginx || echo /usr/sbin/nginx)"

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }
UP=$(free_port); PEER=$(free_port)

# nginx 1.25.1 and later switch HTTP/2 on with "http2 on;"; before, with the listen parameter (which on
# a cleartext port means h2c by prior knowledge, as Headroom's does)
nginx_version=$("$NGINX" -v 2>&1 | sed -n 's#.*nginx/\([0-9.]*\).*#\1#p')
if printf '%s\n1.25.1\n' "$nginx_version" | sort -V | head -1 | grep -qx 1.25.1; then
  peer_listen="listen 127.0.0.1:$PEER; http2 on;"
else
  peer_listen="listen 127.0.0.1:$PEER http2;"
fi

workers="${HEADROOM_BENCH_WORKERS:-1}"
# every stream in flight holds an upstream connection (upstreams stay HTTP/1.1): both proxies keep as
# many idle as there can be streams, or each exchange past the pool would open and close a connection
pool=$((conns * streams))
nginx_conf() { # name server-block [worker processes]
  mkdir -p "$work/$1"
  cat > "$work/$1.conf" <<CONF
worker_processes ${3:-1};
pid $work/$1.pid;
error_log $work/$1/error.log warn;
daemon on;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path $work/$1/body;
  proxy_temp_path $work/$1/proxy;
  fastcgi_temp_path $work/$1/fastcgi;
  uwsgi_temp_path $work/$1/uwsgi;
  scgi_temp_path $work/$1/scgi;
  keepalive_requests 1000000;
  http2_max_concurrent_streams 128;
$2
}
CONF
  "$NGINX" -c "$work/$1.conf" -p "$work/$1" -e "$work/$1/error.log"
}
nginx_conf upstream "  server {
    listen 127.0.0.1:$UP;
    location / { default_type application/json; return 200 '{\"message\":\"hello\"}'; }
  }"
nginx_conf peer "  upstream origin { server 127.0.0.1:$UP; keepalive $pool; }
  limit_req_zone \$binary_remote_addr zone=open:10m rate=1000000r/s;
  limit_req_zone \$binary_remote_addr zone=spent:10m rate=1r/m;
  limit_req_status 429;
  proxy_http_version 1.1;
  proxy_set_header Connection \"\";
  proxy_set_header Host \$host;
  proxy_set_header Forwarded \"for=\$remote_addr;proto=\$scheme;host=\\\"\$host\\\"\";
  proxy_set_header X-Forwarded-For \$proxy_add_x_forwarded_for;
  proxy_set_header X-Forwarded-Proto \$scheme;
  proxy_set_header X-Forwarded-Host \$host;
  server {
    $peer_listen
    location /ok { limit_req zone=open burst=1000000 nodelay; proxy_pass http://origin; }
    location /spent { limit_req zone=spent; proxy_pass http://origin; }
  }" "$workers"

jar="${HEADROOM_BENCH_JAR:-$root/headroom-cli/target/headroom-cli-0.1.0-SNAPSHOT-all.jar}"
if [[ ! -f "$jar" ]]; then (cd "$root" && mvn -B -q -pl headroom-cli -am package -DskipTests); fi
cat > "$work/headroom.yaml" <<CONF
service: {name: HTTP/2 load test}
listen: {host: 127.0.0.1, port: 0, http2: true}
admin: {enabled: false}
limits: {maxConcurrentStreams: 128}
upstreams:
  origin: {url: "http://127.0.0.1:$UP", maxConnections: $pool}
policies:
  open:
    quota: 1000000000
    window: 1s
    partition: client-ip
    why: Never triggers; measures the cost of deciding.
  spent:
    quota: 1
    window: 1d
    algorithm: fixed-window
    partition: client-ip
    why: Spent after one request; measures the cost of refusing.
routes:
  - {method: GET, path: /ok, upstream: origin, policies: [open]}
  - {method: GET, path: /spent, upstream: origin, policies: [spent]}
CONF
JAVA_FLAGS="${HEADROOM_BENCH_JAVA_FLAGS:--Xms256m -Xmx256m -XX:+UseParallelGC}"
JAVA_BIN="${HEADROOM_BENCH_JAVA:-java}"
# its own session, as each nginx is (see gateway-load.sh: autogroup scheduling)
setsid "$JAVA_BIN" $JAVA_FLAGS -jar "$jar" serve --config "$work/headroom.yaml" --port 0 --threads "$workers" --no-watch \
  > "$work/headroom.out" 2> "$work/headroom.err" &
pids+=($!)
for _ in $(seq 1 100); do grep -q "listening on" "$work/headroom.out" 2>/dev/null && break; sleep 0.1; done
HR=$(sed -n 's#listening on http://127.0.0.1:##p' "$work/headroom.out")
[[ -n "$HR" ]] || { echo "headroom did not start" >&2; cat "$work/headroom.err" >&2; exit 1; }

# h2load sends its URIs in turn, one per request: /ok then /spent is half refused
h2() { # seconds url...
  local d="$1"; shift
  h2load -c"$conns" -m"$streams" -t2 -D"$d" "$@"
}
warm="${HEADROOM_BENCH_WARMUP:-20}"
h2 "$warm" "http://127.0.0.1:$HR/ok" >/dev/null
h2 "$((warm / 2 > 0 ? warm / 2 : 1))" "http://127.0.0.1:$HR/ok" "http://127.0.0.1:$HR/spent" >/dev/null
h2 3 "http://127.0.0.1:$PEER/ok" >/dev/null

ticks() { local t=0 p; for p in "$@"; do t=$((t + $(awk '{print $14 + $15}' "/proc/$p/stat"))); done; echo "$t"; }
workers_of() { pgrep -P "$(cat "$work/$1.pid")" | tr '\n' ' '; }
HZ=$(getconf CLK_TCK)
HRPID=${pids[0]}
PEERW=$(workers_of peer)

declare -A REQS TOOK OK4 NON MEAN PXT
measure() { # name proxy-pids url...
  local name="$1" proxy="$2"; shift 2
  local px0 px1 out
  px0=$(ticks $proxy)
  out=$(h2 "$secs" "$@")
  px1=$(ticks $proxy)
  local done took s2 s4 mean
  done=$(awk '/^requests:/ {print $6}' <<<"$out")
  took=$(awk '/^finished in/ {gsub(/s,?$/, "", $3); print $3}' <<<"$out")
  s2=$(awk '/^status codes:/ {print $3}' <<<"$out")
  s4=$(awk '/^status codes:/ {print $7}' <<<"$out")
  mean=$(awk '/^time for request:/ {print $6}' <<<"$out")
  REQS[$name]=$(( ${REQS[$name]:-0} + ${done:-0} ))
  TOOK[$name]=$(awk -v a="${TOOK[$name]:-0}" -v b="${took:-0}" 'BEGIN { print a + b }')
  OK4[$name]=$(( ${OK4[$name]:-0} + ${s4:-0} ))
  NON[$name]=$(( ${NON[$name]:-0} + ${done:-0} - ${s2:-0} - ${s4:-0} ))
  MEAN[$name]="${MEAN[$name]:-} $mean"
  PXT[$name]=$(( ${PXT[$name]:-0} + px1 - px0 ))
}
rounds="${HEADROOM_BENCH_ROUNDS:-3}"
names=(headroom-open nginx-limit_req-open headroom-half-refused nginx-limit_req-half-refused)
for round in $(seq 1 "$rounds"); do
  if (( round % 2 == 1 )); then
    measure headroom-open "$HRPID" "http://127.0.0.1:$HR/ok"
    measure nginx-limit_req-open "$PEERW" "http://127.0.0.1:$PEER/ok"
    measure headroom-half-refused "$HRPID" "http://127.0.0.1:$HR/ok" "http://127.0.0.1:$HR/spent"
    measure nginx-limit_req-half-refused "$PEERW" "http://127.0.0.1:$PEER/ok" "http://127.0.0.1:$PEER/spent"
  else
    measure nginx-limit_req-open "$PEERW" "http://127.0.0.1:$PEER/ok"
    measure headroom-open "$HRPID" "http://127.0.0.1:$HR/ok"
    measure nginx-limit_req-half-refused "$PEERW" "http://127.0.0.1:$PEER/ok" "http://127.0.0.1:$PEER/spent"
    measure headroom-half-refused "$HRPID" "http://127.0.0.1:$HR/ok" "http://127.0.0.1:$HR/spent"
  fi
done

echo "# $(date -u +%FT%TZ) $(nproc) cores; h2load -c$conns -m$streams -t2 -D$secs x $rounds rounds (h2c prior knowledge); headroom --threads $workers, $("$JAVA_BIN" -version 2>&1 | head -1) $JAVA_FLAGS; peer nginx $nginx_version worker_processes $workers; upstream nginx over HTTP/1.1"
printf "| run | req/s | 4xx | other non-2xx | mean request time (per round) | proxy CPU us/req |\n| --- | ---: | ---: | ---: | --- | ---: |\n"
declare -A RPS
for name in "${names[@]}"; do
  RPS[$name]=$(awk -v n="${REQS[$name]}" -v t="${TOOK[$name]}" 'BEGIN { printf "%.0f", (t > 0 ? n / t : 0) }')
  cpx=$(awk -v t="${PXT[$name]}" -v n="${REQS[$name]}" -v hz="$HZ" 'BEGIN { printf "%.1f", (n > 0 ? t * 1e6 / hz / n : 0) }')
  printf "| %s | %s | %s | %s |%s | %s |\n" "$name" "${RPS[$name]}" "${OK4[$name]}" "${NON[$name]}" "${MEAN[$name]}" "$cpx"
done
echo
awk -v a="${RPS[headroom-open]}" -v b="${RPS[nginx-limit_req-open]}" 'BEGIN { if (b > 0) printf "throughput headroom/nginx over HTTP/2 (open): %.2f\n", a/b }'
awk -v a="${RPS[headroom-half-refused]}" -v b="${RPS[nginx-limit_req-half-refused]}" 'BEGIN { if (b > 0) printf "throughput headroom/nginx over HTTP/2 (half refused): %.2f\n", a/b }'
