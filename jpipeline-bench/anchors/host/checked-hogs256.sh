#!/bin/bash
J=${JAVA:-$PWD/.device-jre/bin/java}; D=${JARS:-$PWD/.devjars5}   # before.jar (9b36ec3), after.jar
taskset -c 0 sh -c 'while :; do :; done' & h1=$!
taskset -c 1 sh -c 'while :; do :; done' & h2=$!
for r in 1 2; do for jar in before after; do
  taskset -c 0,1 $J -jar $D/$jar.jar CheckedLaunchBenchmark.checkedSchedule -p threads=256 -f 2 -wi 3 -i 5 -w 1 -r 1 2>&1 | grep -E "^CheckedLaunch" | sed "s/^/round $r $jar | /"
done; done
kill $h1 $h2
