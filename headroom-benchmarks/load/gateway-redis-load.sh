#!/usr/bin/env bash
# Gateway on Redis at and beyond saturation: does a healthy Redis ever make a fail-closed gateway
# refuse? One run starts, all on 127.0.0.1:
#   - an nginx upstream answering a small JSON body,
#   - the gateway with store.type redis (the Redis at 127.0.0.1:6379, or HEADROOM_BENCH_REDIS),
#     store.failurePolicy fail-closed and the default decision deadline (100 ms), a policy that
#     never refuses, and its own key prefix,
# and drives it with wrk at each connection count given (default 200 and 400: the saturating load
# of issue 14 and twice it), counting the answers by status: 200, 429, 503 (the store could not
# decide) and anything else. It also counts the gateway's WARN lines and reads the store's own
# counters from the admin port's Prometheus page (headroom_store_*), which say how many decisions
# waited for Redis past the deadline and how many the gateway turned away before asking Redis,
# and FCALLs per request from Redis's commandstats (every client's: give the run a Redis of its own).
# After the tables: the gateway's CPU per request by thread, the machine's idle share during each run
# (cores left idle: the run was bound by latency, not CPU) and Redis's own CPU per request.
# Every run is bounded in time (wrk -d) and the script stops what it started.
#
# HEADROOM_BENCH_STORES="memory redis leasing" measures the same gateway and policy on several stores
# in one session, one gateway process after the other with the same warm-up (memory: store.type
# memory; redis: as above; leasing: redis with store.leasing true), for the ratio of the gateway's
# throughput on Redis to its own on memory (issue 17). Default: redis alone.
#
# Usage: headroom-benchmarks/load/gateway-redis-load.sh [seconds per run, default 10] [connections..., default 200 400]
# Environment: HEADROOM_BENCH_THREADS (gateway event loops, default 2: the issue's "2 cores"),
# HEADROOM_BENCH_JAR (the gateway jar, default the module's build; e.g. an older build to compare),
# HEADROOM_BENCH_JAVA, HEADROOM_BENCH_JAVA_FLAGS (default -Xms256m -Xmx256m -XX:+UseParallelGC),
# HEADROOM_BENCH_WARMUP (s, default 15), HEADROOM_BENCH_REDIS (default redis://127.0.0.1:6379),
# HEADROOM_BENCH_DEADLINE (store.decisionDeadline, default 100ms), HEADROOM_BENCH_POOL (the upstream's
# maxConnections, the idle connections each event loop keeps; default 512, above the connections per
# loop at 400: until session 12 it was 64, and at 200 and 400 connections the pool closed and reopened
# upstream connections all the time, which cost the gateway about 10 µs per request on either store), HEADROOM_BENCH_KEEP_LOG (a file to
# copy the gateway's standard error to), HEADROOM_BENCH_HOGS (busy-loop processes run beside the
# load, default 0: stands in for other builds on a shared machine).
# Requires wrk and nginx (Debian: apt-get install -y wrk nginx), Java 17, Maven, a running Redis.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
secs="${1:-10}"
shift || true
conns=("$@")
[[ ${#conns[@]} -gt 0 ]] || conns=(200 400)
redis="${HEADROOM_BENCH_REDIS:-redis://127.0.0.1:6379}"
case "$redis" in redis://127.*|redis://localhost*) ;; *) echo "HEADROOM_BENCH_REDIS must be on loopback, got $redis" >&2; exit 1;; esac
deadline="${HEADROOM_BENCH_DEADLINE:-100ms}"
pool="${HEADROOM_BENCH_POOL:-512}"
[[ "$pool" =~ ^[0-9]+$ && "$pool" -ge 1 ]] || { echo "HEADROOM_BENCH_POOL: expected a whole number of connections of at least 1, got $pool" >&2; exit 1; }
work="$(mktemp -d /tmp/headroom-redis-load.XXXXXX)"
pids=()
cleanup() {
  [[ -n "${HEADROOM_BENCH_KEEP_LOG:-}" && -f "$work/headroom.err" ]] && cp "$work/headroom.err" "$HEADROOM_BENCH_KEEP_LOG"
  for p in "${pids[@]:-}"; do [[ -n "$p" ]] && kill "$p" 2>/dev/null || true; done
  [[ -f "$work/upstream.pid" ]] && kill "$(cat "$work/upstream.pid")" 2>/dev/null || true
  sleep 0.3
  rm -rf "$work"
}
trap cleanup EXIT

command -v wrk >/dev/null || { echo "wrk not found: apt-get install -y wrk" >&2; exit 1; }
command -v nginx >/dev/null || [[ -x /usr/sbin/nginx ]] || { echo "nginx not found: apt-get install -y nginx" >&2; exit 1; }
NGINX="$(command -v nginx || echo /usr/sbin/nginx)"
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }
UP=$(free_port); ADMIN=$(free_port)

mkdir -p "$work/upstream"
cat > "$work/upstream.conf" <<CONF
worker_processes 1;
pid $work/upstream.pid;
error_log $work/upstream/error.log warn;
daemon on;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path $work/upstream/body;
  proxy_temp_path $work/upstream/proxy;
  fastcgi_temp_path $work/upstream/fastcgi;
  uwsgi_temp_path $work/upstream/uwsgi;
  scgi_temp_path $work/upstream/scgi;
  keepalive_requests 1000000;
  server {
    listen 127.0.0.1:$UP;
    location / { default_type application/json; return 200 '{"message":"hello"}'; }
  }
}
CONF
"$NGINX" -c "$work/upstream.conf" -p "$work/upstream" -e "$work/upstream/error.log"

jar="${HEADROOM_BENCH_JAR:-$root/headroom-cli/target/headroom-cli-0.1.0-SNAPSHOT-all.jar}"
if [[ ! -f "$jar" ]]; then (cd "$root" && mvn -B -q -pl headroom-cli -am package -DskipTests); fi
prefix="hr-bench-redis-load-$$-$(date +%s):"
stores=(${HEADROOM_BENCH_STORES:-redis})
hogs="${HEADROOM_BENCH_HOGS:-0}"
for _ in $(seq 1 "$hogs"); do
  timeout $(((secs * ${#conns[@]} + ${HEADROOM_BENCH_WARMUP:-15} + 30) * ${#stores[@]})) sh -c 'while :; do :; done' &
  pids+=($!)
done
store_line() { # the store section for memory, redis or leasing
  case "$1" in
    memory) echo "store: {type: memory}" ;;
    redis) echo "store: {type: redis, uri: \"$redis\", keyPrefix: \"$prefix\", failurePolicy: fail-closed, decisionDeadline: $deadline}" ;;
    leasing) echo "store: {type: redis, uri: \"$redis\", keyPrefix: \"$prefix\", failurePolicy: fail-closed, decisionDeadline: $deadline, leasing: true}" ;;
    *) echo "HEADROOM_BENCH_STORES: expected memory, redis or leasing, got $1" >&2; exit 1 ;;
  esac
}
# One store: start its gateway, warm it up, measure each connection count, stop it.
run_store() {
cat > "$work/headroom-$1.yaml" <<CONF
service: {name: Redis load test}
admin: {enabled: true, host: 127.0.0.1, port: $ADMIN}
$(store_line "$1")
upstreams:
  origin: {url: "http://127.0.0.1:$UP", maxConnections: $pool}
policies:
  open:
    quota: 1000000000
    window: 1s
    partition: client-ip
    why: Never refuses; every answer but 200 is the gateway's or the store's doing.
routes:
  - {method: GET, path: /ok, upstream: origin, policies: [open]}
CONF
JAVA_FLAGS="${HEADROOM_BENCH_JAVA_FLAGS:--Xms256m -Xmx256m -XX:+UseParallelGC}"
JAVA_BIN="${HEADROOM_BENCH_JAVA:-java}"
threads="${HEADROOM_BENCH_THREADS:-2}"
# its own session (scheduling group), as gateway-load.sh explains
setsid "$JAVA_BIN" $JAVA_FLAGS -jar "$jar" serve --config "$work/headroom-$1.yaml" --port 0 --threads "$threads" --no-watch \
  > "$work/headroom.out" 2> "$work/headroom.err" &
gateway=$!
pids+=($gateway)
for _ in $(seq 1 100); do grep -q "listening on" "$work/headroom.out" 2>/dev/null && break; sleep 0.1; done
HR=$(sed -n 's#listening on http://127.0.0.1:##p' "$work/headroom.out" | head -1)
[[ -n "$HR" ]] || { echo "headroom did not start" >&2; cat "$work/headroom.err" >&2; exit 1; }

# wrk counts answers by status per thread; done() adds them up
cat > "$work/status.lua" <<'LUA'
local threads = {}
function setup(thread) table.insert(threads, thread) end
function init(args) ok = 0; limited = 0; unavailable = 0; other = 0 end
function response(status, headers, body)
  if status == 200 then ok = ok + 1
  elseif status == 429 then limited = limited + 1
  elseif status == 503 then unavailable = unavailable + 1
  else other = other + 1 end
end
function done(summary, latency, requests)
  local o, l, u, x = 0, 0, 0, 0
  for _, t in ipairs(threads) do
    o = o + t:get("ok"); l = l + t:get("limited"); u = u + t:get("unavailable"); x = x + t:get("other")
  end
  io.write(string.format("STATUS %d %d %d %d %d\n", o, l, u, x, summary.errors.connect + summary.errors.read
    + summary.errors.write + summary.errors.timeout))
end
LUA

metric() { # the sum of a Prometheus counter's samples on the admin port, 0 when absent
  curl -s "http://127.0.0.1:$ADMIN/metrics" | awk -v m="$1" '$1 == m || index($1, m "{") == 1 { s += $NF } END { printf "%.0f", s }'
}
warns() { grep -c ' WARN ' "$work/headroom.err" || true; }
# FCALLs Redis has run so far (every client's: point HEADROOM_BENCH_REDIS at a Redis of the run's own)
fcalls() { redis-cli -u "$redis" info commandstats 2>/dev/null | sed -n 's/^cmdstat_fcall:calls=\([0-9]*\),.*/\1/p' | grep . || echo 0; }

# per-thread CPU of the gateway (clock ticks by thread name): where its time goes
thread_ticks() { local t; for t in /proc/"$1"/task/*; do printf "%s\t%s\n" "$(tr ' ' '_' < "$t/comm")" "$(awk '{print $14 + $15}' "$t/stat")"; done | awk -F'\t' '{ s[$1] += $2 } END { for (k in s) print k "\t" s[k] }' | sort; }
HZ=$(getconf CLK_TCK)
# the machine's idle and total clock ticks (all cores): a run whose cores sat idle was bound by
# latency (too few requests in flight to keep them busy), not by CPU
cpu_ticks() { awk '/^cpu / { print $5 + $6, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9 }' /proc/stat; }
# Redis's own CPU seconds so far (user + system), of every client's commands
redis_cpu() { redis-cli -u "$redis" info cpu 2>/dev/null | awk -F: '/^used_cpu_(sys|user):/ { s += $2 } END { printf "%.6f", s }'; }
warm="${HEADROOM_BENCH_WARMUP:-15}"
# The warm-up in two halves, with what the measurement asks of the gateway besides requests in
# between (the admin page's Prometheus text) and the first half's connections closed: the first
# time of each compiles its code and changes the type profiles of the event loops' hot methods,
# which the JIT then recompiles. Left to the measured run, that cost 5 to 8 us of C2 compiler time
# per request there, and the hot methods ran deoptimised meanwhile.
if (( warm > 0 )); then
  half=$(( (warm + 1) / 2 ))
  wrk -t2 -c64 -d"${half}s" "http://127.0.0.1:$HR/ok" >/dev/null
  for _ in 1 2 3; do metric headroom_store_deadline_passed_total >/dev/null; done
  wrk -t2 -c64 -d"$(( warm - half > 0 ? warm - half : 1 ))s" "http://127.0.0.1:$HR/ok" >/dev/null
fi
echo "# store $1: $(date -u +%FT%TZ) $(uptime | sed 's/.*load/load/'); $(nproc) cores, $hogs busy loops beside; gateway --threads $threads, fail-closed, decisionDeadline $deadline, $redis; wrk -t2 -d${secs}s; $("$JAVA_BIN" -version 2>&1 | head -1) $JAVA_FLAGS"
printf "| connections | requests | req/s | p50 ms | p99 ms | 200 | 429 | 503 | other | socket errors | WARN lines | past deadline | turned away | FCALL per request |\n"
printf "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n"
for c in "${conns[@]}"; do
  w0=$(warns); late0=$(metric headroom_store_deadline_passed_total); shed0=$(metric headroom_store_shed_total); f0=$(fcalls)
  thread_ticks "$gateway" > "$work/threads0"
  read -r idle0 total0 <<<"$(cpu_ticks)"; rc0=$(redis_cpu)
  out=$(wrk -t2 -c"$c" -d"${secs}s" --latency -s "$work/status.lua" "http://127.0.0.1:$HR/ok")
  thread_ticks "$gateway" > "$work/threads1"
  read -r idle1 total1 <<<"$(cpu_ticks)"; rc1=$(redis_cpu)
  w1=$(warns); late1=$(metric headroom_store_deadline_passed_total); shed1=$(metric headroom_store_shed_total); f1=$(fcalls)
  read -r _ ok limited unavailable other errors <<<"$(grep '^STATUS' <<<"$out")"
  reqs=$(awk '/requests in/ {print $1}' <<<"$out")
  rps=$(awk '/Requests\/sec/ {printf "%.0f", $2}' <<<"$out")
  to_ms() { awk -v v="$1" 'BEGIN { if (v ~ /us$/) { sub(/us/,"",v); print v/1000 } else if (v ~ /ms$/) { sub(/ms/,"",v); print v } else if (v ~ /s$/) { sub(/s/,"",v); print v*1000 } else print v }'; }
  p50=$(to_ms "$(awk '$1=="50%" {print $2}' <<<"$out")"); p99=$(to_ms "$(awk '$1=="99%" {print $2}' <<<"$out")")
  printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n" "$c" "$reqs" "$rps" "$p50" "$p99" \
    "$ok" "$limited" "$unavailable" "$other" "$errors" "$((w1 - w0))" "$((late1 - late0))" "$((shed1 - shed0))" \
    "$(awk -v f="$((f1 - f0))" -v n="$reqs" 'BEGIN { printf "%.3f", (n > 0 ? f / n : 0) }')"
  thread_cpu+="store $1, $c connections, gateway CPU us/request by thread:$(join -t $'\t' "$work/threads0" "$work/threads1" \
    | awk -F'\t' -v n="$reqs" -v hz="$HZ" '{ d = $3 - $2; if (d > 0) printf " %s %.1f;", $1, d * 1e6 / hz / n }')"
  thread_cpu+="$(awk -v i="$((idle1 - idle0))" -v t="$((total1 - total0))" -v a="$rc0" -v b="$rc1" -v n="$reqs" \
    'BEGIN { printf " machine idle %.1f%%; Redis CPU %.2f us/request", (t > 0 ? 100 * i / t : 0), (n > 0 ? (b - a) * 1e6 / n : 0) }')"$'\n'
done
  kill "$gateway" 2>/dev/null || true
  wait "$gateway" 2>/dev/null || true
  echo
}
for st in "${stores[@]}"; do
  run_store "$st"
done
echo
printf "%s" "${thread_cpu:-}"
echo "gateway WARN lines (first 5):"
grep ' WARN ' "$work/headroom.err" | head -5 || true
redis-cli -u "$redis" --scan --pattern "${prefix}*" 2>/dev/null | xargs -r redis-cli -u "$redis" del >/dev/null 2>&1 || true
