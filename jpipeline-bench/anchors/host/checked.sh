#!/bin/bash
# Checked execution and pipeline launches, before (9b36ec3) and after, on 2 CPUs, 2 CPUs with 2 hogs, 16 CPUs.
J=${JAVA:-$PWD/.device-jre/bin/java}
D=${JARS:-$PWD/.devjars5}   # holds before.jar (9b36ec3) and after.jar
OUT=${OUT:-/tmp/out}
mkdir -p $OUT
run() {  # cpus label jar extra-args benchmark
  local cpus=$1 label=$2 jar=$3 args=$4 bench=$5
  taskset -c $cpus $J -jar $D/$jar.jar "$bench" -f 1 -wi 3 -i 5 -w 1 -r 1 -jvmArgsAppend "$args" 2>&1 \
    | grep -E "^CheckedLaunch" | sed "s/^/$label $jar $args | /" | tee -a $OUT/results.txt
}
for cfg in "0,1 2cpu" "0,1 2cpu+hogs" "0-15 16cpu"; do
  set -- $cfg; cpus=$1; label=$2
  hogs=""
  if [[ $label == *hogs* ]]; then
    taskset -c 0 sh -c 'while :; do :; done' & h1=$!
    taskset -c 1 sh -c 'while :; do :; done' & h2=$!
    hogs="$h1 $h2"
  fi
  for round in 1; do
    run $cpus $label before "-Dx=1" "CheckedLaunchBenchmark.checkedSchedule"
    run $cpus $label after "-Djpipeline.simt.compile=true" "CheckedLaunchBenchmark.checkedSchedule"
    run $cpus $label after "-Djpipeline.simt.compile=false" "CheckedLaunchBenchmark.checkedScan"
    run $cpus $label after "-Djpipeline.simt.compile=true" "CheckedLaunchBenchmark.checkedScan"
    run $cpus $label before "-Dx=1" "CheckedLaunchBenchmark.normalLaunch"
    run $cpus $label after "-Djpipeline.simt.compile=true" "CheckedLaunchBenchmark.normalLaunch"
  done
  [ -n "$hogs" ] && kill $hogs
done
nproc; cat /proc/cpuinfo | grep "model name" | head -1
