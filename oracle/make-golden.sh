#!/usr/bin/env bash
# Makes the golden files (oracle/golden/<program>.txt) from the plain runs that oracle/run.sh recorded for
# oracle/examples: a header naming the command and the device, "outcome ok|hang|fail", then the program's output
# (for "fail", what it printed: the CUDA error). GpuGoldenOutputTest (jpipeline-examples) compares jpipeline's
# output with them.
#
# usage: oracle/make-golden.sh [RESULTS_DIR [GOLDEN_DIR]]      (defaults: oracle/results, oracle/golden)
set -eu
RESULTS=${1:-oracle/results}
GOLDEN=${2:-oracle/golden}
mkdir -p "$GOLDEN"
device=$(sed -n 's/^- device: //p' "$RESULTS/device.txt")
nvcc=$(sed -n 's/^- nvcc: //p' "$RESULTS/device.txt")
date=$(sed -n 's/^- date: //p' "$RESULTS/device.txt")
command=$(sed -n 's/^- command: //p' "$RESULTS/device.txt")
for plain in "$RESULTS"/examples/*.plain.txt; do
  prog=$(basename "$plain" .plain.txt)
  rc=$(head -1 "$plain" | sed -n 's/^# rc=\([0-9]*\).*/\1/p')
  case "$rc" in
    0) outcome=ok ;;
    124 | 137) outcome=hang ;;
    *) outcome=fail ;;
  esac
  {
    echo "# golden output of oracle/examples/$prog.cu, run plainly on a GPU"
    echo "# made by: $command, plain run (nvcc -arch=sm_90 -lineinfo), then oracle/make-golden.sh"
    echo "# device: $device; nvcc $nvcc; $date"
    echo "# $(head -1 "$plain" | sed 's/^# //')"
    echo "outcome $outcome"
    tail -n +2 "$plain"
  } >"$GOLDEN/$prog.txt"
done
