#!/usr/bin/env bash
# Limiters in front of an upstream of known capacity, under a load ramp from half to three times
# that capacity and back, once with the upstream healthy and once with its capacity halved during
# the overload. One run, the same upstream, six set-ups:
#
#   none      the Headroom gateway proxying with no policy (the same proxy as the Headroom set-ups)
#   fixed     the gateway with a concurrent-requests policy of C (the healthy upstream's slots), global
#   nginx     nginx with limit_req at the healthy capacity (rate C/service, burst C, nodelay) and
#             limit_conn at C per server: its documented set-up for protecting an upstream
#   adaptive  the gateway with routes[].adaptive at its defaults, no other policy
#   adaptive-tight  the same with tolerance 1.2 set explicitly (the default since 2026-11-29; 1.5 before,
#             which the runs in BENCHMARKS.md measured as adaptive)
#   adaptive-queue  the gateway with routes[].adaptive and a global token bucket at the healthy
#             capacity (scaled by the adaptive limit, scaleQuotas) whose refusals wait
#             (queue maxWait half a service time), as nginx's limit_req burst delay does
#
# The upstream is dev.headroom.benchmarks.ramp.SimulatedUpstream: C slots of one service time each
# (default 20 of 200 ms: 100 requests a second) and an unbounded queue behind them. The load is
# dev.headroom.benchmarks.ramp.LoadRamp: open loop, Poisson arrivals at 0.5x C for 10 s not counted
# (the limiter warms up), then 15 s at 0.5x C (its last 10 s the unloaded figures), a 20 s ramp
# to 3x C, 60 s at 3x, the ramp down and 15 s at 0.5x; every request times out after 2 s. In the
# halved case the upstream's slots are halved 20 s into the 3x hold. The 3x figures are over the
# hold's last 20 s (in the halved case all after the halving), against the upstream's capacity then.
#
# Output in the output directory: SETUP-CASE.csv per run (one row a second), summary.txt (one line
# per run), summary.md (the table for BENCHMARKS.md) and capacity-ramp.png (RampPlot).
# Everything binds to 127.0.0.1 and uses its own temp directory; the script stops what it started.
#
# Usage: headroom-benchmarks/load/capacity-ramp.sh [output directory, default .] [set-up ...]
# Environment: HEADROOM_RAMP_SLOTS (20), HEADROOM_RAMP_SERVICE_MS (200), HEADROOM_RAMP_HOLD (60),
# HEADROOM_RAMP_RAMP (20), HEADROOM_RAMP_WARM (15), HEADROOM_RAMP_HALVE_AFTER (20),
# HEADROOM_RAMP_MEASURE (20), HEADROOM_BENCH_JAR, HEADROOM_BENCH_JAVA, HEADROOM_BENCH_JAVA_FLAGS
# (default -Xms256m -Xmx256m -XX:+UseParallelGC), HEADROOM_BENCH_THREADS (event loops, default 2).
# Requires nginx (Debian: apt-get install -y nginx-light), Java 17, Maven.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
out="$(mkdir -p "${1:-.}" && cd "${1:-.}" && pwd)"
shift || true
setups=("$@")
(( ${#setups[@]} > 0 )) || setups=(none fixed nginx adaptive adaptive-tight adaptive-queue)
for s in "${setups[@]}"; do
  case "$s" in none|fixed|nginx|adaptive|adaptive-tight|adaptive-queue) ;;
    *) echo "set-up: '$s' is not a set-up; expected none, fixed, nginx, adaptive, adaptive-tight or adaptive-queue" >&2; exit 2;; esac
done
work="$(mktemp -d /tmp/headroom-ramp.XXXXXX)"
pids=()
cleanup() {
  for p in "${pids[@]:-}"; do [[ -n "$p" ]] && kill "$p" 2>/dev/null || true; done
  [[ -f "$work/nginx.pid" ]] && kill "$(cat "$work/nginx.pid")" 2>/dev/null || true
  sleep 0.3
  rm -rf "$work"
}
trap cleanup EXIT
NGINX="$(command -v nginx || echo /usr/sbin/nginx)"
[[ -x "$NGINX" ]] || { echo "nginx not found: apt-get install -y nginx-light" >&2; exit 1; }
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }

