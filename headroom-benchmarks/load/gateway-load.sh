#!/usr/bin/env bash
# Gateway load benchmark: one run measures, against the same upstream on this machine,
#   1. the upstream directly,
#   2. Headroom in front with limits that never trigger,
#   3. Headroom with limits that refuse half the traffic (every other request hits a spent quota),
#   4. nginx with limit_req in front (never triggering), the peer,
#   5. nginx with limit_req refusing half the traffic the same way,
# then the latency each proxy adds over the direct path, on one connection, the three interleaved.
# The upstream is an nginx server block returning a small JSON body. Everything binds to 127.0.0.1,
# uses its own temp directory, and stops by itself. Requires wrk and nginx (Debian: apt-get install
# -y wrk nginx), Java 17 and Maven.
#
# Usage: headroom-benchmarks/load/gateway-load.sh [seconds per run, default 10] [connections, default 32]
# Environment: HEADROOM_BENCH_ROUNDS (rounds of the five runs, default 3; the proxies swap order
# each round), HEADROOM_BENCH_JAVA (the java binary, default java on the PATH),
# HEADROOM_BENCH_JAVA_FLAGS (default -Xms256m -Xmx256m -XX:+UseParallelGC), HEADROOM_BENCH_WARMUP (s),
# HEADROOM_BENCH_WORKERS (Headroom's event loops and the peer's worker processes, default 1),
# HEADROOM_BENCH_LATENCY_SLICES (one-second slices per path of the interleaved latency, default 15),
# HEADROOM_BENCH_JAR (the gateway jar to measure, default this checkout's, built when missing: a
# baseline build's jar can be measured from the same script), HEADROOM_BENCH_OTLP=1 (the gateway
# traces every exchange and pushes its meters over OTLP to a collector that discards them: an
# extra server block of the upstream nginx answering 200 to everything), HEADROOM_BENCH_OTLP_SAMPLER
# (its telemetry.sampler, default 1: every exchange traced).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
secs="${1:-10}"
conns="${2:-32}"
work="$(mktemp -d /tmp/headroom-load.XXXXXX)"
pids=()
cleanup() {
  for p in "${pids[@]:-}"; do [[ -n "$p" ]] && kill "$p" 2>/dev/null || true; done
  for n in upstream peer; do [[ -f "$work/$n.pid" ]] && kill "$(cat "$work/$n.pid")" 2>/dev/null || true; done
  sleep 0.3
  rm -rf "$work"
}
trap cleanup EXIT

command -v wrk >/dev/null || { echo "wrk not found: apt-get install -y wrk" >&2; exit 1; }
command -v nginx >/dev/null || [[ -x /usr/sbin/nginx ]] || { echo "nginx not found: apt-get install -y nginx" >&2; exit 1; }
NGINX="$(command -v nginx || echo /usr/sbin/nginx)"

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }
UP=$(free_port); PEER=$(free_port); OTLP=$(free_port)

# Two nginx instances, each one master and one worker: the upstream, and the peer proxy. The peer
# must not share a worker with the upstream: one worker doing both the proxying and the serving
# would leave nginx one core for work Headroom and the upstream do on two processes.
workers="${HEADROOM_BENCH_WORKERS:-1}"
nginx_conf() { # name listen-block [worker processes]
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
$2
}
CONF
  "$NGINX" -c "$work/$1.conf" -p "$work/$1" -e "$work/$1/error.log"
}
nginx_conf upstream "  server {
    listen 127.0.0.1:$UP;
    location / { default_type application/json; return 200 '{\"message\":\"hello\"}'; }
  }
  server {
    listen 127.0.0.1:$OTLP;
    location / { return 200; }
  }"
