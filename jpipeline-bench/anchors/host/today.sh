#!/bin/bash
# docs/performance.md, "Today's figures": the rows that predated issue 28's wait changes (§25), measured again with
# one jar. The cross-process hand-off against Agrona (run L's command, §14) and streaming against the plain
# copy-then-sum loop (§2), on CPUs $1 (0-15, or 0,1 for the host pinned to 2 CPUs); with $2 = hogs, two busy loops
# run on the same CPUs throughout (streaming only: a spinning cross-process hand-off beside hogs has no stable
# ratio, §14). Jar: $JAR (default .bench/now.jar); JRE: $PWD/.device-jre.
J=$PWD/.device-jre/bin/java; JAR=${JAR:-$PWD/.bench/now.jar}; cpus=$1; tag=$cpus
if [ "$2" = hogs ]; then
  tag="$cpus+hogs"
  for i in 1 2; do taskset -c $cpus sh -c 'while :; do :; done' & done
  trap 'kill $(jobs -p) 2>/dev/null' EXIT
else
  taskset -c $cpus timeout 280 $J -jar $JAR 'CrossProcessHandoffBenchmark.(jpipeline|agronaWrite)$' -f 3 -wi 3 -w 1 \
    -i 4 -r 1 -p depth=4 -p stageBytes=8 -p partner=PROCESS -p ringCapacity=64,128 -p idle=BUSY_SPIN -jvm $J 2>&1 \
    | grep -E "^CrossProcess" | sed "s/^/$tag | /"
fi
taskset -c $cpus timeout 200 $J -jar $JAR 'StreamingBenchmark.(sequential|jpipelinePartitioned)$' -f 2 -wi 2 -w 1 \
  -i 3 -r 1 -p op=SUM -p depth=4 -p copyPolicy=AUTO 2>&1 | grep -E "^StreamingBenchmark" | sed "s/^/$tag | /"
