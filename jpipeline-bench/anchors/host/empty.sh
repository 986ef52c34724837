#!/usr/bin/env bash
# empty kernels at the latest jar (after3), 6000 launches (warm on 1-2 CPUs), 1/2/16 CPUs, alternating with HIP-CPU
J=.device-jre/bin/java
D=.devjars4
for cpus in "0" "0,1" "0-15"; do
  for r in 1 2 3; do
    echo -n "cpus=$cpus round=$r jp "; taskset -c $cpus $J -cp $D/after3.jar dev.jpipeline.bench.SimtLaunchDriver empty:1024x256 6000 2>&1 | tail -1
    echo -n "cpus=$cpus round=$r jp "; taskset -c $cpus $J -cp $D/after3.jar dev.jpipeline.bench.SimtLaunchDriver empty:1x1024 6000 2>&1 | tail -1
    echo -n "cpus=$cpus round=$r "; taskset -c $cpus $D/build/bin_hip_cpu 1 all 2>&1 | grep "SUMMARY empty" | tr '\n' ' '; echo
  done
done
