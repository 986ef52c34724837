#!/usr/bin/env bash
# Plain runs, repeated: compiles every .cu of DIR (as oracle/run.sh does) and runs each program N times with a
# timeout, one run at a time, counting how each run ended: "ok" (exit 0 and, where the program checks its
# result, the reference's result), "mismatch" (exit 0, another result), "hang" (killed at the timeout) or
# "fail" (any other exit). Writes a markdown table to stdout. Shows whether a bug shows on a GPU every time,
# sometimes or never.
#
# usage: oracle/repeat.sh DIR N        environment: PLAIN_TIMEOUT (s, default 10), NVCC (default nvcc)
set -u
dir=$1
n=$2
timeout_s=${PLAIN_TIMEOUT:-10}
NVCC=${NVCC:-nvcc}
bin=$(mktemp -d)
for src in "$dir"/*.cu; do
  "$NVCC" -arch=sm_90 -lineinfo -diag-suppress 20054 -o "$bin/$(basename "$src" .cu)" "$src" >/dev/null 2>&1 &
done
wait
echo "| program | runs | ok | mismatch | hang | fail |"
echo "|---|---|---|---|---|---|"
for src in "$dir"/*.cu; do
  prog=$(basename "$src" .cu)
  ok=0 mismatch=0 hang=0 fail=0
  for ((i = 0; i < n; i++)); do
    out=$(timeout -k 2 "$timeout_s" "$bin/$prog" 2>&1)
    rc=$?
    if [ $rc = 124 ] || [ $rc = 137 ]; then
      hang=$((hang + 1))
    elif [ $rc != 0 ]; then
      fail=$((fail + 1))
    elif grep -q '^reference mismatch' <<<"$out"; then
      mismatch=$((mismatch + 1))
    else
      ok=$((ok + 1))
    fi
    # a program that hangs will hang again: stop after two hangs
    [ $hang -ge 2 ] && break
  done
  echo "| $prog | $((ok + mismatch + hang + fail)) | $ok | $mismatch | $hang | $fail |"
done
rm -rf "$bin"
