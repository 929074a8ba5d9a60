#!/usr/bin/env bash
# The gateway over a long run, sampled every ten seconds. Two modes, one harness:
#
#   soak (default): thirty minutes at about 70% of the gateway's saturating rate, on Redis, with
#     - partition-key churn: new keys at up to 10,000 a second (HEADROOM_SOAK_NEW_KEYS) against
#       store.maxKeys, beside a hot set of 100 keys that the quota refuses now and then,
#     - a configuration reload every ten seconds (the file rewritten, the gateway's watcher reloads),
#     - the upstream flapping: stopped for five seconds at every minute,
#     - Redis restarted twice (at a third and two thirds of the run; the failure policy is fallback).
#   overload: five minutes per set-up at twice the saturating load: twice the connections at which
#     the gateway's throughput stops growing (as gateway-redis-load.sh counts load), no churn or
#     faults, answers counted by status. Set-ups (HEADROOM_SOAK_OVERLOAD, default all three):
#     memory and redis, where the per-key quota refuses most requests (429), and adaptive (memory
#     store), where no quota refuses and the route's adaptive concurrency limit (routes[].adaptive,
#     scaleQuotas off) is all that sheds the excess, with 503 and Retry-After.
#
# Every ten seconds: the gateway's RSS, heap after its last GC (from its GC log), open file
# descriptors, threads, and the p99 and rate of the last ten seconds' requests (each ten seconds is
# one wrk run, whose Lua script paces it and reports). The samples go to a CSV and are drawn by
# dev.headroom.benchmarks.soak.SoakPlot (XChart) as a PNG, which also says whether each quantity
# stayed flat (median of the last fifth at most 1.25x the second fifth's) and exits 3 when one grew.
#
# Everything binds to 127.0.0.1 and uses its own temp directory, nginx upstream and redis-server
# (never the shared 6379); every run is bounded in time and the script stops what it started.
#
# Each gateway is stopped as an operator would: SIGTERM, then a bounded wait for it to exit
# (shutdown.drainTimeout plus 30 s). The report says whether and when it exited and with which
# status; a gateway still running at the bound has its threads dumped (jcmd Thread.print) to the
# output folder, is killed, and fails the run (exit 4), as does a stop with a status other than 0.
# The gateway's standard error (its log) is kept in the output folder: <mode>-<store>-gateway.log.
#
# Usage: headroom-benchmarks/load/gateway-soak.sh [soak|overload] [output directory, default .]
# Environment: HEADROOM_SOAK_MINUTES (soak: default 30; overload: minutes per set-up, default 5),
# HEADROOM_SOAK_OVERLOAD (overload: the set-ups, default "memory redis adaptive"),
# HEADROOM_SOAK_LOAD (soak: share of the saturating rate, default 0.7), HEADROOM_SOAK_NEW_KEYS
# (soak: new partition keys a second, default 10000), HEADROOM_SOAK_MAX_KEYS (store.maxKeys,
# default 200000), HEADROOM_BENCH_JAR, HEADROOM_BENCH_JAVA, HEADROOM_BENCH_JAVA_FLAGS (default
# -Xms256m -Xmx256m -XX:+UseParallelGC), HEADROOM_BENCH_THREADS (event loops, default 2).
# Requires wrk, nginx and redis-server (Debian: apt-get install -y wrk nginx redis-server), Java 17, Maven.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
mode="${1:-soak}"
out="$(cd "${2:-.}" && pwd)"
case "$mode" in soak|overload) ;; *) echo "mode: '$mode' is not a mode; expected soak or overload" >&2; exit 2;; esac
work="$(mktemp -d /tmp/headroom-soak.XXXXXX)"
pids=()
cleanup() {
  for p in "${pids[@]:-}"; do [[ -n "$p" ]] && kill "$p" 2>/dev/null || true; done
  [[ -f "$work/upstream.pid" ]] && kill "$(cat "$work/upstream.pid")" 2>/dev/null || true
  [[ -n "${RP:-}" ]] && redis-cli -p "$RP" shutdown nosave >/dev/null 2>&1 || true
  sleep 0.3
  rm -rf "$work"
}
trap cleanup EXIT
for tool in wrk redis-server redis-cli jcmd; do command -v "$tool" >/dev/null || { echo "$tool not found" >&2; exit 1; }; done
NGINX="$(command -v nginx || echo /usr/sbin/nginx)"
[[ -x "$NGINX" ]] || { echo "nginx not found: apt-get install -y nginx" >&2; exit 1; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }
UP=$(free_port); RP=$(free_port)

