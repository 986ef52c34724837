/* OpenCL host for the anchor kernels: builds kernels.cl once, times enqueue + clFinish. */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "timing.h"

#define RED_BLOCKS 256
#define RED_THREADS 256
#define BAR_BLOCKS 64
#define BAR_THREADS 128
#define BAR_ROUNDS 1000

#define CHECK(x) do { cl_int e_ = (x); if (e_ != CL_SUCCESS) { \
    fprintf(stderr, "OpenCL error %d at %s:%d\n", (int)e_, __FILE__, __LINE__); exit(1); } } while (0)

static char* read_file(const char* path) {
    FILE* f = fopen(path, "rb");
    if (!f) { perror(path); exit(1); }
    fseek(f, 0, SEEK_END); long n = ftell(f); fseek(f, 0, SEEK_SET);
    char* s = (char*)malloc((size_t)n + 1);
    if (fread(s, 1, (size_t)n, f) != (size_t)n) { perror("read"); exit(1); }
    s[n] = 0; fclose(f);
    return s;
}

static cl_command_queue q;

static double launch(cl_kernel k, size_t global, size_t local) {
    double t0 = anchor_now_ms();
    CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &global, &local, 0, NULL, NULL));
    CHECK(clFinish(q));
    return anchor_now_ms() - t0;
}

