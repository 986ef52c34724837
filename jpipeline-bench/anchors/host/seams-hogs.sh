#!/bin/bash
# Issue 28's seams under load: seams.sh's three benchmarks on CPUs 0,1 with two busy loops on the same CPUs, one
# round, shorter runs, each bounded by 90 s, lines appended to $OUT/hogs.txt as they come (a busy machine makes JMH's
# forks slow to start and to stop).
J=$PWD/.device-jre/bin/java; D=${D:-$PWD/.devjars7}; o=${OUT:-/tmp}/hogs.txt
for i in 1 2; do taskset -c 0,1 sh -c 'while :; do :; done' & done
trap 'kill $(jobs -p) 2>/dev/null' EXIT
for jar in ev-before ev-after; do
  taskset -c 0,1 timeout 90 $J -jar $D/$jar.jar '^dev.jpipeline.bench.HandoffBenchmark.partitioned$' -f 1 -wi 2 -w 1 -i 3 -r 1 -p depth=4 -p strategy=BLOCKING 2>&1 | grep -E "^HandoffBenchmark" | sed "s/^/hogs $jar | /" >> $o
  taskset -c 0,1 timeout 90 $J -jar $D/$jar.jar 'StreamingBenchmark.jpipelinePartitioned$' -f 1 -wi 1 -i 2 -p op=SUM -p depth=4 -p copyPolicy=AUTO 2>&1 | grep -E "^StreamingBenchmark" | sed "s/^/hogs $jar | /" >> $o
  taskset -c 0,1 timeout 90 $J -jar $D/$jar.jar 'CrossProcessHandoffBenchmark.jpipeline$' -f 1 -wi 2 -i 3 -jvm $J 2>&1 | grep -E "^CrossProcess" | sed "s/^/hogs $jar | /" >> $o
done
cat $o