mkdir -p "$work/upstream"
cat > "$work/upstream.conf" <<CONF
worker_processes 1;
pid $work/upstream.pid;
error_log $work/upstream/error.log warn;
daemon on;
events { worker_connections 8192; }
http {
  access_log off;
  client_body_temp_path $work/upstream/body;
  proxy_temp_path $work/upstream/proxy;
  fastcgi_temp_path $work/upstream/fastcgi;
  uwsgi_temp_path $work/upstream/uwsgi;
  scgi_temp_path $work/upstream/scgi;
  keepalive_requests 1000000;
  server { listen 127.0.0.1:$UP; location / { default_type application/json; return 200 '{"message":"hello"}'; } }
}
CONF
upstream_start() { "$NGINX" -c "$work/upstream.conf" -p "$work/upstream" -e "$work/upstream/error.log"; }
upstream_stop() { kill "$(cat "$work/upstream.pid")" 2>/dev/null || true; for _ in $(seq 1 50); do [[ -f "$work/upstream.pid" ]] || break; sleep 0.1; done; }
redis_start() { redis-server --port "$RP" --bind 127.0.0.1 --save "" --appendonly no --daemonize yes \
  --dir "$work" --logfile "$work/redis.log" --pidfile "$work/redis.pid" >/dev/null
  for _ in $(seq 1 50); do redis-cli -p "$RP" ping >/dev/null 2>&1 && return; sleep 0.1; done; }
redis_stop() { redis-cli -p "$RP" shutdown nosave >/dev/null 2>&1 || true; }
upstream_start
redis_start

jar="${HEADROOM_BENCH_JAR:-$root/headroom-cli/target/headroom-cli-0.1.0-SNAPSHOT-all.jar}"
if [[ ! -f "$jar" ]]; then (cd "$root" && mvn -B -q -pl headroom-cli -am package -DskipTests); fi
# a copy: a build during the run rewrites target/ under the running gateway, whose next class to
# load (the drain's, at SIGTERM) then cannot be read (the gateway README, "Reloading, stopping,
# and the file as untrusted input")
cp "$jar" "$work/headroom.jar"
jar="$work/headroom.jar"
plot_jar="$root/headroom-benchmarks/target/benchmarks.jar"
if [[ ! -f "$plot_jar" ]]; then (cd "$root" && mvn -B -q -pl headroom-benchmarks -am package -DskipTests); fi
JAVA_FLAGS="${HEADROOM_BENCH_JAVA_FLAGS:--Xms256m -Xmx256m -XX:+UseParallelGC}"
JAVA_BIN="${HEADROOM_BENCH_JAVA:-java}"
threads="${HEADROOM_BENCH_THREADS:-2}"
max_keys="${HEADROOM_SOAK_MAX_KEYS:-200000}"
drain_timeout=30 # shutdown.drainTimeout, seconds: the gateway has this plus 30 s to exit after SIGTERM

config() { # set-up quota: writes the configuration atomically (the watcher never reads half a file)
  local store="$1" quota="$2" adaptive=""
  local store_block="store: {type: memory, maxKeys: $max_keys}"
  [[ "$store" == redis ]] && store_block="store: {type: redis, uri: \"redis://127.0.0.1:$RP\", keyPrefix: \"soak:\", failurePolicy: fallback, maxKeys: $max_keys}"
  # adaptive: a quota no key reaches, and the route's learnt concurrency limit the only refusal
  [[ "$store" == adaptive ]] && { quota=100000000; adaptive=", adaptive: {scaleQuotas: false}"; }
  cat > "$work/headroom.yaml.tmp" <<CONF
service: {name: Soak}
admin: {enabled: false}
$store_block
shutdown: {drainTimeout: ${drain_timeout}s}
upstreams:
  origin: {url: "http://127.0.0.1:$UP", maxConnections: 1024}
policies:
  per-key:
    quota: $quota
    window: 10s
    partition: header:X-Key
    why: One quota per key; the hot keys spend theirs, the new ones never do.
routes:
  - {method: GET, path: /api, upstream: origin, policies: [per-key]$adaptive}
CONF
  mv "$work/headroom.yaml.tmp" "$work/headroom.yaml"
}

