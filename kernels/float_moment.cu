// float_moment: the sums of libvmaf's first and second moments of the reference and distorted
// luma. Specification: src/feature/float_moment (`moments` over picture_copy's `f32` samples).
//
// The CPU adds each `f32` sample v / 2^k (k = 0, 2, 4, 8 at 8, 10, 12, 16 bits) and its `f32`
// square in `f64`, in raster order. Every such term is an integer number of units (2^-k for the
// samples, 2^-2k for the squares: the square of a multiple of 2^-k, rounded to 24 bits or not, is
// a multiple of 2^-2k), all terms are >= 0, so while the total stays below 2^53 units every
// partial sum is exact and the f64 sum equals the integer sum in any order. The kernel therefore
// sums units in u64 (atomics, order-free); the host divides by the powers of two and the pixel
// count with the CPU module's function, and declines pictures whose total could reach 2^53 units
// (src/cuda/plans/float_moment.rs).
#include "common.cuh"

#define FMOMENT_BX 128
// Rows per block: each thread sums its column over this many rows before the block reductions.
#define FMOMENT_ROWS 8

struct FloatMomentArgs {
    SrcPlane reference;
    SrcPlane distorted;
    uint64_t out;        // 4 uint64_t result slots += ref Σ v, dis Σ v, ref Σ v², dis Σ v² (units)
    int32_t w, h;        // luma size
    int32_t scale_log2;  // k: picture_copy divides by 2^k (0 for 8-bit samples)
    int32_t pad_;
};
static_assert(sizeof(FloatMomentArgs) == 72, "ABI: keep in sync with src/cuda/kernels.rs");

// One sample's terms in units: the raw sample (v / 2^k is exact: v < 2^16) and the CPU's `f32`
// square of v / 2^k scaled by 2^2k (exact: a power of two, the value stays below 2^32).
template <typename T>
VMAF_RS_DEV void moment_terms(const SrcPlane &p, int x, int y, float scale, float scale_sq,
                              unsigned long long &s1, unsigned long long &s2) {
    const uint32_t v = load_px<T>(p, x, y);
    const float f = __fdiv_rn((float)v, scale);
    const float sq = __fmul_rn(f, f);
    s1 += v;
    s2 += (unsigned long long)__fmul_rn(sq, scale_sq);
}

// grid (ceil(w / 128), ceil(h / FMOMENT_ROWS)), block 128.
template <typename T>
__device__ void float_moment_impl(const FloatMomentArgs &a) {
    __shared__ unsigned long long scratch[32];
    const int x = blockIdx.x * FMOMENT_BX + threadIdx.x;
    const int y0 = blockIdx.y * FMOMENT_ROWS;
    const int y1 = min(y0 + FMOMENT_ROWS, a.h);
    const float scale = (float)(1 << a.scale_log2);
    const float scale_sq = (float)(1 << (2 * a.scale_log2));
    unsigned long long s[4] = {0, 0, 0, 0};  // ref Σ v, dis Σ v, ref Σ v², dis Σ v²
    if (x < a.w) {
        for (int y = y0; y < y1; ++y) {
            moment_terms<T>(a.reference, x, y, scale, scale_sq, s[0], s[2]);
            moment_terms<T>(a.distorted, x, y, scale, scale_sq, s[1], s[3]);
        }
    }
    unsigned long long *out = reinterpret_cast<unsigned long long *>(a.out);
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        const unsigned long long t = block_sum_u64(s[i], scratch);
        if (threadIdx.x == 0 && t != 0) atomicAdd(out + i, t);
    }
}

extern "C" __global__ void __launch_bounds__(FMOMENT_BX) vmaf_float_moment_u8(FloatMomentArgs a) {
    float_moment_impl<uint8_t>(a);
}
extern "C" __global__ void __launch_bounds__(FMOMENT_BX) vmaf_float_moment_u16(FloatMomentArgs a) {
    float_moment_impl<uint16_t>(a);
}
