#!/usr/bin/env bash
# Runs jpipeline's JMH benchmarks side by side with the peers and writes one JSON result file per benchmark.
# Usage: jpipeline-bench/bench.sh [OUTDIR] [BENCHMARK-REGEX] [extra JMH options...]
#   OUTDIR defaults to jpipeline-bench/results; the regex defaults to all benchmarks.
# Java: $JAVA if set (for example .device-jre/bin/java on a machine without a JDK), else the JDK 25 that
# scripts/jdk25.sh finds. The jar is built first when a JDK and the sources are present.
# jpipeline-bench/forks.py OUTDIR/*.json prints the medians and per-fork means as Markdown rows.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${1:-$root/jpipeline-bench/results}"
filter="${2:-.*}"
shift $(( $# > 2 ? 2 : $# )) || true
jar="$root/jpipeline-bench/target/jpipeline-bench.jar"
if [ -z "${JAVA:-}" ]; then
  . "$root/scripts/jdk25.sh"
  JAVA="$JAVA_HOME/bin/java"
  (cd "$root" && ./mvnw -q -B -ntp -DskipTests -pl jpipeline-bench -am package)
fi
[ -f "$jar" ] || { echo "bench.sh: $jar is missing; build it with ./mvnw -DskipTests package" >&2; exit 1; }
mkdir -p "$out"
for bench in HandoffBenchmark RendezvousFloorBenchmark StageHandoffBenchmark StreamingBenchmark StreamingTeamBenchmark PipelineKindsBenchmark \
    PairScalingBenchmark KernelBenchmark SimtLaunchBenchmark StackSwitchBenchmark TracingBenchmark \
    CopyHandoffBenchmark CheckedLaunchBenchmark CrossProcessWakeBenchmark CrossProcessHandoffBenchmark \
    CrossProcessStreamingBenchmark PrefetchBenchmark LoadBenchmark; do
  [[ "$bench" =~ $filter ]] || continue
  echo "== $bench" >&2
  "$JAVA" -jar "$jar" "\.$bench\." -rf json -rff "$out/$bench.json" "$@" | tee "$out/$bench.txt" | grep -E '^[A-Z][A-Za-z]+Benchmark\.' || true
done
