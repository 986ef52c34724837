#!/bin/bash
# Checked execution and pipeline launches, issue 27: before (bench jar at 9b36ec3), mid (b0bf64a: slices 3 and 5)
# and after (Pipeline.make in steps), in .devjars5/ beside a JDK 25 runtime in .device-jre (shared/tools/device-jre.sh),
# on the CPUs given ($1: "2" -> 0,1; "2h" -> 0,1 with two hogs; "16" -> 0-15).
J=$PWD/.device-jre/bin/java
D=$PWD/.devjars5
OUT=${OUT:-/tmp/out}
mkdir -p $OUT
case $1 in 2) cpus=0,1;; 2h) cpus=0,1;; 16) cpus=0-15;; esac
label=$1
if [ "$1" = 2h ]; then
  taskset -c 0 sh -c 'while :; do :; done' & h1=$!
  taskset -c 1 sh -c 'while :; do :; done' & h2=$!
fi
run() {  # jar benchmark [extra jmh args]
  taskset -c $cpus $J -jar $D/$1.jar "$2" -f 1 -wi 3 -i 5 -w 1 -r 1 $3 2>&1 \
    | grep -E "^CheckedLaunch" | sed "s/^/$label $1 | /" | tee -a $OUT/results.txt
}
for jar in before mid after; do run $jar CheckedLaunchBenchmark.checkedSchedule; done
run after CheckedLaunchBenchmark.checkedScan
for jar in before after; do run $jar CheckedLaunchBenchmark.normalLaunch; done
[ -n "$h1" ] && kill $h1 $h2
nproc; grep "model name" /proc/cpuinfo | head -1