start_gateway() { # store
  config "$1" 200
  rm -f "$work/gc.log"
  HRNAME="$mode-$1"
  HRERR="$out/$HRNAME-gateway.log" # the gateway's standard error: kept with the results
  setsid "$JAVA_BIN" $JAVA_FLAGS "-Xlog:gc:file=$work/gc.log" -jar "$jar" serve --config "$work/headroom.yaml" \
    --port 0 --threads "$threads" > "$work/headroom.out" 2> "$HRERR" &
  HRPID=$!
  pids+=("$HRPID")
  for _ in $(seq 1 150); do grep -q "listening on" "$work/headroom.out" 2>/dev/null && break; sleep 0.1; done
  HR=$(sed -n 's#listening on http://127.0.0.1:##p' "$work/headroom.out" | head -1)
  [[ -n "$HR" ]] || { echo "headroom did not start" >&2; cat "$HRERR" >&2; exit 1; }
}
# SIGTERM, then up to drainTimeout + 30 s for the gateway to exit. Says whether and when it did, and
# its status, on standard output and in the report file given; past the bound, dumps its threads,
# kills it and fails the run.
stop_gateway() { # report-file
  local report="$1" bound=$((drain_timeout + 30)) t0 elapsed status=0 kept=() p
  t0=$(date +%s%N)
  kill -TERM "$HRPID" 2>/dev/null || true
  while kill -0 "$HRPID" 2>/dev/null && (( ($(date +%s%N) - t0) / 1000000000 < bound )); do sleep 0.1; done
  elapsed=$(awk -v n="$(( $(date +%s%N) - t0 ))" 'BEGIN { printf "%.1f", n / 1e9 }')
  if kill -0 "$HRPID" 2>/dev/null; then
    jcmd "$HRPID" Thread.print > "$out/$HRNAME-gateway-threads.txt" 2>&1 || true
    kill -KILL "$HRPID" 2>/dev/null || true
    wait "$HRPID" 2>/dev/null || true
    echo "FAIL: the gateway (pid $HRPID) was still running $elapsed s after SIGTERM (bound: shutdown.drainTimeout" \
      "${drain_timeout}s + 30 s); killed. Its threads: $out/$HRNAME-gateway-threads.txt; its log: $HRERR" | tee -a "$report" >&2
    exit 4
  fi
  wait "$HRPID" || status=$?
  for p in "${pids[@]}"; do [[ "$p" == "$HRPID" ]] || kept+=("$p"); done
  pids=("${kept[@]:-}") # the clean-up kills the rest, never a number the exited gateway's pid may now belong to
  if (( status != 0 )); then
    echo "FAIL: the gateway exited with status $status $elapsed s after SIGTERM (expected 0); its log: $HRERR" | tee -a "$report" >&2
    exit 4
  fi
  echo "gateway stopped: exited with status 0 $elapsed s after SIGTERM (bound ${bound} s); its log: $HRERR" | tee -a "$report"
}