slots="${HEADROOM_RAMP_SLOTS:-20}"
service_ms="${HEADROOM_RAMP_SERVICE_MS:-200}"
hold="${HEADROOM_RAMP_HOLD:-60}"
ramp="${HEADROOM_RAMP_RAMP:-20}"
warm="${HEADROOM_RAMP_WARM:-15}"
halve_after="${HEADROOM_RAMP_HALVE_AFTER:-20}"
measure="${HEADROOM_RAMP_MEASURE:-20}"
rate=$(( slots * 1000 / service_ms )) # the healthy capacity, requests a second

jar="${HEADROOM_BENCH_JAR:-$root/headroom-cli/target/headroom-cli-0.1.0-SNAPSHOT-all.jar}"
if [[ ! -f "$jar" ]]; then (cd "$root" && mvn -B -q -pl headroom-cli -am package -DskipTests); fi
cp "$jar" "$work/headroom.jar" # a build during the run cannot rewrite it under the gateway
jar="$work/headroom.jar"
bench_jar="$root/headroom-benchmarks/target/benchmarks.jar"
if [[ ! -f "$bench_jar" ]]; then (cd "$root" && mvn -B -q -pl headroom-benchmarks -am package -DskipTests); fi
cp "$bench_jar" "$work/benchmarks.jar"
bench_jar="$work/benchmarks.jar"
JAVA_FLAGS="${HEADROOM_BENCH_JAVA_FLAGS:--Xms256m -Xmx256m -XX:+UseParallelGC}"
JAVA_BIN="${HEADROOM_BENCH_JAVA:-java}"
threads="${HEADROOM_BENCH_THREADS:-2}"

# The upstream: one process for every run; each run sets its slots first.
"$JAVA_BIN" -Xms128m -Xmx128m -XX:+UseSerialGC -cp "$bench_jar" dev.headroom.benchmarks.ramp.SimulatedUpstream 0 "$slots" "$service_ms" \
  > "$work/upstream.out" 2> "$work/upstream.err" &
pids+=($!)
for _ in $(seq 1 100); do grep -q "listening on" "$work/upstream.out" 2>/dev/null && break; sleep 0.1; done
UP=$(sed -n 's/listening on //p' "$work/upstream.out" | head -1)
[[ -n "$UP" ]] || { echo "the simulated upstream did not start" >&2; cat "$work/upstream.err" >&2; exit 1; }

gateway_config() { # set-up
  local policies="" route_policies="" adaptive=""
  case "$1" in
    fixed)
      policies="  upstream-slots: {quota: $slots, window: 1s, unit: concurrent-requests, partition: global, leaseTimeout: 30s, why: Limits keep the service available for everyone.}"
      route_policies=", policies: [upstream-slots]";;
    adaptive)
      adaptive=", adaptive: {}";;
    adaptive-tight)
      adaptive=", adaptive: {tolerance: 1.2}";;
    adaptive-queue)
      policies="  upstream-rate: {quota: $rate, window: 1s, algorithm: token-bucket, partition: global, queue: {maxWait: $((service_ms / 2))ms, maxQueued: $slots}, why: Limits keep the service available for everyone.}"
      route_policies=", policies: [upstream-rate]"
      adaptive=", adaptive: {}";;
  esac
  cat > "$work/headroom.yaml" <<CONF
service: {name: Ramp}
admin: {enabled: false}
store: {type: memory}
timeouts: {response: 10s}
upstreams:
  origin: {url: "http://127.0.0.1:$UP", maxConnections: 4096}
policies:
$policies
routes:
  - {method: GET, path: /api, upstream: origin$route_policies$adaptive}
CONF
  [[ -n "$policies" ]] || sed -i '/^policies:$/d' "$work/headroom.yaml"
}

start_gateway() { # set-up
  gateway_config "$1"
  setsid "$JAVA_BIN" $JAVA_FLAGS -jar "$jar" serve --config "$work/headroom.yaml" --port 0 --threads "$threads" \
    > "$work/headroom.out" 2> "$out/$1-gateway.log" &
  HRPID=$!
  pids+=("$HRPID")
  for _ in $(seq 1 150); do grep -q "listening on" "$work/headroom.out" 2>/dev/null && break; sleep 0.1; done
  PORT=$(sed -n 's#listening on http://127.0.0.1:##p' "$work/headroom.out" | head -1)
  [[ -n "$PORT" ]] || { echo "headroom did not start" >&2; cat "$out/$1-gateway.log" >&2; exit 1; }
}
stop_gateway() { kill -TERM "$HRPID" 2>/dev/null || true; wait "$HRPID" 2>/dev/null || true; }

