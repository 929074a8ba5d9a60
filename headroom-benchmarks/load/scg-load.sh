#!/usr/bin/env bash
# Spring Cloud Gateway with Headroom against Spring Cloud Gateway with its own RedisRateLimiter:
# the same gateway, the same Redis, the same nginx upstream, the same load, in one run. Each
# configuration is one Spring Cloud Gateway process (ScgLoadApp, in headroom-spring-cloud-gateway's
# test classes): one route /** to the upstream, limited per API key (X-Api-Key, one of
# HEADROOM_BENCH_KEYS keys drawn at random per request) by a token bucket that never refuses at this
# rate, so every answer but 200 is the limiter's or the store's doing.
#   redis-default     RequestRateLimiter + RedisRateLimiter as documented (X-RateLimit-* headers on)
#   redis-best        the same with spring.cloud.gateway.server.webflux.redis-rate-limiter.include-headers: false,
#                     the least work per request its documented settings allow
#   headroom-limiter  RequestRateLimiter + HeadroomRateLimiter, Redis store (IETF RateLimit and
#                     RateLimit-Policy fields; Retry-After on a refusal), the store's connection
#                     where the auto-configuration puts it by default
#   headroom-limiter-own-loops, headroom-limiter-server-loops
#                     the same with headroom.cloud-gateway.store.redis-event-loops own (Lettuce's
#                     own event loop) and server (the gateway's Reactor Netty server loops)
#   headroom-filter   the Headroom gateway filter, Redis store (fields, Graceful Boundaries
#                     refusals, discovery)
#   none              the same route with no limiter: the ceiling (a limiter can be at most
#                     none / redis-best ahead of RedisRateLimiter in throughput)
# Rounds alternate the configurations (round 1 in the order given, round 2 reversed, ...), each
# round a fresh process with the same warm-up; the summary gives each configuration's median
# requests/s, p99 and CPU per request over the rounds, and Headroom's ratios to each
# RedisRateLimiter configuration. CPU per request is read from /proc (utime + stime) over the
# measured seconds only: the gateway process's, and the Redis server's (both limiters spend it).
# Every run is bounded in time (wrk -d) and the script stops what it started.
#
# The Spring line: HEADROOM_BENCH_LINE=boot3 (default: Spring Boot 3.5, Spring Cloud Gateway 4.3,
# the module's own build) or boot4 (Spring Boot 4.0, Spring Cloud Gateway 5.0: the same
# headroom-spring-cloud-gateway classes on headroom-spring-cloud-gateway-5-tests' class path).
#
# Usage: headroom-benchmarks/load/scg-load.sh [seconds per measurement, default 15] [rounds, default 7]
# Environment: HEADROOM_BENCH_CONNECTIONS (default 64), HEADROOM_BENCH_KEYS (default 1000),
# HEADROOM_BENCH_WARMUP (s, default 15), HEADROOM_BENCH_REDIS (default redis://127.0.0.1:6379),
# HEADROOM_BENCH_CONFIGS (default "redis-default redis-best headroom-limiter headroom-filter none"),
# HEADROOM_BENCH_JAVA, HEADROOM_BENCH_JAVA_FLAGS (default -Xms256m -Xmx256m -XX:+UseParallelGC).
# Requires wrk and nginx (Debian: apt-get install -y wrk nginx), Java 17, Maven, a running Redis.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
secs="${1:-15}"
rounds="${2:-7}"
line="${HEADROOM_BENCH_LINE:-boot3}"
case "$line" in boot3) testmodule=headroom-spring-cloud-gateway;; boot4) testmodule=headroom-spring-cloud-gateway-5-tests;; *) echo "HEADROOM_BENCH_LINE must be boot3 or boot4, got $line" >&2; exit 1;; esac
conns="${HEADROOM_BENCH_CONNECTIONS:-64}"
keys="${HEADROOM_BENCH_KEYS:-1000}"
warm="${HEADROOM_BENCH_WARMUP:-15}"
configs=(${HEADROOM_BENCH_CONFIGS:-redis-default redis-best headroom-limiter headroom-filter none})
redis="${HEADROOM_BENCH_REDIS:-redis://127.0.0.1:6379}"
case "$redis" in redis://127.*|redis://localhost*) ;; *) echo "HEADROOM_BENCH_REDIS must be on loopback, got $redis" >&2; exit 1;; esac
work="$(mktemp -d /tmp/headroom-scg-load.XXXXXX)"
pids=()
cleanup() {
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
UP=$(free_port)

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

# the application's class path: the module's classes and test classes and its test-scope dependencies
# (on Boot 3 without Boot 4's spring-boot-health, which the module's pom keeps off its Boot 3 tests too)
excludes=""; [[ "$line" == boot3 ]] && excludes="-DexcludeArtifactIds=spring-boot-health"
(cd "$root" && mvn -B -q -pl "$testmodule" -am test-compile dependency:build-classpath $excludes \
  -Dmdep.includeScope=test -Dmdep.outputFile="$work/cp.txt" -DskipTests -Dstyle.color=never > "$work/build.log" 2>&1) \
  || { cat "$work/build.log" >&2; exit 1; }
# copies, so that a build during the run cannot change what the next process loads
module="$root/headroom-spring-cloud-gateway"
cp -r "$module/target/classes" "$work/classes"
cp -r "$root/$testmodule/target/test-classes" "$work/test-classes"
mkdir -p "$work/lib"
deps=""
for entry in $(tr ':' ' ' < "$work/cp.txt"); do
  if [[ -d "$entry" ]]; then n="$work/lib/$(echo "$entry" | md5sum | cut -c1-8)"; cp -r "$entry" "$n"; deps+=":$n"; else deps+=":$entry"; fi
done
cp="$work/test-classes:$work/classes$deps"
JAVA_FLAGS="${HEADROOM_BENCH_JAVA_FLAGS:--Xms256m -Xmx256m -XX:+UseParallelGC}"
JAVA_BIN="${HEADROOM_BENCH_JAVA:-java}"
prefix="hr-bench-scg-$$-$(date +%s):"

# one API key of $keys per request; wrk counts answers by status per thread, done() adds them up
cat > "$work/load.lua" <<LUA
local threads = {}
math.randomseed(os.time())
function setup(thread) table.insert(threads, thread) end
function init(args) ok = 0; limited = 0; other = 0 end
function request()
  return wrk.format("GET", "/ok", { ["X-Api-Key"] = "key-" .. math.random(1, $keys) })
end
function response(status, headers, body)
  if status == 200 then ok = ok + 1 elseif status == 429 then limited = limited + 1 else other = other + 1 end
end
function done(summary, latency, requests)
  local o, l, x = 0, 0, 0
  for _, t in ipairs(threads) do o = o + t:get("ok"); l = l + t:get("limited"); x = x + t:get("other") end
  io.write(string.format("RESULT %d %.0f %.3f %.3f %d %d %d %d\n", summary.requests,
    summary.requests / (summary.duration / 1e6), latency:percentile(50) / 1000, latency:percentile(99) / 1000,
    o, l, x, summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout))
end
LUA

# One measurement: start the configuration's gateway, warm it up, measure, stop it.
measure() {
  local config="$1" port
  port=$(free_port)
  setsid "$JAVA_BIN" $JAVA_FLAGS -cp "$cp" dev.headroom.spring.cloud.gateway.load.ScgLoadApp \
    "$config" "$port" "http://127.0.0.1:$UP" "$redis" "$prefix" > "$work/app.out" 2> "$work/app.err" &
  local app=$!
  pids+=($app)
  local deadline=$((SECONDS + 300))  # a JVM starts slowly on a busy 2-core machine
  until curl -s -o /dev/null "http://127.0.0.1:$port/ok" -H 'X-Api-Key: probe'; do
    kill -0 "$app" 2>/dev/null || { echo "$config did not start" >&2; cat "$work/app.out" "$work/app.err" >&2; exit 1; }
    (( SECONDS < deadline )) || { echo "$config did not answer within 300 s" >&2; cat "$work/app.err" >&2; exit 1; }
    sleep 0.2
  done
  (( warm > 0 )) && wrk -t2 -c"$conns" -d"${warm}s" -s "$work/load.lua" "http://127.0.0.1:$port/ok" >/dev/null
  local probe
  probe=$(curl -s -D - -o /dev/null "http://127.0.0.1:$port/ok" -H 'X-Api-Key: probe' | tr -d '\r' \
    | { grep -i '^ratelimit\|^x-ratelimit' || true; } | tr '\n' ' ')
  echo "$config fields: ${probe:-none}" >> "$work/fields.txt"
  local out app0 redis0 app1 redis1
  app0=$(ticks "$app"); redis0=$(ticks "$redis_pid")
  out=$(wrk -t2 -c"$conns" -d"${secs}s" --latency -s "$work/load.lua" "http://127.0.0.1:$port/ok")
  app1=$(ticks "$app"); redis1=$(ticks "$redis_pid")
  kill "$app" 2>/dev/null || true
  wait "$app" 2>/dev/null || true
  read -r _ reqs rps p50 p99 ok limited other errors <<<"$(grep '^RESULT' <<<"$out")"
  local cpu rcpu
  cpu=$(awk -v t=$((app1 - app0)) -v hz="$hz" -v n="$reqs" 'BEGIN { printf "%.1f", (n > 0 ? t * 1e6 / hz / n : 0) }')
  rcpu=$(awk -v t=$((redis1 - redis0)) -v hz="$hz" -v n="$reqs" 'BEGIN { printf "%.1f", (n > 0 ? t * 1e6 / hz / n : 0) }')
  printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n" "$round" "$config" "$reqs" "$rps" "$p50" "$p99" \
    "$cpu" "$rcpu" "$ok" "$limited" "$other" "$errors"
  echo "$config $rps $p99 $cpu $rcpu" >> "$work/results.txt"
}

# CPU ticks (user + system) of a process, from /proc; the clock tick rate converts them
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
hz=$(getconf CLK_TCK)
redis_pid=$(redis-cli -u "$redis" info server | tr -d '\r' | awk -F: '$1 == "process_id" { print $2 }')
[[ -r "/proc/$redis_pid/stat" ]] || { echo "cannot read the Redis server's CPU (/proc/$redis_pid/stat): it must run on this machine" >&2; exit 1; }

echo "# scg-load ($line): $(date -u +%FT%TZ) $(uptime | sed 's/.*load/load/') (start); $(nproc) cores, a machine shared with other work; wrk -t2 -c$conns -d${secs}s, $keys keys, warm-up ${warm}s, $rounds rounds; $redis; $("$JAVA_BIN" -version 2>&1 | head -1) $JAVA_FLAGS"
printf "| round | configuration | requests | req/s | p50 ms | p99 ms | gateway CPU µs/req | Redis CPU µs/req | 200 | 429 | other | socket errors |\n"
printf "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n"
for round in $(seq 1 "$rounds"); do
  order=("${configs[@]}")
  if (( round % 2 == 0 )); then
    order=(); for (( i=${#configs[@]}-1; i>=0; i-- )); do order+=("${configs[$i]}"); done
  fi
  for c in "${order[@]}"; do measure "$c"; done
done
echo "# end: $(uptime | sed 's/.*load/load/')"
echo
echo "fields of one allowed answer, per configuration:"
sort -u "$work/fields.txt"
echo
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
printf "| configuration | median req/s | median p99 ms | median gateway CPU µs/req | median Redis CPU µs/req |\n| --- | ---: | ---: | ---: | ---: |\n"
for c in "${configs[@]}"; do
  rps=$(awk -v c="$c" '$1 == c { print $2 }' "$work/results.txt" | median)
  p99=$(awk -v c="$c" '$1 == c { print $3 }' "$work/results.txt" | median)
  cpu=$(awk -v c="$c" '$1 == c { print $4 }' "$work/results.txt" | median)
  rcpu=$(awk -v c="$c" '$1 == c { print $5 }' "$work/results.txt" | median)
  printf "| %s | %s | %s | %s | %s |\n" "$c" "$rps" "$p99" "$cpu" "$rcpu"
  echo "$c $rps $p99 $cpu $rcpu" >> "$work/medians.txt"
done
echo
for h in "${configs[@]}"; do
  [[ "$h" == headroom-* || "$h" == none ]] || continue
  for r in "${configs[@]}"; do
    [[ "$r" == redis-* ]] || continue
    awk -v h="$h" -v r="$r" '$1 == h { hr = $2; hp = $3; hc = $4; hx = $5 } $1 == r { rr = $2; rp = $3; rc = $4; rx = $5 }
      END { printf "%s / %s: throughput %.2fx; p99 %.2fx, gateway CPU per request %.2fx, Redis CPU per request %.2fx (lower is better)\n",
        h, r, hr / rr, hp / rp, hc / rc, hx / rx }' "$work/medians.txt"
  done
done
redis-cli -u "$redis" --scan --pattern "${prefix}*" 2>/dev/null | xargs -r redis-cli -u "$redis" del >/dev/null 2>&1 || true
redis-cli -u "$redis" --scan --pattern "request_rate_limiter.{key-*" 2>/dev/null | xargs -r redis-cli -u "$redis" del >/dev/null 2>&1 || true
