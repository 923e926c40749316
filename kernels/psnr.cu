// PSNR: the sum of squared differences of one plane pair (luma, or one chroma plane, planar or
// interleaved). Specification: src/feature/psnr/scalar.rs (`sse`).
#include "common.cuh"

#define PSNR_BX 128
// Rows per block: each thread sums its column over this many rows before the block reduction.
#define PSNR_ROWS 8

struct PsnrArgs {
    SrcPlane reference;
    SrcPlane distorted;
    uint64_t out;   // uint64_t result slot: += the plane's SSE (zeroed with the result block)
    int32_t w, h;   // the plane's size in samples (libvmaf's chroma size for chroma)
    int32_t step;   // samples between neighbours in a row: 1, or 2 in an interleaved CbCr plane
    int32_t pad_;
};
static_assert(sizeof(PsnrArgs) == 72, "ABI: keep in sync with src/cuda/kernels.rs");

// grid (ceil(w / 128), ceil(h / PSNR_ROWS)), block 128: the u64 sum of `term(r, d)` over the
// plane's samples, added to `out` (a u64 sum, so block order does not matter: exact modulo 2^64).
template <typename T, typename Term>
__device__ void plane_sum(const PsnrArgs &a, Term term) {
    __shared__ unsigned long long scratch[32];
    const int x = blockIdx.x * PSNR_BX + threadIdx.x;
    const int y0 = blockIdx.y * PSNR_ROWS;
    const int y1 = min(y0 + PSNR_ROWS, a.h);
    unsigned long long s = 0;
    if (x < a.w) {
        for (int y = y0; y < y1; ++y)
            s += term(load_px<T>(a.reference, x * a.step, y), load_px<T>(a.distorted, x * a.step, y));
    }
    s = block_sum_u64(s, scratch);
    if (threadIdx.x == 0 && s != 0) atomicAdd(reinterpret_cast<unsigned long long *>(a.out), s);
}

// psnr: (r - d)^2, which fits 32 bits.
struct SquaredError {
    __device__ __forceinline__ unsigned long long operator()(uint32_t r, uint32_t d) const {
        const uint32_t e = r > d ? r - d : d - r;
        return (unsigned long long)e * e;
    }
};

extern "C" __global__ void __launch_bounds__(PSNR_BX) vmaf_psnr_sse_u8(PsnrArgs a) {
    plane_sum<uint8_t>(a, SquaredError());
}
extern "C" __global__ void __launch_bounds__(PSNR_BX) vmaf_psnr_sse_u16(PsnrArgs a) {
    plane_sum<uint16_t>(a, SquaredError());
}

// float_psnr at 16 bits (src/feature/float_psnr): each sample divided by 256 in f32 (exact), the
// difference (exact) squared in f32 -- rounded, as on the CPU -- and that square, a multiple of
// 2^-16 below 2^16, counted exactly as an integer number of 2^-16 units. The host turns the sum
// back into the CPU's f64 sum, which is exact too while the total stays below 2^53 units
// (guaranteed for pictures of at most 2^21 samples; larger ones run on the CPU).
struct FloatSquare16 {
    __device__ __forceinline__ unsigned long long operator()(uint32_t r, uint32_t d) const {
        const float diff = __fsub_rn(__fdiv_rn((float)r, 256.0f), __fdiv_rn((float)d, 256.0f));
        return (unsigned long long)__fmul_rn(__fmul_rn(diff, diff), 65536.0f);
    }
};

extern "C" __global__ void __launch_bounds__(PSNR_BX) vmaf_float_psnr_sq_u16(PsnrArgs a) {
    plane_sum<uint16_t>(a, FloatSquare16());
}
