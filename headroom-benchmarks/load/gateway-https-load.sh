#!/usr/bin/env bash
# Gateway HTTPS load benchmark: the TLS listener (listen.tls) against nginx with the same
# certificate and key, both one worker, both in front of the same plain-HTTP upstream, both with a
# rate limit that never triggers (Headroom: a policy per client IP; nginx: limit_req). Three runs
# per proxy, alternating proxies:
#   1. keep-alive HTTPS: wrk over long-lived TLS connections (the cost of the record layer and
#      of proxying, one handshake per connection at the start);
#   2. a new TLS connection per request: wrk with `Connection: close` (each request pays a TCP
#      connect and a TLS handshake; wrk's OpenSSL may resume sessions, which both servers allow);
#   3. full handshakes per second: `openssl s_time -new` (one client, no session reuse, a fresh
#      full handshake per connection, then one GET).
# Both servers offer TLSv1.3 and TLSv1.2 and ALPN http/1.1; the certificate is made per run by
# openssl (EC P-256 by default, RSA 2048 with HEADROOM_BENCH_KEY=rsa). Everything binds to
# 127.0.0.1, uses its own temp directory and stops by itself. Requires wrk, nginx and openssl
# (Debian: apt-get install -y wrk nginx openssl), Java 17 and Maven.
#
# Usage: headroom-benchmarks/load/gateway-https-load.sh [seconds per run, default 10] [connections, default 32]
# Environment: HEADROOM_BENCH_ROUNDS (rounds of the runs, default 2; the proxies swap order each
# round), HEADROOM_BENCH_KEY (ec or rsa, default ec), HEADROOM_BENCH_JAVA, HEADROOM_BENCH_JAVA_FLAGS
# (default -Xms256m -Xmx256m -XX:+UseParallelGC), HEADROOM_BENCH_WARMUP (s, default 15),
# HEADROOM_BENCH_JAR (the gateway jar to measure, default this checkout's, built when missing).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
secs="${1:-10}"
conns="${2:-32}"
work="$(mktemp -d /tmp/headroom-https-load.XXXXXX)"
pids=()
cleanup() {
  for p in "${pids[@]:-}"; do [[ -n "$p" ]] && kill "$p" 2>/dev/null || true; done
  for n in upstream peer; do [[ -f "$work/$n.pid" ]] && kill "$(cat "$work/$n.pid")" 2>/dev/null || true; done
  sleep 0.3
  rm -rf "$work"
}
trap cleanup EXIT

command -v wrk >/dev/null || { echo "wrk not found: apt-get install -y wrk" >&2; exit 1; }
command -v openssl >/dev/null || { echo "openssl not found: apt-get install -y openssl" >&2; exit 1; }
command -v nginx >/dev/null || [[ -x /usr/sbin/nginx ]] || { echo "nginx not found: apt-get install -y nginx" >&2; exit 1; }
NGINX="$(command -v nginx || echo /usr/sbin/nginx)"

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }
UP=$(free_port); PEER=$(free_port)

# The certificate both servers present: a test CA and a server certificate for 127.0.0.1.
(
  cd "$work"
  openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 2 -subj "/CN=Headroom bench CA" \
    -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign 2>/dev/null
  if [[ "${HEADROOM_BENCH_KEY:-ec}" == rsa ]]; then
    openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out server.key 2>/dev/null
  else
    openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out server.key 2>/dev/null
  fi
  openssl req -new -key server.key -subj /CN=localhost -out server.csr
  printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n' > server.ext
  openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -set_serial 1 -days 2 -extfile server.ext \
    -out server.pem 2>/dev/null
)

nginx_conf() { # name listen-block
  mkdir -p "$work/$1"
  cat > "$work/$1.conf" <<CONF
worker_processes 1;
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
  }"
