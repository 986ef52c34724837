#!/usr/bin/env bash
# Runs the anchors on another x86-64 Linux machine (e.g. the 16-core device) from this folder.
# Usage: device-bundle/device-run.sh [ROUNDS]   -> 2 CPUs (taskset 0,1) and all CPUs, all three runtimes
set -uo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-3}
echo "# $(uname -m) $(ldd --version | head -1) cpus=$(nproc) ld=$(command -v ld || echo MISSING)"
ldd build/bin_hip_cpu | grep -E 'not found|tbb'
eval "$(device-bundle/setup-pocl.sh /tmp/pocl-root)"
ldd /tmp/pocl-root/usr/lib/x86_64-linux-gnu/libLLVM-15.so.1 2>&1 | grep -E 'not found|GLIBC' | head -3
./run.sh 0,1 "$ROUNDS"
./run.sh all "$ROUNDS"
