// Host helpers shared by the oracle programs: CUDA error checks, device buffers and the output format that
// oracle/run.sh records and GpuGoldenOutputTest (jpipeline-examples) parses. See oracle/README.md.
#pragma once
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

// A failed CUDA call ends the program with exit status 3, naming the error on stdout (recorded in the output).
#define CUDA_CHECK(call)                                                                                   \
  do {                                                                                                     \
    cudaError_t e_ = (call);                                                                               \
    if (e_ != cudaSuccess) {                                                                               \
      printf("cuda-error %s: %s\n", cudaGetErrorName(e_), cudaGetErrorString(e_));                       \
      fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_));        \
      exit(3);                                                                                             \
    }                                                                                                      \
  } while (0)

// Elements printed one per line; longer outputs print their first SHOWN and are covered whole by the hash.
static const size_t SHOWN = 32768;

// A host array of n elements made by f(i) (float inputs are computed in double, then rounded, as in Java's
// Floats.floats).
template <typename T, typename F>
std::vector<T> host_array(size_t n, F f) {
  std::vector<T> v(n);
  for (size_t i = 0; i < n; i++) v[i] = (T)f((long long)i);
  return v;
}

template <typename T>
T* to_device(const std::vector<T>& h) {
  T* d = nullptr;
  CUDA_CHECK(cudaMalloc(&d, h.size() * sizeof(T)));
  CUDA_CHECK(cudaMemcpy(d, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
  return d;
}

// Waits for the kernel, then copies n elements of d back.
template <typename T>
std::vector<T> from_device(const T* d, size_t n) {
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<T> h(n);
  CUDA_CHECK(cudaMemcpy(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost));
  return h;
}

// The output format: "reference match" or "reference mismatch K first I" (K elements differ from the plain
// C++ reference, the first at I; a faulty program may well match), "example NAME", "count N", "fnv1a64 H" (FNV-1a over the little-endian bytes of every
// element), "shown M", then M lines "i xxxxxxxx": element i's 32 bits in hex (a float's raw bits).
template <typename T>
void print_output(const char* name, const std::vector<T>& out, const std::vector<T>& expected) {
  static_assert(sizeof(T) == 4, "32-bit elements");
  size_t mismatches = 0, first = 0;
  for (size_t i = 0; i < out.size(); i++) {
    if (memcmp(&out[i], &expected[i], 4) != 0 && mismatches++ == 0) first = i;
  }
  if (mismatches == 0) {
    printf("reference match\n");
  } else {
    printf("reference mismatch %zu first %zu\n", mismatches, first);
  }
  uint64_t h = 14695981039346656037ull;  // the FNV-1a 64-bit offset basis, 0xcbf29ce484222325
  std::vector<uint32_t> words(out.size());
  for (size_t i = 0; i < out.size(); i++) {
    memcpy(&words[i], &out[i], 4);
    for (int b = 0; b < 4; b++) {
      h ^= (words[i] >> (8 * b)) & 0xffu;
      h *= 1099511628211ull;
    }
  }
  size_t shown = out.size() < SHOWN ? out.size() : SHOWN;
  printf("example %s\ncount %zu\nfnv1a64 %016llx\nshown %zu\n", name, out.size(), (unsigned long long)h, shown);
  for (size_t i = 0; i < shown; i++) printf("%zu %08x\n", i, words[i]);
}
