#!/usr/bin/env bash
# issue 27 slices 2/4: jpipeline before (strands, 58828a6) and after (compiled) beside HIP-CPU, 2 and 16 CPUs
J=.device-jre/bin/java
D=.devjars4
echo "# $(nproc) cpus, $(date -Is)"
for cpus in "0,1" "0-15"; do
  for r in 1 2 3; do
    for k in "reduction 200" "loop 20" "empty:1024x256 1000" "empty:1x1024 1000"; do
      echo -n "cpus=$cpus round=$r after "; taskset -c $cpus $J -cp $D/after.jar dev.jpipeline.bench.SimtLaunchDriver $k 2>&1 | tail -1
    done
    echo -n "cpus=$cpus round=$r before "; taskset -c $cpus $J -cp $D/before.jar dev.jpipeline.bench.SimtLaunchDriver reduction 20 2>&1 | tail -1
    echo "cpus=$cpus round=$r hip:"; taskset -c $cpus $D/build/bin_hip_cpu 1 all 2>&1 | grep SUMMARY
  done
done
