#!/usr/bin/env bash
# Builds both anchors into ./build. Needs: g++ (C++20), libtbb-dev, ocl-icd-opencl-dev, opencl-headers.
# HIP-CPU headers are expected in ./hip-cpu-src (git archive of github:ROCm/HIP-CPU, commit e112c93).
set -euo pipefail
cd "$(dirname "$0")"
mkdir -p build
HIP_CPU=${HIP_CPU:-hip-cpu-src}
# rpath $ORIGIN/../lib lets a carried libtbb.so.12 in ./lib be found on a machine without TBB
g++ -O3 -std=c++20 -Isrc -I"$HIP_CPU/include" src/kernels_hip.cpp -o build/bin_hip_cpu \
    -Wl,-rpath,'$ORIGIN/../lib' -ltbb -lpthread
gcc -O2 -std=c11 -D_POSIX_C_SOURCE=200809L -Wall -Isrc src/host_ocl.c -o build/bin_pocl \
    -Wl,-rpath,'$ORIGIN/../lib' -lOpenCL
echo "built: $(ls build)"
