#!/usr/bin/env bash
# Runs LoadBenchmark (issue 25) under load: the JMH JVM (and its forks) pinned to CPUS, with 0, 1, 2 and 4 CPU
# hogs (busy shell loops) pinned to the same CPUs, and, per hog count, times the CLI's `stream` the same way.
# Usage: jpipeline-bench/load.sh [OUTDIR] [extra JMH options...]
#   OUTDIR defaults to jpipeline-bench/results/load. Writes, per hog count N:
#     OUTDIR/hogs-N.json (JMH -rf json) and OUTDIR/hogs-N.txt (JMH's output);
#     OUTDIR/stream-hogs-N.tsv: one line per run of `jpipeline stream FILE --op OP --chunk Cm` and of the plain
#       loop in a fresh JVM (LoadTool loop), columns hogs, chunkMiB, compute, tool, run, seconds.
#   jpipeline-bench/load-ratios.py OUTDIR prints the ratios (plainLoop time / form time) as Markdown tables.
#   The JMH options default to -p chunkMiB=1,4 -p compute=SUM,CRC32C; extra ones follow (-f 1 -i 2 -p sizeMiB=64).
# Environment:
#   CPUS     the CPUs to pin to, as taskset -c takes them (default 0,1)
#   HOGS     the hog counts to run, in order (default "0 1 2 4")
#   JAVA     the java binary (for example .device-jre/bin/java on a machine without a JDK); unset: the JDK 25
#            that scripts/jdk25.sh finds, and the jars are built first (unless BUILD=0 or JAR is given)
#   JAR      the benchmark jar (default jpipeline-bench/target/jpipeline-bench.jar)
#   CLI_JAR  the CLI jar for `stream` (default jpipeline-cli/target/jpipeline.jar); missing: stream is skipped
#   STREAM_RUNS  runs of each stream (and fresh-JVM loop) case per hog count (default 3; 0: no stream timing)
#   BENCH    the JMH benchmark regex (default 'LoadBenchmark\.')
#   SIZE_MIB the stream test file's size (default: the -p sizeMiB= given to JMH if one value, else 256)
#   TMPDIR   where the stream test file is written (default /tmp)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${1:-$root/jpipeline-bench/results/load}"
shift $(( $# > 1 ? 1 : $# )) || true
cpus="${CPUS:-0,1}"
hogs_list="${HOGS:-0 1 2 4}"
runs="${STREAM_RUNS:-3}"
bench="${BENCH:-LoadBenchmark\\.}"
cli_jar="${CLI_JAR:-$root/jpipeline-cli/target/jpipeline.jar}"
if [ -z "${JAVA:-}" ]; then
  . "$root/scripts/jdk25.sh"
  JAVA="$JAVA_HOME/bin/java"
  if [ -z "${JAR:-}" ] && [ "${BUILD:-1}" != 0 ]; then
    (cd "$root" && ./mvnw -q -B -ntp -DskipTests -Dmaven.javadoc.skip=true -Dmaven.source.skip=true \
      -pl jpipeline-bench,jpipeline-cli -am package)
  fi
fi
jar="${JAR:-$root/jpipeline-bench/target/jpipeline-bench.jar}"
[ -f "$jar" ] || { echo "load.sh: $jar is missing; build it with ./mvnw -DskipTests package" >&2; exit 1; }
command -v taskset >/dev/null || { echo "load.sh: needs taskset (util-linux)" >&2; exit 1; }

# the stream file's size: SIZE_MIB, else a single -p sizeMiB=N among the JMH options, else JMH's default 256
size_mib="${SIZE_MIB:-}"
if [ -z "$size_mib" ]; then
  size_mib=256
  prev=""
  for arg in "$@"; do
    if [ "$prev" = "-p" ] && [[ "$arg" =~ ^sizeMiB=([0-9]+)$ ]]; then size_mib="${BASH_REMATCH[1]}"; fi
    prev="$arg"
  done
fi

mkdir -p "$out"
hog_pids=()
stream_file=""
stop_hogs() {
  local pid
  for pid in "${hog_pids[@]}"; do
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  hog_pids=()
}
cleanup() {
  stop_hogs
  [ -z "$stream_file" ] || rm -f "$stream_file"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# times `stream` and the fresh-JVM plain loop for each chunk size and computation, checking every result
time_stream() {
  local hogs="$1" tsv="$out/stream-hogs-$1.tsv" chunk op run line expected got seconds
  printf 'hogs\tchunkMiB\tcompute\ttool\trun\tseconds\n' > "$tsv"
  for chunk in 1 4; do
    for op in sum crc32c; do
      expected=$(grep "^$op " "$out/stream-file.expected" | cut -d' ' -f2)
      for run in $(seq 1 "$runs"); do
        line=$(taskset -c "$cpus" "$JAVA" --enable-native-access=ALL-UNNAMED -jar "$cli_jar" stream "$stream_file" \
          --op "$op" --chunk "${chunk}m")
        got=$(sed -n "s/^  result *$op //p" <<< "$line")
        seconds=$(sed -n 's/^  time *\([0-9.]*\) s,.*/\1/p' <<< "$line")
        [ "$got" = "$expected" ] && [ -n "$seconds" ] || {
          echo "load.sh: stream --op $op --chunk ${chunk}m gave '$got', expected $expected:" >&2
          echo "$line" >&2
          exit 1
        }
        printf '%s\t%s\t%s\tstream\t%s\t%s\n' "$hogs" "$chunk" "${op^^}" "$run" "$seconds" >> "$tsv"
        line=$(taskset -c "$cpus" "$JAVA" -cp "$jar" dev.jpipeline.bench.LoadTool loop "$stream_file" "$op" "$chunk")
        got=$(sed -n "s/^result $op //p" <<< "$line")
        seconds=$(sed -n 's/^time \([0-9.]*\) s$/\1/p' <<< "$line")
        [ "$got" = "$expected" ] && [ -n "$seconds" ] || {
          echo "load.sh: the fresh-JVM loop --op $op --chunk ${chunk}m gave '$got', expected $expected" >&2
          exit 1
        }
        printf '%s\t%s\t%s\tfreshLoop\t%s\t%s\n' "$hogs" "$chunk" "${op^^}" "$run" "$seconds" >> "$tsv"
      done
    done
  done
}

do_stream=0
if [ "$runs" -gt 0 ]; then
  if [ -f "$cli_jar" ]; then
    do_stream=1
    stream_file=$(mktemp "${TMPDIR:-/tmp}/jpipeline-load-stream-XXXXXX.bin")
    "$JAVA" -cp "$jar" dev.jpipeline.bench.LoadTool write "$stream_file" "$size_mib" > "$out/stream-file.expected"
  else
    echo "load.sh: $cli_jar is missing: stream is not timed" >&2
  fi
fi

for hogs in $hogs_list; do
  echo "== $hogs hog(s) on CPUs $cpus" >&2
  for _ in $(seq 1 "$hogs"); do
    taskset -c "$cpus" sh -c 'while :; do :; done' &
    hog_pids+=("$!")
  done
  taskset -c "$cpus" "$JAVA" -jar "$jar" "$bench" -p chunkMiB=1,4 -p compute=SUM,CRC32C \
    -rf json -rff "$out/hogs-$hogs.json" "$@" 2>&1 | tee "$out/hogs-$hogs.txt" | grep -E '^LoadBenchmark\.' || true
  grep -q '^# Run complete' "$out/hogs-$hogs.txt" || { echo "load.sh: JMH failed with $hogs hog(s), see $out/hogs-$hogs.txt" >&2; exit 1; }
  if grep -qE '<failure>|Exception' "$out/hogs-$hogs.txt"; then
    echo "load.sh: a trial failed with $hogs hog(s), see $out/hogs-$hogs.txt" >&2
    exit 1
  fi
  if [ "$do_stream" = 1 ]; then
    time_stream "$hogs"
    echo "   stream timed: $out/stream-hogs-$hogs.tsv" >&2
  fi
  stop_hogs
done