nginx_conf peer "  upstream origin { server 127.0.0.1:$UP; keepalive 64; }
  limit_req_zone \$binary_remote_addr zone=open:10m rate=1000000r/s;
  limit_req_zone \$binary_remote_addr zone=spent:10m rate=1r/m;
  limit_req_status 429;
  # the same forwarding fields Headroom sends upstream (Host as received, RFC 7239 Forwarded,
  # X-Forwarded-*), so that both proxies hand the upstream the same work
  proxy_http_version 1.1;
  proxy_set_header Connection \"\";
  proxy_set_header Host \$http_host;
  proxy_set_header Forwarded \"for=\$remote_addr;proto=\$scheme;host=\\\"\$http_host\\\"\";
  proxy_set_header X-Forwarded-For \$proxy_add_x_forwarded_for;
  proxy_set_header X-Forwarded-Proto \$scheme;
  proxy_set_header X-Forwarded-Host \$http_host;
  server {
    listen 127.0.0.1:$PEER;
    location /ok { limit_req zone=open burst=1000000 nodelay; proxy_pass http://origin; }
    location /spent { limit_req zone=spent; proxy_pass http://origin; }
  }" "$workers"

jar="${HEADROOM_BENCH_JAR:-$root/headroom-cli/target/headroom-cli-0.1.0-SNAPSHOT-all.jar}"
if [[ ! -f "$jar" ]]; then (cd "$root" && mvn -B -q -pl headroom-cli -am package -DskipTests); fi
cat > "$work/headroom.yaml" <<CONF
service: {name: Load test}
admin: {enabled: false}
upstreams:
  origin: {url: "http://127.0.0.1:$UP", maxConnections: 64}
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
if [[ "${HEADROOM_BENCH_OTLP:-0}" == 1 ]]; then
  echo "telemetry: {sampler: ${HEADROOM_BENCH_OTLP_SAMPLER:-1}, otlp: {endpoint: \"http://127.0.0.1:$OTLP\"}}" \
    >> "$work/headroom.yaml"
fi
JAVA_FLAGS="${HEADROOM_BENCH_JAVA_FLAGS:--Xms256m -Xmx256m -XX:+UseParallelGC}"
JAVA_BIN="${HEADROOM_BENCH_JAVA:-java}"
# In its own session, as each nginx is (a daemon calls setsid): with the kernel's autogroup
# scheduling (sched_autogroup_enabled, on by default) a session is one scheduling group, and a
# gateway left in this script's session would share wrk's group, and so its CPU share, while the
# peer has a group of its own. Measured: 0.25 to 0.46 involuntary context switches per request
# for the gateway's event loop in wrk's group against 0.17 to 0.24 for the peer; equal once apart.
setsid "$JAVA_BIN" $JAVA_FLAGS -jar "$jar" serve --config "$work/headroom.yaml" --port 0 --threads "$workers" --no-watch \
  > "$work/headroom.out" 2> "$work/headroom.err" &
pids+=($!)
for _ in $(seq 1 100); do grep -q "listening on" "$work/headroom.out" 2>/dev/null && break; sleep 0.1; done
HR=$(sed -n 's#listening on http://127.0.0.1:##p' "$work/headroom.out")
[[ -n "$HR" ]] || { echo "headroom did not start" >&2; cat "$work/headroom.err" >&2; exit 1; }


cat > "$work/half.lua" <<'LUA'
local n = 0
request = function()
  n = n + 1
  if n % 2 == 0 then return wrk.format("GET", "/spent") end
  return wrk.format("GET", "/ok")
end
LUA

# warm-up of both proxies. The JVM's C2 compiler needs the request shapes of the measured runs for
# many seconds on a busy 2-core machine (JFR showed C2 still compiling the hot path after a 3 s
# warm-up, at 1.5 s of CPU per 5 s run). It also needs to have seen connections close: the end of
# a wrk run takes never-seen branches in compiled code, whose deoptimisation and recompilation
# otherwise land in the next measured run (PrintCompilation: ProxyHandler and Netty pipeline
# methods "made not entrant" as a run starts; C2 then used 15 us of CPU per request of that run).
# Hence a few short runs after the long one. nginx needs none of this.
warm="${HEADROOM_BENCH_WARMUP:-20}"
wrk -t2 -c"$conns" -d"${warm}s" "http://127.0.0.1:$HR/ok" >/dev/null
wrk -t2 -c"$conns" -d"$((warm / 2))s" -s "$work/half.lua" "http://127.0.0.1:$HR/" >/dev/null
for _ in 1 2 3; do
  wrk -t2 -c"$conns" -d3s "http://127.0.0.1:$HR/ok" >/dev/null
  wrk -t2 -c"$conns" -d2s -s "$work/half.lua" "http://127.0.0.1:$HR/" >/dev/null
done
wrk -t2 -c"$conns" -d3s "http://127.0.0.1:$PEER/ok" >/dev/null

# CPU time (user + system, clock ticks) of a process and its threads, or of an nginx master's workers
ticks() { local t=0 p; for p in "$@"; do t=$((t + $(awk '{print $14 + $15}' "/proc/$p/stat"))); done; echo "$t"; }
workers_of() { pgrep -P "$(cat "$work/$1.pid")" | tr '\n' ' '; }
HZ=$(getconf CLK_TCK)

run() { # name url script proxy-pids: one measured wrk run; prints requests|seconds|p50|p99|non2xx|proxy ticks|upstream ticks
  local name="$1" url="$2" script="${3:-}" proxy="${4:-}"
  local out up0 up1 px0=0 px1=0
  up0=$(ticks $(workers_of upstream)); [[ -n "$proxy" ]] && px0=$(ticks $proxy)
  if [[ -n "$script" && "$script" != - ]]; then out=$(wrk -t2 -c"$conns" -d"${secs}s" --latency -s "$script" "$url"); else out=$(wrk -t2 -c"$conns" -d"${secs}s" --latency "$url"); fi
  up1=$(ticks $(workers_of upstream)); [[ -n "$proxy" ]] && px1=$(ticks $proxy)
  local reqs took p50 p99 non2xx
  reqs=$(awk '/requests in/ {print $1}' <<<"$out")
  took=$(awk '/requests in/ {gsub(/s,?$/, "", $4); print $4}' <<<"$out")
  p50=$(to_ms "$(awk '$1=="50%" {print $2}' <<<"$out")")
  p99=$(to_ms "$(awk '$1=="99%" {print $2}' <<<"$out")")
  non2xx=$(awk '/Non-2xx/ {print $5}' <<<"$out")
  echo "$reqs|$took|$p50|$p99|${non2xx:-0}|$((px1 - px0))|$((up1 - up0))"
}
to_ms() { awk -v v="$1" 'BEGIN { if (v ~ /us$/) { sub(/us/,"",v); print v/1000 } else if (v ~ /ms$/) { sub(/ms/,"",v); print v } else if (v ~ /s$/) { sub(/s/,"",v); print v*1000 } else print v }'; }

# Rounds: every configuration runs once per round, and the two proxies swap places from one round
# to the next, so that a host getting faster or slower during the run (these machines drift by
# several percent within minutes) does not favour whichever proxy runs first. Throughput and CPU
# per request are over all rounds; latency percentiles are the median round's, and the worst.
rounds="${HEADROOM_BENCH_ROUNDS:-3}"
HRPID=${pids[0]}
PEERW=$(workers_of peer)
names=(upstream-direct headroom-open nginx-limit_req-open headroom-half-refused nginx-limit_req-half-refused)
declare -A REQS TOOK NON PXT UPT P50S P99S ROUNDRPS
measure() { # name url script proxy
  local r; r=$(run "$@")
  IFS='|' read -r n t p50 p99 non pxt upt <<<"$r"
  REQS[$1]=$(( ${REQS[$1]:-0} + n )); TOOK[$1]=$(awk -v a="${TOOK[$1]:-0}" -v b="$t" 'BEGIN { print a + b }')
  NON[$1]=$(( ${NON[$1]:-0} + non )); PXT[$1]=$(( ${PXT[$1]:-0} + pxt )); UPT[$1]=$(( ${UPT[$1]:-0} + upt ))
  P50S[$1]="${P50S[$1]:-} $p50"; P99S[$1]="${P99S[$1]:-} $p99"
  ROUNDRPS[$1]="${ROUNDRPS[$1]:-} $(awk -v n="$n" -v t="$t" 'BEGIN { printf "%.0f", n / t }')"
}
for round in $(seq 1 "$rounds"); do
  measure upstream-direct "http://127.0.0.1:$UP/ok" -
  if (( round % 2 == 1 )); then
    measure headroom-open "http://127.0.0.1:$HR/ok" - "$HRPID"
    measure nginx-limit_req-open "http://127.0.0.1:$PEER/ok" - "$PEERW"
    measure headroom-half-refused "http://127.0.0.1:$HR/" "$work/half.lua" "$HRPID"
    measure nginx-limit_req-half-refused "http://127.0.0.1:$PEER/" "$work/half.lua" "$PEERW"
  else
    measure nginx-limit_req-open "http://127.0.0.1:$PEER/ok" - "$PEERW"
    measure headroom-open "http://127.0.0.1:$HR/ok" - "$HRPID"
    measure nginx-limit_req-half-refused "http://127.0.0.1:$PEER/" "$work/half.lua" "$PEERW"
    measure headroom-half-refused "http://127.0.0.1:$HR/" "$work/half.lua" "$HRPID"
  fi
done

median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
worst() { tr ' ' '\n' | grep -v '^$' | sort -g | tail -1; }
echo "# $(date -u +%FT%TZ) $(nproc) cores; wrk -t2 -c$conns -d${secs}s x $rounds rounds; headroom --threads $workers, $("$JAVA_BIN" -version 2>&1 | head -1) $JAVA_FLAGS; peer nginx worker_processes $workers, upstream 1"
printf "| run | req/s | p50 ms | p99 ms (worst) | non-2xx | proxy CPU us/req | upstream CPU us/req |\n| --- | ---: | ---: | ---: | ---: | ---: | ---: |\n"
declare -A RPS P99
for name in "${names[@]}"; do
  RPS[$name]=$(awk -v n="${REQS[$name]}" -v t="${TOOK[$name]}" 'BEGIN { printf "%.0f", n / t }')
  P99[$name]=$(median <<<"${P99S[$name]}")
  cpx=$(awk -v t="${PXT[$name]}" -v n="${REQS[$name]}" -v hz="$HZ" 'BEGIN { printf "%.1f", t * 1e6 / hz / n }')
  cup=$(awk -v t="${UPT[$name]}" -v n="${REQS[$name]}" -v hz="$HZ" 'BEGIN { printf "%.1f", t * 1e6 / hz / n }')
  [[ "$name" == upstream-direct ]] && cpx="-"
  printf "| %s | %s | %s | %s (%s) | %s | %s | %s |\n" "$name" "${RPS[$name]}" "$(median <<<"${P50S[$name]}")" \
    "${P99[$name]}" "$(worst <<<"${P99S[$name]}")" "${NON[$name]}" "$cpx" "$cup"
done
echo
ratios() { paste -d' ' <(tr ' ' '\n' <<<"${ROUNDRPS[$1]}" | grep -v '^$') <(tr ' ' '\n' <<<"${ROUNDRPS[$2]}" | grep -v '^$') | awk '{ printf "%s%.2f", (NR > 1 ? " " : ""), $1 / $2 }'; }
awk -v a="${RPS[headroom-open]}" -v b="${RPS[nginx-limit_req-open]}" -v r="$(ratios headroom-open nginx-limit_req-open)" 'BEGIN { printf "throughput headroom/nginx (open): %.2f (rounds: %s)\n", a/b, r }'
awk -v a="${RPS[headroom-half-refused]}" -v b="${RPS[nginx-limit_req-half-refused]}" -v r="$(ratios headroom-half-refused nginx-limit_req-half-refused)" 'BEGIN { printf "throughput headroom/nginx (half refused): %.2f (rounds: %s)\n", a/b, r }'

# Latency added over direct, interleaved. The saturating runs above cannot say it: there each
# path's p99 is the wait in its own queue, and the direct run, the noisiest, read 1.6 to 2.1 ms
# slower at p99 than the runs through Headroom, a negative "added" latency. Here one connection
# sends one request at a time (nothing queues), in one-second slices of the direct path, Headroom
# and nginx in turn, so that each slice of a proxy has a direct slice beside it at the same moment
# of the machine; the figure is the median over the slices of (proxy - direct).
slices="${HEADROOM_BENCH_LATENCY_SLICES:-15}"
declare -A L50 L99
for _ in $(seq 1 "$slices"); do
  for target in "upstream-direct http://127.0.0.1:$UP/ok" "headroom http://127.0.0.1:$HR/ok" "nginx http://127.0.0.1:$PEER/ok"; do
    read -r name url <<<"$target"
    out=$(wrk -t1 -c1 -d1s --latency "$url")
    L50[$name]="${L50[$name]:-} $(to_ms "$(awk '$1=="50%" {print $2}' <<<"$out")")"
    L99[$name]="${L99[$name]:-} $(to_ms "$(awk '$1=="99%" {print $2}' <<<"$out")")"
  done
done
added() { # proxy percentile-array: the median over slices of (proxy - direct), in ms
  local -n by="$2"
  paste -d' ' <(tr ' ' '\n' <<<"${by[$1]}" | grep -v '^$') <(tr ' ' '\n' <<<"${by[upstream-direct]}" | grep -v '^$') \
    | awk '{ print $1 - $2 }' | median
}
for proxy in headroom nginx; do
  awk -v p="$proxy" -v a="$(added "$proxy" L50)" -v b="$(added "$proxy" L99)" -v n="$slices" \
    'BEGIN { printf "latency added by %s over direct (one connection, %d interleaved 1 s slices, median of differences): p50 %.3f ms, p99 %.3f ms\n", p, n, a, b }'
done
