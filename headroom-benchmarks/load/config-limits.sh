#!/usr/bin/env bash
# Configuration size bound: how long `headroom serve --config FILE` takes to refuse a 16 MiB file
# (one comment line, SnakeYAML's worst case: its scanner is quadratic in a line's length) against
# the same file parsed with the bound raised over it (what every file got before the bound), and
# the worst file at the default 1 MiB bound (one comment line) against 1 MiB of short lines. Each
# file holds only a comment, so serve ends with status 3 ("the file is empty") once it has parsed
# it; `headroom --version` is the JVM's start alone. Both times include the JVM's start; the CPU
# time (user + system of the process) is the figure to compare on a machine shared with others.
#
# Usage: headroom-benchmarks/load/config-limits.sh   (builds the jar through ./headroom if stale)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
work="$(mktemp -d /tmp/headroom-config-limits.XXXXXX)"
trap 'rm -rf "$work"' EXIT

comment_line() { { printf '# '; head -c "$1" /dev/zero | tr '\0' x; printf '\n'; } > "$2"; }
comment_line $((16 << 20)) "$work/one-line-16MiB.yaml"
comment_line $(((1 << 20) - 3)) "$work/one-line-1MiB.yaml"
python3 -c 'import sys; sys.stdout.write(("# " + "x" * 77 + "\n") * 13107 + "#" * 15 + "\n")' > "$work/lines-1MiB.yaml"

"$root/headroom" --version >/dev/null # builds the jar if needed, outside the timings

run() { # label, then the headroom arguments; prints wall and CPU (user + system) time
  local label="$1"; shift
  local TIMEFORMAT='%R %U %S' t
  t=$( { time "$root/headroom" "$@" >/dev/null 2>"$work/err"; } 2>&1 ) || true
  t=$(tail -1 <<<"$t")
  read -r real user sys <<<"$t"
  printf '%-34s wall %7.2f s  cpu %7.2f s  %s\n' "$label" "$real" "$(awk "BEGIN { print $user + $sys }")" \
    "$(head -1 "$work/err" | sed "s|$work/||" | cut -c1-90)"
}

printf 'sizes: %s\n' "$(cd "$work" && wc -c ./*.yaml | tr '\n' ' ')"
run "jvm start (--version)" --version
run "16 MiB, bound 1 MiB (refused)" serve --config "$work/one-line-16MiB.yaml" --port 0
run "16 MiB, bound 17 MiB (parsed)" serve --config "$work/one-line-16MiB.yaml" --port 0 --max-config-bytes 17MiB
run "1 MiB one line (parsed)" serve --config "$work/one-line-1MiB.yaml" --port 0
run "1 MiB of 80-byte lines (parsed)" serve --config "$work/lines-1MiB.yaml" --port 0
