#!/usr/bin/env bash
# Alternates jpipeline's SimtLaunchDriver, the plain-Java reduction, HIP-CPU and PoCL on the same CPUs, ROUNDS
# rounds, with HOGS busy loops pinned to the same CPUs (0: idle).
# Usage: side-by-side.sh JAR CPUS ROUNDS HOGS     (from anything; the anchors must be built: build.sh)
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
JAR=$1; CPUS=$2; ROUNDS=${3:-3}; HOGS=${4:-0}
JAVA=${JAVA:-java}
hogs=()
for ((h = 0; h < HOGS; h++)); do taskset -c "$CPUS" bash -c 'while :; do :; done' & hogs+=($!); done
trap '[ ${#hogs[@]} -gt 0 ] && kill "${hogs[@]}" 2>/dev/null' EXIT
echo "# cpus=$CPUS hogs=$HOGS rounds=$ROUNDS $(date -Is)"
for ((r = 1; r <= ROUNDS; r++)); do
  for k in "reduction 200" "loop 20" "empty:1024x256 1000" "empty:1x1024 1000" "reduction-plain-java 20"; do
    echo -n "round=$r jpipeline "; taskset -c "$CPUS" "$JAVA" -cp "$JAR" dev.jpipeline.bench.SimtLaunchDriver $k 2>&1 | tail -1
  done
  "$here/run.sh" "$CPUS" 1 all 2>&1 | grep SUMMARY | sed "s/^/round=$r /"
done
