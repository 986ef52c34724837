#!/bin/bash
# Issue 28, the HandleEvents and RingHome seams: in-process hand-off (HandoffBenchmark, JCTools as the control),
# region hand-off (CrossProcessHandoffBenchmark.jpipeline) and streaming (StreamingBenchmark.jpipelinePartitioned),
# jars before and after, alternating, two rounds, on CPUs $1 (e.g. 0,1 or 0-15). With $2 = hogs, two busy loops run
# on the same CPUs throughout (the hand-off then parks: strategy BLOCKING, as a user of a busy machine picks).
# Jars: $D/ev-before.jar and $D/ev-after.jar, D=${D:-$PWD/.devjars7}; JRE: $PWD/.device-jre.
J=$PWD/.device-jre/bin/java; D=${D:-$PWD/.devjars7}; cpus=$1; strategy=ADAPTIVE; tag=$cpus
if [ "$2" = hogs ]; then
  strategy=BLOCKING; tag="$cpus+hogs"
  for i in 1 2; do taskset -c $cpus sh -c 'while :; do :; done' & done
  trap 'kill $(jobs -p) 2>/dev/null' EXIT
fi
for r in 1 2; do for jar in ev-before ev-after; do
  taskset -c $cpus timeout 200 $J -jar $D/$jar.jar '^dev.jpipeline.bench.HandoffBenchmark.(partitioned|jctoolsSpsc)$' -f 2 -wi 3 -w 1 -i 4 -r 1 -p depth=4 -p strategy=$strategy 2>&1 | grep -E "^HandoffBenchmark" | sed "s/^/$tag r$r $jar | /"
  taskset -c $cpus timeout 200 $J -jar $D/$jar.jar 'CrossProcessHandoffBenchmark.jpipeline$' -f 1 -wi 3 -i 4 -jvm $J 2>&1 | grep -E "^CrossProcess" | sed "s/^/$tag r$r $jar | /"
  taskset -c $cpus timeout 200 $J -jar $D/$jar.jar 'StreamingBenchmark.jpipelinePartitioned$' -f 1 -wi 2 -i 3 -p op=SUM -p depth=4 -p copyPolicy=AUTO 2>&1 | grep -E "^StreamingBenchmark" | sed "s/^/$tag r$r $jar | /"
done; done
