// Shared device helpers for the vmaf_rs kernels (see kernels/README.md for the kernel ABI).
//
// Every kernel here reproduces an integer CPU kernel of vmaf_rs bit for bit (the CPU scalar code is
// the specification). Rules followed throughout:
//   * integer arithmetic with the CPU's widths; where the CPU wraps (u32 sums, C's int32 products)
//     we compute in unsigned types of the same width, so wrapping is defined here too;
//   * reductions are integer sums (u64 atomics, associative and commutative modulo 2^64), so the
//     result does not depend on block or thread order;
//   * the few floating-point steps inside kernels use explicit round-to-nearest intrinsics and the
//     fatbin is compiled with --fmad=false, so nothing is contracted into an FMA.
#pragma once
#include <stdint.h>

#define VMAF_RS_DEV static __device__ __forceinline__

// A borrowed luma plane (or one of our own buffers): base pointer, pitch in bytes, right shift
// applied to every sample (MSB-aligned formats such as p010 store samples `shift` bits up).
struct SrcPlane {
    uint64_t ptr;
    uint64_t pitch;
    int32_t shift;
    int32_t pad_;
};
static_assert(sizeof(SrcPlane) == 24, "ABI: keep in sync with src/cuda/kernels.rs");

template <typename T>
VMAF_RS_DEV uint32_t load_px(const SrcPlane &p, int x, int y) {
    const T *row = reinterpret_cast<const T *>(reinterpret_cast<const uint8_t *>(p.ptr) +
                                               (uint64_t)y * p.pitch);
    return ((uint32_t)__ldg(row + x)) >> p.shift;
}

// Reflection about the first and last sample, iterated (index -i -> i, n-1+i -> n-1-i). This is the
// row rule of VIF's padding and, for offsets smaller than n, motion's mirror.
VMAF_RS_DEV int mirror_iter(int i, int n) {
    if (n < 2) return 0;
    for (;;) {
        if (i < 0) i = -i;
        else if (i >= n) i = 2 * (n - 1) - i;
        else return i;
    }
}

// Warp + block sum of a 64-bit value; thread 0 gets the block total. `scratch` holds 32 entries.
VMAF_RS_DEV unsigned long long warp_sum_u64(unsigned long long v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    return v;
}

VMAF_RS_DEV unsigned long long block_sum_u64(unsigned long long v, unsigned long long *scratch) {
    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.x >> 5;
    const int nwarps = (blockDim.x + 31) >> 5;
    v = warp_sum_u64(v);
    __syncthreads();  // scratch may still be read by a previous call
    if (lane == 0) scratch[warp] = v;
    __syncthreads();
    unsigned long long t = 0;
    if (warp == 0) {
        t = lane < nwarps ? scratch[lane] : 0ull;
        t = warp_sum_u64(t);
    }
    return t;  // valid in thread 0
}

VMAF_RS_DEV uint32_t warp_sum_u32(uint32_t v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    return v;
}

// Signed 64-bit values summed as their two's-complement bit patterns (exact modulo 2^64).
VMAF_RS_DEV void atomic_add_i64(long long *dst, long long v) {
    atomicAdd(reinterpret_cast<unsigned long long *>(dst), (unsigned long long)v);
}

// Arithmetic right shift of a signed 64-bit value (C's >> on negative int64 on every compiler we
// target, and Rust's >> on i64).
VMAF_RS_DEV long long asr64(long long v, unsigned s) { return v >> s; }
VMAF_RS_DEV int32_t asr32(int32_t v, unsigned s) { return v >> s; }

// C's conversion of an in-range double to an integer type: truncation toward zero. Out-of-range
// values saturate (as Rust's `as` does).
VMAF_RS_DEV int32_t d2i_trunc(double v) { return __double2int_rz(v); }
VMAF_RS_DEV long long d2ll_trunc(double v) { return __double2ll_rz(v); }

// One rounding step of a running sum of f32 terms: in f32, or with the term widened to double.
VMAF_RS_DEV float ordered_add(float acc, float t) { return __fadd_rn(acc, t); }
VMAF_RS_DEV double ordered_add(double acc, float t) { return __dadd_rn(acc, (double)t); }

// The CPU's sequential `acc += term` over `n` f32 terms, from 0, in order: thread 0 adds them one
// at a time while threads 32.. stage the next tile of `buf` (shared memory, double-buffered).
// Every thread of the block (THREADS of them) calls it; the sum is valid in thread 0.
template <typename Acc, int THREADS, int TILE>
VMAF_RS_DEV Acc ordered_sum(const float *terms, int n, float (*buf)[TILE]) {
    const int tid = threadIdx.x;
    const int tiles = (n + TILE - 1) / TILE;
    auto load = [&](int k, int b, int first, int step) {
        const int base = k * TILE;
        const int cnt = min(TILE, n - base);
        for (int j = first; j < cnt; j += step) buf[b][j] = terms[(size_t)base + j];
    };
    if (tiles > 0) load(0, 0, tid, THREADS);
    __syncthreads();
    Acc ret = 0;
    for (int k = 0; k < tiles; ++k) {
        const int b = k & 1;
        if (tid == 0) {
            const int cnt = min(TILE, n - k * TILE);
            const float *t = buf[b];
#pragma unroll 8
            for (int j = 0; j < cnt; ++j) ret = ordered_add(ret, t[j]);
        } else if (tid >= 32 && k + 1 < tiles) {
            load(k + 1, b ^ 1, tid - 32, THREADS - 32);
        }
        __syncthreads();
    }
    return ret;
}
