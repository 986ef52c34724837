#!/usr/bin/env bash
# Usage: ./run.sh [CPULIST] [ROUNDS] [WHICH]
#   CPULIST: taskset list (default 0,1); "all" = no pinning to a subset (all CPUs)
#   ROUNDS:  rounds per kernel (default 3); each round = N launches, median of the last half
#   WHICH:   hip | pocl | pocl-loops | all (default all)
# Prints one line per kernel per round plus a SUMMARY line = median of the round medians.
set -uo pipefail
cd "$(dirname "$0")"
CPUS=${1:-0,1}; ROUNDS=${2:-3}; WHICH=${3:-all}
if [ "$CPUS" = all ]; then CPUS="0-$(( $(getconf _NPROCESSORS_ONLN) - 1 ))"; fi
NCPU=$(taskset -c "$CPUS" nproc)
echo "# host $(hostname) cpus=$CPUS ($NCPU) rounds=$ROUNDS $(date -Is)"
# PoCL: one compute unit per allowed CPU; a fresh kernel cache per method so nothing is shared
export POCL_CPU_MAX_CU_COUNT=${POCL_CPU_MAX_CU_COUNT:-$NCPU}
# TBB (HIP-CPU) follows the process affinity mask by itself
CL=src/kernels.cl
if [[ $WHICH == all || $WHICH == hip ]]; then
  taskset -c "$CPUS" ./build/bin_hip_cpu "$ROUNDS" all
fi
if [[ $WHICH == all || $WHICH == pocl ]]; then
  d=$(mktemp -d); POCL_CACHE_DIR=$d ANCHOR_TAG=pocl-default taskset -c "$CPUS" ./build/bin_pocl "$ROUNDS" all $CL; rm -rf "$d"
fi
if [[ $WHICH == all || $WHICH == pocl-loops ]]; then
  d=$(mktemp -d); POCL_CACHE_DIR=$d POCL_WORK_GROUP_METHOD=loops ANCHOR_TAG=pocl-loops taskset -c "$CPUS" ./build/bin_pocl "$ROUNDS" all $CL; rm -rf "$d"
fi
