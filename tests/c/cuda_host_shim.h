// Just enough of CUDA's device vocabulary for kernels/*.cu's device functions to compile as
// host C++ (g++ -ffp-contract=off): tests/cuda_source_on_host.rs runs ciede's kernel source on
// the CPU this way, so a slip in the device code's transcription of the Rust specification shows
// without a GPU. One "thread" at a time; barriers and warp shuffles are not emulated (the
// kernels that need them are not run here).
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <math.h>

#define __device__
#define __forceinline__ inline
#define __global__
#define __launch_bounds__(x)
#define __shared__ static

struct CudaHostDim3 {
    unsigned x, y, z;
};
static CudaHostDim3 blockIdx, threadIdx, blockDim;

using std::min;
inline long long __double_as_longlong(double d) {
    long long v;
    memcpy(&v, &d, 8);
    return v;
}
inline double __longlong_as_double(long long v) {
    double d;
    memcpy(&d, &v, 8);
    return d;
}
inline unsigned __float_as_uint(float f) {
    unsigned v;
    memcpy(&v, &f, 4);
    return v;
}
template <typename T> T __ldg(const T *p) { return *p; }
inline float __fadd_rn(float a, float b) { return a + b; }
inline double __dadd_rn(double a, double b) { return a + b; }
inline int __double2int_rz(double v) { return (int)v; }
inline long long __double2ll_rz(double v) { return (long long)v; }
inline void __syncthreads() {}
template <typename T> T __shfl_down_sync(unsigned, T v, int) { return v; }
inline unsigned long long atomicAdd(unsigned long long *p, unsigned long long v) {
    const unsigned long long old = *p;
    *p += v;
    return old;
}