# The Lua script: one wrk run of ten seconds. Arguments: the delay in ms before each request of a
# connection (0: as fast as it can), the share of requests with a new key, and this run's number
# (new keys are unique across runs). Reports its count, p99 and the answers by status.
cat > "$work/soak.lua" <<'LUA'
local delay_ms, new_share, run = 0, 0, 0
local counter, threads = 0, {}
statuses = {} -- global: done() reads each thread's with thread:get
function setup(thread)
  thread:set("tid", #threads + 1)
  table.insert(threads, thread)
end
function init(args)
  delay_ms = tonumber(args[1]) or 0
  new_share = tonumber(args[2]) or 0
  run = args[3] or "0"
  every = new_share > 0 and math.floor(1 / new_share + 0.5) or 0
end
function delay() return delay_ms end
function request()
  counter = counter + 1
  local key
  if every > 0 and counter % every == 0 then
    key = "n" .. run .. "-" .. tid .. "-" .. counter
  else
    key = "hot" .. (counter % 100)
  end
  return wrk.format("GET", "/api", { ["X-Key"] = key })
end
function response(status)
  statuses[status] = (statuses[status] or 0) + 1
end
function done(summary, latency, requests)
  local s = {}
  for _, t in ipairs(threads) do
    local st = t:get("statuses")
    for k, v in pairs(st) do s[k] = (s[k] or 0) + v end
  end
  local errors = summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout
  io.write(string.format("RESULT %d %d %.3f %.3f %d %d %d %d %d\n", summary.requests, summary.duration,
    latency:percentile(50) / 1000, latency:percentile(99) / 1000,
    s[200] or 0, s[429] or 0, s[503] or 0, s[502] or 0, errors))
end
LUA

sample_header="seconds,rps,p50_ms,p99_ms,s200,s429,s503,s502,socket_errors,rss_mb,heap_after_gc_mb,fds,threads,event"
sample() { # seconds wrk-output event
  local r rss heap fds thr
  r=$(grep '^RESULT' <<<"$2" | head -1)
  read -r _ n dur p50 p99 c200 c429 c503 c502 errs <<<"$r"
  rss=$(awk '/VmRSS/ {printf "%.1f", $2 / 1024}' "/proc/$HRPID/status")
  thr=$(awk '/^Threads/ {print $2}' "/proc/$HRPID/status")
  fds=$(ls "/proc/$HRPID/fd" | wc -l)
  # The live heap: a full collection asked for (jcmd GC.run, a few ms at this heap's size, once per
  # ten seconds) and the heap it left. A young collection's "after" also counts the old
  # generation's garbage, which grows until the next full collection and would read as a leak.
  jcmd "$HRPID" GC.run >/dev/null 2>&1 || true
  heap=$(grep 'Pause Full' "$work/gc.log" 2>/dev/null | grep -o '[0-9]*M->[0-9]*M' | tail -1 | sed 's/.*->\([0-9]*\)M/\1/')
  printf "%s,%.0f,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s\n" "$1" "$(awk -v n="$n" -v d="$dur" 'BEGIN { print n * 1e6 / d }')" \
    "$p50" "$p99" "$c200" "$c429" "$c503" "$c502" "$errs" "$rss" "${heap:-}" "$fds" "$thr" "$3"
}
tick() { wrk -t2 -c"$1" -d10s -s "$work/soak.lua" "http://127.0.0.1:$HR/" -- "$2" "$3" "$4" 2>&1; }

# The saturating connection count: the fewest connections (doubling from 16) beyond which doubling
# gains less than 5% of throughput, and the rate there.
saturate() {
  local c=16 best=0 rps res
  for _ in 1 2 3; do tick 32 0 0 warm >/dev/null; done
  while (( c <= 1024 )); do
    res=$(tick "$c" 0 0 "sat$c")
    rps=$(grep '^RESULT' <<<"$res" | awk '{ printf "%.0f", $2 * 1e6 / $3 }')
    echo "  saturation probe: $c connections, $rps req/s" >&2
    if (( best > 0 && rps * 100 < best * 105 )); then break; fi
    best=$rps; SAT_C=$c; SAT_RPS=$rps
    c=$((c * 2))
  done
}

mkdir -p "$out"
stamp="$(date -u +%FT%TZ) $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); headroom --threads $threads, $("$JAVA_BIN" -version 2>&1 | head -1) $JAVA_FLAGS"
if [[ "$mode" == overload ]]; then
  minutes="${HEADROOM_SOAK_MINUTES:-5}"
  for store in ${HEADROOM_SOAK_OVERLOAD:-memory redis adaptive}; do
    case "$store" in memory|redis|adaptive) ;; *) echo "HEADROOM_SOAK_OVERLOAD: '$store' is not a set-up; expected memory, redis or adaptive" >&2; exit 2;; esac
    start_gateway "$store"
    saturate
    conns=$((SAT_C * 2))
    csv="$out/overload-$store.csv"
    echo "$sample_header" > "$csv"
    echo "# $stamp; $store store: saturating at $SAT_C connections ($SAT_RPS req/s); overload: $conns connections for $minutes min" | tee "$out/overload-$store.txt"
    for i in $(seq 1 $((minutes * 6))); do
      res=$(tick "$conns" 0 0.001 "o$i")
      sample $((i * 10)) "$res" "" >> "$csv"
    done
    stop_gateway "$out/overload-$store.txt"
    awk -F, 'NR > 1 { n++; s200 += $5; s429 += $6; s503 += $7; s502 += $8; e += $9; p[n] = $4; rss = ($10 > rss ? $10 : rss); fd = ($12 > fd ? $12 : fd) }
      END { asort(p); printf "answers: 200 %d, 429 %d, 503 %d, 502 %d, socket errors %d; p99 per 10 s, median %.2f ms, worst %.2f ms; peak RSS %.0f MiB, peak fds %d\n", s200, s429, s503, s502, e, p[int((n + 1) / 2)], p[n], rss, fd }' \
      "$csv" | tee -a "$out/overload-$store.txt"
    java -cp "$plot_jar" dev.headroom.benchmarks.soak.SoakPlot "$csv" "$out/overload-$store.png" "overload, $store store" \
      rss_mb heap_after_gc_mb fds threads p99_ms | tee -a "$out/overload-$store.txt" || true
  done
  exit 0
