// HIP-CPU anchor: block reduction, barrier loop, empty kernel.
#include <hip/hip_runtime.h>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include "timing.h"

using u64 = unsigned long long;

constexpr int RED_BLOCKS = 256, RED_THREADS = 256;
constexpr int BAR_BLOCKS = 64, BAR_THREADS = 128, BAR_ROUNDS = 1000;

__global__ void reduce_kernel(const u64* input, u64* blockSums) {
    __shared__ u64 partial[RED_THREADS];
    const int t = threadIdx.x;
    partial[t] = input[blockIdx.x * RED_THREADS + t];
    __syncthreads();
    for (int half = RED_THREADS / 2; half > 0; half /= 2) {
        if (t < half) partial[t] += partial[t + half];
        __syncthreads();
    }
    if (t == 0) blockSums[blockIdx.x] = partial[0];
}

__global__ void barrier_kernel(int* errors) {
    __shared__ long long shared[BAR_THREADS];
    const int t = threadIdx.x;
    shared[t] = 0;  // each thread owns shared[t]; no barrier needed to zero it
    for (int round = 0; round < BAR_ROUNDS; ++round) {
        shared[t] += 1;
        __syncthreads();
    }
    if (shared[t] != BAR_ROUNDS) atomicAdd(errors, 1);
}

__global__ void empty_kernel() {}

#define CHECK(x) do { hipError_t e_ = (x); if (e_ != hipSuccess) { \
    std::fprintf(stderr, "HIP error %d at %s:%d\n", (int)e_, __FILE__, __LINE__); std::exit(1); } } while (0)

int main(int argc, char** argv) {
    const int rounds = argc > 1 ? std::atoi(argv[1]) : 3;
    const char* only = argc > 2 ? argv[2] : "all";
    auto want = [&](const char* k) { return std::strcmp(only, "all") == 0 || std::strcmp(only, k) == 0; };

    const int n_in = RED_BLOCKS * RED_THREADS;
    u64 *input, *blockSums;
    int* errors;
    CHECK(hipMalloc((void**)&input, n_in * sizeof(u64)));
    CHECK(hipMalloc((void**)&blockSums, RED_BLOCKS * sizeof(u64)));
    CHECK(hipMalloc((void**)&errors, sizeof(int)));
    u64 expected = 0;
    for (int i = 0; i < n_in; ++i) {
        input[i] = ((u64)i * 0x9E3779B97F4A7C15ULL) >> 20;
        expected += input[i];
    }
    *errors = 0;

    std::vector<double> t;
    std::vector<double> med_red, med_bar, med_e1, med_e2;
    for (int r = 1; r <= rounds; ++r) {
        if (want("reduction")) {
            const int N = 200; t.assign(N, 0);
            for (int i = 0; i < N; ++i) {
                double t0 = anchor_now_ms();
                hipLaunchKernelGGL(reduce_kernel, dim3(RED_BLOCKS), dim3(RED_THREADS), 0, 0,
                                   (const u64*)input, blockSums);
                CHECK(hipDeviceSynchronize());
                t[i] = anchor_now_ms() - t0;
                u64 sum = 0;
                for (int b = 0; b < RED_BLOCKS; ++b) sum += blockSums[b];
                if (sum != expected) { std::fprintf(stderr, "reduction mismatch %llu != %llu\n", sum, expected); return 2; }
            }
            auto st = anchor_last_half(t.data(), N);
            anchor_print("hip-cpu", "reduction", r, st, N, "");
            med_red.push_back(st.median);
        }
        if (want("barrier")) {
            const int N = 20; t.assign(N, 0);
            for (int i = 0; i < N; ++i) {
                double t0 = anchor_now_ms();
                hipLaunchKernelGGL(barrier_kernel, dim3(BAR_BLOCKS), dim3(BAR_THREADS), 0, 0, errors);
                CHECK(hipDeviceSynchronize());
                t[i] = anchor_now_ms() - t0;
                if (*errors != 0) { std::fprintf(stderr, "barrier check failed: %d threads\n", *errors); return 2; }
            }
            auto st = anchor_last_half(t.data(), N);
            char extra[96];
            std::snprintf(extra, sizeof extra, " = %.1f ns per thread-barrier",
                          st.median * 1e6 / ((double)BAR_BLOCKS * BAR_THREADS * BAR_ROUNDS));
            anchor_print("hip-cpu", "barrier", r, st, N, extra);
            med_bar.push_back(st.median);
        }
        if (want("empty")) {
            const int N = 200;
            struct { const char* name; int g, b; std::vector<double>* meds; } cfg[2] = {
                {"empty 1024x256", 1024, 256, &med_e1}, {"empty 1x1024", 1, 1024, &med_e2}};
            for (auto& c : cfg) {
                t.assign(N, 0);
                for (int i = 0; i < N; ++i) {
                    double t0 = anchor_now_ms();
                    hipLaunchKernelGGL(empty_kernel, dim3(c.g), dim3(c.b), 0, 0);
                    CHECK(hipDeviceSynchronize());
                    t[i] = anchor_now_ms() - t0;
                }
                auto st = anchor_last_half(t.data(), N);
                anchor_print("hip-cpu", c.name, r, st, N, "");
                c.meds->push_back(st.median);
            }
        }
    }
    auto summary = [&](const char* name, std::vector<double>& v, const char* extra_fmt, double div) {
        if (v.empty()) return;
        double m = anchor_median_of(v.data(), (int)v.size());
        std::printf("[hip-cpu] SUMMARY %s: median of %d round medians %.3f ms", name, (int)v.size(), m);
        if (extra_fmt) std::printf(extra_fmt, m * 1e6 / div);
        std::printf("\n");
    };
    summary("reduction", med_red, nullptr, 1);
    summary("barrier", med_bar, " = %.1f ns per thread-barrier", (double)BAR_BLOCKS * BAR_THREADS * BAR_ROUNDS);
    summary("empty 1024x256", med_e1, nullptr, 1);
    summary("empty 1x1024", med_e2, nullptr, 1);
    CHECK(hipFree(input)); CHECK(hipFree(blockSums)); CHECK(hipFree(errors));
    return 0;
}