nginx_conf peer "  upstream origin { server 127.0.0.1:$UP; keepalive 64; }
  limit_req_zone \$binary_remote_addr zone=open:10m rate=1000000r/s;
  limit_req_status 429;
  proxy_http_version 1.1;
  proxy_set_header Connection \"\";
  proxy_set_header Host \$http_host;
  proxy_set_header Forwarded \"for=\$remote_addr;proto=\$scheme;host=\\\"\$http_host\\\"\";
  proxy_set_header X-Forwarded-For \$proxy_add_x_forwarded_for;
  proxy_set_header X-Forwarded-Proto \$scheme;
  proxy_set_header X-Forwarded-Host \$http_host;
  server {
    listen 127.0.0.1:$PEER ssl;
    ssl_certificate $work/server.pem;
    ssl_certificate_key $work/server.key;
    ssl_protocols TLSv1.3 TLSv1.2;
    location /ok { limit_req zone=open burst=1000000 nodelay; proxy_pass http://origin; }
  }"

jar="${HEADROOM_BENCH_JAR:-$root/headroom-cli/target/headroom-cli-0.1.0-SNAPSHOT-all.jar}"
if [[ ! -f "$jar" ]]; then (cd "$root" && mvn -B -q -pl headroom-cli -am package -DskipTests); fi
cat > "$work/headroom.yaml" <<CONF
service: {name: HTTPS load test}
admin: {enabled: false}
listen: {host: 127.0.0.1, port: 0, tls: {certificate: server.pem, key: server.key, protocols: [TLSv1.3, TLSv1.2]}}
upstreams:
  origin: {url: "http://127.0.0.1:$UP", maxConnections: 64}
policies:
  open:
    quota: 1000000000
    window: 1s
    partition: client-ip
    why: Never triggers; measures the cost of deciding.
routes:
  - {method: GET, path: /ok, upstream: origin, policies: [open]}
CONF
JAVA_FLAGS="${HEADROOM_BENCH_JAVA_FLAGS:--Xms256m -Xmx256m -XX:+UseParallelGC}"
JAVA_BIN="${HEADROOM_BENCH_JAVA:-java}"
# its own session, as each nginx daemon is (see gateway-load.sh: autogroup scheduling)
setsid "$JAVA_BIN" $JAVA_FLAGS -jar "$jar" serve --config "$work/headroom.yaml" --threads 1 --no-watch \
  > "$work/headroom.out" 2> "$work/headroom.err" &
pids+=($!)
for _ in $(seq 1 150); do grep -q "listening on" "$work/headroom.out" 2>/dev/null && break; sleep 0.1; done
HR=$(sed -n 's#listening on https://127.0.0.1:##p' "$work/headroom.out")
[[ -n "$HR" ]] || { echo "headroom did not start" >&2; cat "$work/headroom.err" >&2; exit 1; }
engine=$(grep -o 'listen.tls: [A-Za-z]* ([^)]*)\|listen.tls: JDK' "$work/headroom.err" | head -1 || true)

# both answer 200 over TLS, verified against the test CA
for port in "$HR" "$PEER"; do
  code=$(curl -sS --cacert "$work/ca.pem" -o /dev/null -w '%{http_code}' "https://127.0.0.1:$port/ok")
  [[ "$code" == 200 ]] || { echo "https://127.0.0.1:$port/ok answered $code" >&2; exit 1; }
done

warm="${HEADROOM_BENCH_WARMUP:-15}"
wrk -t2 -c"$conns" -d"${warm}s" "https://127.0.0.1:$HR/ok" >/dev/null
wrk -t2 -c"$conns" -d"$((warm / 3 + 1))s" -H 'Connection: close' "https://127.0.0.1:$HR/ok" >/dev/null
wrk -t2 -c"$conns" -d3s "https://127.0.0.1:$PEER/ok" >/dev/null

ticks() { local t=0 p; for p in "$@"; do t=$((t + $(awk '{print $14 + $15}' "/proc/$p/stat"))); done; echo "$t"; }
workers_of() { pgrep -P "$(cat "$work/$1.pid")" | tr '\n' ' '; }
HZ=$(getconf CLK_TCK)
to_ms() { awk -v v="$1" 'BEGIN { if (v ~ /us$/) { sub(/us/,"",v); print v/1000 } else if (v ~ /ms$/) { sub(/ms/,"",v); print v } else if (v ~ /s$/) { sub(/s/,"",v); print v*1000 } else print v }'; }

declare -A REQS TOOK PXT P99S ERRS
wrk_run() { # key url proxy-pids [extra wrk args...]
  local key="$1" url="$2" proxy="$3"; shift 3
  local px0 px1 out n t p99 errs
  px0=$(ticks $proxy)
  out=$(wrk -t2 -c"$conns" -d"${secs}s" --latency "$@" "$url")
  px1=$(ticks $proxy)
  n=$(awk '/requests in/ {print $1}' <<<"$out")
  t=$(awk '/requests in/ {gsub(/s,?$/, "", $4); print $4}' <<<"$out")
  p99=$(to_ms "$(awk '$1=="99%" {print $2}' <<<"$out")")
  errs=$(awk '/Non-2xx/ {s += $5} /Socket errors/ {s += 0} END {print s + 0}' <<<"$out")
  REQS[$key]=$(( ${REQS[$key]:-0} + n )); TOOK[$key]=$(awk -v a="${TOOK[$key]:-0}" -v b="$t" 'BEGIN { print a + b }')
  PXT[$key]=$(( ${PXT[$key]:-0} + px1 - px0 )); P99S[$key]="${P99S[$key]:-} $p99"; ERRS[$key]=$(( ${ERRS[$key]:-0} + errs ))
}
stime_run() { # key port proxy-pids: full handshakes (no session reuse), one GET each
  local key="$1" port="$2" proxy="$3" px0 px1 out n t
  px0=$(ticks $proxy)
  out=$(openssl s_time -connect "127.0.0.1:$port" -new -time "$secs" -www /ok -CAfile "$work/ca.pem" 2>&1 || true)
  px1=$(ticks $proxy)
  # "N connections in T real seconds": the wall-clock rate (the other line divides by s_time's CPU time)
  n=$(awk '/connections in [0-9]+ real seconds/ {print $1; exit}' <<<"$out")
  t=$(awk '/connections in [0-9]+ real seconds/ {print $4; exit}' <<<"$out")
  [[ -n "$n" ]] || { echo "openssl s_time against $port failed: $out" >&2; n=0; t=1; }
  REQS[$key]=$(( ${REQS[$key]:-0} + n )); TOOK[$key]=$(awk -v a="${TOOK[$key]:-0}" -v b="$t" 'BEGIN { print a + b }')
  PXT[$key]=$(( ${PXT[$key]:-0} + px1 - px0 ))
}

rounds="${HEADROOM_BENCH_ROUNDS:-2}"
HRPID=${pids[0]}
PEERW=$(workers_of peer)
one_round() { # proxy-name port pids
  wrk_run "$1 keep-alive" "https://127.0.0.1:$2/ok" "$3"
  wrk_run "$1 new-connection" "https://127.0.0.1:$2/ok" "$3" -H 'Connection: close'
  stime_run "$1 full-handshake (s_time -new)" "$2" "$3"
}
for round in $(seq 1 "$rounds"); do
  if (( round % 2 == 1 )); then
    one_round headroom "$HR" "$HRPID"; one_round nginx "$PEER" "$PEERW"
  else
    one_round nginx "$PEER" "$PEERW"; one_round headroom "$HR" "$HRPID"
  fi
done

median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "-"; else print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
echo "# $(date -u +%FT%TZ) $(nproc) cores; ${HEADROOM_BENCH_KEY:-ec} key; wrk -t2 -c$conns -d${secs}s x $rounds rounds; headroom --threads 1 (${engine:-engine not logged}), $("$JAVA_BIN" -version 2>&1 | head -1); nginx worker_processes 1 ($("$NGINX" -v 2>&1 | sed 's/.*version: //'))"
printf "| run | per second | p99 ms | non-2xx | proxy CPU us per request or connection |\n| --- | ---: | ---: | ---: | ---: |\n"
for proxy in headroom nginx; do
  for kind in keep-alive new-connection "full-handshake (s_time -new)"; do
    key="$proxy $kind"
    rate=$(awk -v n="${REQS[$key]}" -v t="${TOOK[$key]}" 'BEGIN { printf "%.0f", n / t }')
    cpu=$(awk -v t="${PXT[$key]}" -v n="${REQS[$key]}" -v hz="$HZ" 'BEGIN { if (n > 0) printf "%.1f", t * 1e6 / hz / n; else print "-" }')
    printf "| %s | %s | %s | %s | %s |\n" "$key" "$rate" "$(median <<<"${P99S[$key]:-}")" "${ERRS[$key]:--}" "$cpu"
  done
done