fi

minutes="${HEADROOM_SOAK_MINUTES:-30}"
share="${HEADROOM_SOAK_LOAD:-0.7}"
new_keys="${HEADROOM_SOAK_NEW_KEYS:-10000}"
start_gateway redis
saturate
target=$(awk -v r="$SAT_RPS" -v s="$share" 'BEGIN { printf "%.0f", r * s }')
# Paced connections: each waits 10 ms before each request, so about 100 requests a second per
# connection less the time each takes; a few more connections than the arithmetic asks for make up for it.
conns=$(awk -v t="$target" 'BEGIN { printf "%d", t / 100 * 1.1 + 1 }')
new_share=$(awk -v k="$new_keys" -v t="$target" 'BEGIN { s = k / t; printf "%.4f", (s > 1 ? 1 : s) }')
csv="$out/soak.csv"
echo "$sample_header" > "$csv"
echo "# $stamp; redis store, fallback; saturating at $SAT_C connections ($SAT_RPS req/s); soak: $minutes min at $share of it ($target req/s asked: $conns connections pacing 10 ms), new keys $new_share of requests, store.maxKeys $max_keys" | tee "$out/soak.txt"
total=$((minutes * 6))
for i in $(seq 1 "$total"); do
  event=""
  config redis $((200 + i % 2)) # a reload every ten seconds: the quota moves by one
  if (( i % 6 == 0 )); then upstream_stop; event="upstream stopped"; (sleep 5; upstream_start) & fi
  if (( i == total / 3 || i == 2 * total / 3 )); then redis_stop; event="$event redis restarted"; (sleep 3; redis_start) & fi
  res=$(tick "$conns" 10 "$new_share" "$i")
  sample $((i * 10)) "$res" "$event" >> "$csv"
done
wait_restarts() { # the upstream or Redis restarted in the background by the last tick: back before the stop
  for _ in $(seq 1 100); do
    [[ -f "$work/upstream.pid" ]] && redis-cli -p "$RP" ping >/dev/null 2>&1 && return
    sleep 0.1
  done
}
wait_restarts
stop_gateway "$out/soak.txt"
reloads=$(grep -c "reloaded" "$HRERR" 2>/dev/null || true)
awk -F, 'NR > 1 { n++; r += $2; s200 += $5; s429 += $6; s503 += $7; s502 += $8; e += $9 }
  END { printf "answers: 200 %d, 429 %d, 503 %d, 502 %d, socket errors %d; mean rate %.0f req/s\n", s200, s429, s503, s502, e, r / n }' \
  "$csv" | tee -a "$out/soak.txt"
echo "reloads logged: $reloads; gateway WARN/ERROR lines: $(grep -c -E 'WARN|ERROR' "$HRERR" || true), by message:" | tee -a "$out/soak.txt"
grep -E 'WARN|ERROR' "$HRERR" | sed -E 's/^[^ ]+ +[^ ]+ +//; s/[0-9]+/N/g' | cut -c1-160 | sort | uniq -c | sort -rn | head -8 | tee -a "$out/soak.txt" || true
java -cp "$plot_jar" dev.headroom.benchmarks.soak.SoakPlot "$csv" "$out/soak.png" "soak" | tee -a "$out/soak.txt"
