#!/usr/bin/env bash
# Builds the tree's jars (and the distribution) twice from clean and compares them byte for byte:
# the published artifacts are reproducible (project.build.outputTimestamp in headroom-parent). The
# arguments go to both Maven runs, for example -pl headroom-cli -am for part of the tree; -o is
# added when MAVEN_OFFLINE=1. It runs `mvn clean`, so it removes every target/ it builds.
#   scripts/check-reproducible.sh [MAVEN ARGUMENTS]
set -euo pipefail
cd "$(dirname "$0")/.."
offline=()
if [[ "${MAVEN_OFFLINE:-0}" == 1 ]]; then offline=(-o); fi
work="$(mktemp -d "${TMPDIR:-/tmp}/headroom-reproducible.XXXXXX")"
trap 'rm -rf "$work"' EXIT

build() {
  mvn -B -q "${offline[@]}" -DskipTests -Dmaven.deploy.skip=true "$@" clean package
}

sums() {
  # the files directly in each module's target/ (not the staging repository's, nor unpacked ones)
  find . -type f -path '*/target/*' ! -path '*/target/*/*' \
      \( -name '*.jar' -o -name '*.tar.gz' -o -name '*.zip' \) -print0 | sort -z | xargs -0 -r sha256sum
}

build "$@"
sums > "$work/first"
build "$@"
sums > "$work/second"
if [[ ! -s "$work/first" ]]; then
  echo "check-reproducible: the build made no jar to compare" >&2
  exit 1
fi
if ! diff -u "$work/first" "$work/second"; then
  echo "check-reproducible: the files above differ between two builds of the same sources" >&2
  exit 1
fi
echo "check-reproducible: $(wc -l < "$work/first") files identical in two builds"