start_nginx() {
  PORT=$(free_port)
  mkdir -p "$work/nginx"
  cat > "$work/nginx.conf" <<CONF
worker_processes 1;
pid $work/nginx.pid;
error_log $work/nginx/error.log error;
daemon on;
events { worker_connections 16384; }
http {
  access_log off;
  client_body_temp_path $work/nginx/body;
  proxy_temp_path $work/nginx/proxy;
  fastcgi_temp_path $work/nginx/fastcgi;
  uwsgi_temp_path $work/nginx/uwsgi;
  scgi_temp_path $work/nginx/scgi;
  keepalive_requests 1000000;
  limit_req_zone \$server_port zone=rate:1m rate=${rate}r/s;
  limit_conn_zone \$server_port zone=slots:1m;
  upstream origin { server 127.0.0.1:$UP; keepalive 1024; }
  server {
    listen 127.0.0.1:$PORT;
    location /api {
      limit_req zone=rate burst=$slots nodelay;
      limit_conn slots $slots;
      limit_req_status 429;
      limit_conn_status 503;
      proxy_pass http://origin;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_read_timeout 10s;
    }
  }
}
CONF
  "$NGINX" -c "$work/nginx.conf" -p "$work/nginx" -e "$work/nginx/error.log"
  for _ in $(seq 1 50); do [[ -f "$work/nginx.pid" ]] && break; sleep 0.1; done
}
stop_nginx() { kill "$(cat "$work/nginx.pid")" 2>/dev/null || true; for _ in $(seq 1 50); do [[ -f "$work/nginx.pid" ]] || break; sleep 0.1; done; }

run_ramp() { # set-up case halve-after
  "$JAVA_BIN" -Xms256m -Xmx256m -XX:+UseParallelGC -cp "$bench_jar" dev.headroom.benchmarks.ramp.LoadRamp \
    "target=http://127.0.0.1:$PORT/api" "upstream=http://127.0.0.1:$UP" "csv=$out/$1-$2.csv" "label=$1 $2" \
    "slots=$slots" "serviceMs=$service_ms" "warm=$warm" "ramp=$ramp" "hold=$hold" "halveAfter=$3" "measure=$measure" \
    | tee -a "$out/summary.txt"
}

stamp="$(date -u +%FT%TZ) $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); upstream $slots slots of $service_ms ms ($rate req/s); headroom --threads $threads, $("$JAVA_BIN" -version 2>&1 | head -1) $JAVA_FLAGS; $("$NGINX" -v 2>&1)"
echo "# $stamp" | tee "$out/summary.txt"
for setup in "${setups[@]}"; do
  for case in healthy halved; do
    halve=0; [[ "$case" == halved ]] && halve="$halve_after"
    if [[ "$setup" == nginx ]]; then start_nginx; else start_gateway "$setup"; fi
    echo "  $setup, $case upstream (load $(cut -d' ' -f1 /proc/loadavg))" >&2
    run_ramp "$setup" "$case" "$halve"
    if [[ "$setup" == nginx ]]; then stop_nginx; else stop_gateway; fi
  done
done
echo "# finished $(date -u +%FT%TZ), load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$out/summary.txt"

# The table: one row per run, from the SUMMARY lines.
{
  echo "| set-up | upstream | goodput at 3x (req/s) | of capacity | admitted p50 (ms) | p50 / unloaded p50 | admitted p99 (ms) | p99 / unloaded p99 | refused / s | timeouts + failures / s | target met |"
  echo "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"
  grep '^SUMMARY' "$out/summary.txt" | awk '{
    for (i = 4; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
    met = (v["fraction"] >= 0.95 && v["p99_ratio"] <= 2.0) ? "yes" : "no"
    printf "| %s | %s | %.0f of %.0f | %.0f%% | %.0f | %.2f (of %.0f ms) | %.0f | %.2f (of %.0f ms) | %.0f | %.0f | %s |\n", $2, $3,
      v["goodput"], v["capacity"], 100 * v["fraction"], v["p50_ms"], v["p50_ratio"], v["unloaded_p50_ms"], v["p99_ms"],
      v["p99_ratio"], v["unloaded_p99_ms"], v["refused"], v["timeout"] + v["failed"], met }'
} > "$out/summary.md"
cat "$out/summary.md"
"$JAVA_BIN" -cp "$bench_jar" dev.headroom.benchmarks.ramp.RampPlot "$out" "$out/capacity-ramp.png" "${setups[@]}"