int main(int argc, char** argv) {
    int rounds = argc > 1 ? atoi(argv[1]) : 3;
    const char* only = argc > 2 ? argv[2] : "all";
    const char* clpath = argc > 3 ? argv[3] : "src/kernels.cl";
    const char* tag = getenv("ANCHOR_TAG") ? getenv("ANCHOR_TAG") : "pocl";
    int all = strcmp(only, "all") == 0;

    cl_platform_id plat; cl_device_id dev; cl_int err;
    CHECK(clGetPlatformIDs(1, &plat, NULL));
    CHECK(clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, NULL));
    char dname[256]; cl_uint cus;
    CHECK(clGetDeviceInfo(dev, CL_DEVICE_NAME, sizeof dname, dname, NULL));
    CHECK(clGetDeviceInfo(dev, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof cus, &cus, NULL));
    const char* wgm = getenv("POCL_WORK_GROUP_METHOD");
    printf("[%s] device: %s, compute units %u, POCL_WORK_GROUP_METHOD=%s\n", tag, dname, cus, wgm ? wgm : "(default)");

    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err); CHECK(err);
    q = clCreateCommandQueue(ctx, dev, 0, &err); CHECK(err);
    char* src = read_file(clpath);
    cl_program prog = clCreateProgramWithSource(ctx, 1, (const char**)&src, NULL, &err); CHECK(err);
    double tb = anchor_now_ms();
    err = clBuildProgram(prog, 1, &dev, "", NULL, NULL);
    if (err != CL_SUCCESS) {
        char log[16384]; clGetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL);
        fprintf(stderr, "build failed:\n%s\n", log); return 1;
    }
    printf("[%s] clBuildProgram %.1f ms\n", tag, anchor_now_ms() - tb);
    cl_kernel kred = clCreateKernel(prog, "reduce_kernel", &err); CHECK(err);
    cl_kernel kbar = clCreateKernel(prog, "barrier_kernel", &err); CHECK(err);
    cl_kernel kemp = clCreateKernel(prog, "empty_kernel", &err); CHECK(err);

    const int n_in = RED_BLOCKS * RED_THREADS;
    cl_ulong* host_in = (cl_ulong*)malloc(sizeof(cl_ulong) * n_in);
    cl_ulong expected = 0;
    for (int i = 0; i < n_in; ++i) {
        host_in[i] = ((cl_ulong)i * 0x9E3779B97F4A7C15ULL) >> 20;
        expected += host_in[i];
    }
    cl_mem din = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof(cl_ulong) * n_in, host_in, &err); CHECK(err);
    cl_mem dsums = clCreateBuffer(ctx, CL_MEM_READ_WRITE, sizeof(cl_ulong) * RED_BLOCKS, NULL, &err); CHECK(err);
    cl_int zero = 0;
    cl_mem derr = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof(cl_int), &zero, &err); CHECK(err);
    CHECK(clSetKernelArg(kred, 0, sizeof(cl_mem), &din));
    CHECK(clSetKernelArg(kred, 1, sizeof(cl_mem), &dsums));
    CHECK(clSetKernelArg(kbar, 0, sizeof(cl_mem), &derr));

    double t[200];
    double med_red[64], med_bar[64], med_e1[64], med_e2[64];
    int nr = 0;
    if (rounds > 64) rounds = 64;
    cl_ulong sums[RED_BLOCKS];
    for (int r = 1; r <= rounds; ++r, ++nr) {
        if (all || !strcmp(only, "reduction")) {
            const int N = 200;
            for (int i = 0; i < N; ++i) {
                t[i] = launch(kred, RED_BLOCKS * RED_THREADS, RED_THREADS);
                CHECK(clEnqueueReadBuffer(q, dsums, CL_TRUE, 0, sizeof sums, sums, 0, NULL, NULL));
                cl_ulong s = 0;
                for (int b = 0; b < RED_BLOCKS; ++b) s += sums[b];
                if (s != expected) { fprintf(stderr, "reduction mismatch %llu != %llu\n",
                                             (unsigned long long)s, (unsigned long long)expected); return 2; }
            }
            anchor_stats st = anchor_last_half(t, N);
            anchor_print(tag, "reduction", r, st, N, "");
            med_red[nr] = st.median;
        }
        if (all || !strcmp(only, "barrier")) {
            const int N = 20;
            for (int i = 0; i < N; ++i) {
                t[i] = launch(kbar, BAR_BLOCKS * BAR_THREADS, BAR_THREADS);
                cl_int e;
                CHECK(clEnqueueReadBuffer(q, derr, CL_TRUE, 0, sizeof e, &e, 0, NULL, NULL));
                if (e != 0) { fprintf(stderr, "barrier check failed: %d work-items\n", e); return 2; }
            }
            anchor_stats st = anchor_last_half(t, N);
            char extra[96];
            snprintf(extra, sizeof extra, " = %.1f ns per thread-barrier",
                     st.median * 1e6 / ((double)BAR_BLOCKS * BAR_THREADS * BAR_ROUNDS));
            anchor_print(tag, "barrier", r, st, N, extra);
            med_bar[nr] = st.median;
        }
        if (all || !strcmp(only, "empty")) {
            const int N = 200;
            for (int i = 0; i < N; ++i) t[i] = launch(kemp, 1024 * 256, 256);
            anchor_stats st = anchor_last_half(t, N);
            anchor_print(tag, "empty 1024x256", r, st, N, "");
            med_e1[nr] = st.median;
            for (int i = 0; i < N; ++i) t[i] = launch(kemp, 1024, 1024);
            st = anchor_last_half(t, N);
            anchor_print(tag, "empty 1x1024", r, st, N, "");
            med_e2[nr] = st.median;
        }
    }
    if (all || !strcmp(only, "reduction"))
        printf("[%s] SUMMARY reduction: median of %d round medians %.3f ms\n", tag, nr, anchor_median_of(med_red, nr));
    if (all || !strcmp(only, "barrier")) {
        double m = anchor_median_of(med_bar, nr);
        printf("[%s] SUMMARY barrier: median of %d round medians %.3f ms = %.1f ns per thread-barrier\n", tag, nr, m,
               m * 1e6 / ((double)BAR_BLOCKS * BAR_THREADS * BAR_ROUNDS));
    }
    if (all || !strcmp(only, "empty")) {
        printf("[%s] SUMMARY empty 1024x256: median of %d round medians %.3f ms\n", tag, nr, anchor_median_of(med_e1, nr));
        printf("[%s] SUMMARY empty 1x1024: median of %d round medians %.3f ms\n", tag, nr, anchor_median_of(med_e2, nr));
    }
    clReleaseMemObject(din); clReleaseMemObject(dsums); clReleaseMemObject(derr);
    clReleaseKernel(kred); clReleaseKernel(kbar); clReleaseKernel(kemp);
    clReleaseProgram(prog); clReleaseCommandQueue(q); clReleaseContext(ctx);
    free(src); free(host_in);
    return 0;
}
