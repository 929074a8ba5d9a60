#!/usr/bin/env bash
# Redis's own time per decision inside Headroom's FCALL, without any client: loads a decision script
# (headroom-redis's headroom.lua by default, or the file given, e.g. an older commit's) as a
# library into the Redis given, then has redis-benchmark send two kinds of batch and reads
# cmdstat_fcall's usec_per_call from INFO commandstats:
#   - across keys (mode m): 32 token-bucket acquisitions, each on its own random key, one
#     argument list (the busy route's case: requests differing only in their keys);
#   - copies (mode n): COPIES (8 and 32) copies of one acquisition on one key of a policy that
#     never refuses (a hot route's case).
# Give it a Redis of its own (its statistics are reset; its keys are the script's): e.g.
#   redis-server --port 6463 --bind 127.0.0.1 --save '' --appendonly no --daemonize yes
# Usage: headroom-benchmarks/load/redis-script-cost.sh PORT [LUA] [REQUESTS per run, default 20000]
# The mode m layout is the one of the script given: from commit a6f91bf, one argument list and an
# index per request; since the short replies, no indexes when there is one list (a script that
# reads them only when u > 1).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
port="${1:?usage: redis-script-cost.sh PORT [LUA] [REQUESTS]}"
lua="${2:-$root/headroom-redis/src/main/resources/dev/headroom/redis/headroom.lua}"
total="${3:-20000}"
case "$port" in 6379) echo "give it a Redis of its own, not the tests' 6379" >&2; exit 1;; esac
name=headroom_cost_$(sha1sum "$lua" | cut -c1-12)
lib="$(mktemp /tmp/headroom-script-cost.XXXXXX)"
trap 'rm -f "$lib"' EXIT
{ echo "#!lua name=$name"; cat "$lua"; echo "redis.register_function('$name', decide)"; } > "$lib"
redis-cli -p "$port" FUNCTION LOAD REPLACE "$(cat "$lib")" >/dev/null
per_call() { redis-cli -p "$port" INFO commandstats | sed -n 's/^cmdstat_fcall:.*usec_per_call=\([0-9.]*\).*/\1/p'; }

# mode m: m, n, u, then u lists (number of keys, length, ARGV), then n indexes (none for one list,
# from the short replies on: see above). The ARGV of one
# token-bucket acquisition: a, the test clock (empty: Redis TIME), margin ms, g, q, cost, T (s, ns),
# tau (s, ns), window s. Here q=100 per 10 s: T = 0.1 s, tau = 10 s.
n=32
keys=(); idx=()
indexed=1
grep -q 'u == 1 and lists\[1\]' "$lua" && indexed=0
for i in $(seq 1 $n); do keys+=("cost:k$i:__rand_int__"); if [ $indexed = 1 ]; then idx+=(1); fi; done
redis-cli -p "$port" CONFIG RESETSTAT >/dev/null
redis-benchmark -p "$port" -q -n "$total" -r 100000000 -c 4 FCALL "$name" $n "${keys[@]}" \
  m $n 1 1 12 a "" "" 1000 g 100 1 0 100000000 10 0 10 ${idx[@]+"${idx[@]}"} >/dev/null
awk -v u="$(per_call)" -v n=$n 'BEGIN { printf "across keys, %d token buckets: FCALL %.1f us, per decision %.2f us\n", n, u, u / n }'

# mode n: n, copies, then the request's ARGV; q = 10^9 per second (T = 1 ns), tau = 1 s: never refuses.
for copies in 8 32; do
  redis-cli -p "$port" CONFIG RESETSTAT >/dev/null
  redis-benchmark -p "$port" -q -n "$total" -r 1000 -c 4 FCALL "$name" 1 "cost:hot:__rand_int__" \
    n $copies a "" "" 1000 g 1000000000 1 0 1 1 0 1 >/dev/null
  awk -v u="$(per_call)" -v n=$copies 'BEGIN { printf "copies on one key, %d: FCALL %.1f us, per copy %.2f us\n", n, u, u / n }'
done
redis-cli -p "$port" FUNCTION DELETE "$name" >/dev/null
