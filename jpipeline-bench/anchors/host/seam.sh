#!/bin/bash
# Issue 28, the BarrierWord seam: in-process hand-off (HandoffBenchmark, JCTools as the control), region hand-off
# (CrossProcessHandoffBenchmark.jpipeline) and streaming (StreamingBenchmark.jpipelinePartitioned), before and after,
# alternating, on CPUs $1 (e.g. 0,1 or 0-15).
J=$PWD/.device-jre/bin/java; D=$PWD/.devjars6; cpus=$1
for r in 1 2; do for jar in seam-before seam-after; do
  taskset -c $cpus $J -jar $D/$jar.jar '^dev.jpipeline.bench.HandoffBenchmark.(partitioned|jctoolsSpsc)$' -f 2 -wi 3 -w 1 -i 4 -r 1 -p depth=4 -p strategy=ADAPTIVE 2>&1 | grep -E "^HandoffBenchmark" | sed "s/^/$cpus r$r $jar | /"
  taskset -c $cpus $J -jar $D/$jar.jar 'CrossProcessHandoffBenchmark.jpipeline$' -f 1 -wi 3 -i 4 -jvm $J 2>&1 | grep -E "^CrossProcess" | sed "s/^/$cpus r$r $jar | /"
  taskset -c $cpus $J -jar $D/$jar.jar 'StreamingBenchmark.jpipelinePartitioned$' -f 1 -wi 2 -i 3 -p op=SUM -p depth=4 -p copyPolicy=AUTO 2>&1 | grep -E "^StreamingBenchmark" | sed "s/^/$cpus r$r $jar | /"
done; done
