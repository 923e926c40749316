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

// grid (ceil(w / 128), ceil(h / PSNR_ROWS)), block 128. Every term (a - b)^2 fits 32 bits; the
// sum is a u64 sum like the CPU's, so block order does not matter (exact modulo 2^64).
template <typename T>
__device__ void psnr_sse_impl(const PsnrArgs &a) {
    __shared__ unsigned long long scratch[32];
    const int x = blockIdx.x * PSNR_BX + threadIdx.x;
    const int y0 = blockIdx.y * PSNR_ROWS;
    const int y1 = min(y0 + PSNR_ROWS, a.h);
    unsigned long long s = 0;
    if (x < a.w) {
        for (int y = y0; y < y1; ++y) {
            const uint32_t r = load_px<T>(a.reference, x * a.step, y);
            const uint32_t d = load_px<T>(a.distorted, x * a.step, y);
            const uint32_t e = r > d ? r - d : d - r;
            s += (unsigned long long)e * e;
        }
    }
    s = block_sum_u64(s, scratch);
    if (threadIdx.x == 0 && s != 0) atomicAdd(reinterpret_cast<unsigned long long *>(a.out), s);
}

extern "C" __global__ void __launch_bounds__(PSNR_BX) vmaf_psnr_sse_u8(PsnrArgs a) {
    psnr_sse_impl<uint8_t>(a);
}
extern "C" __global__ void __launch_bounds__(PSNR_BX) vmaf_psnr_sse_u16(PsnrArgs a) {
    psnr_sse_impl<uint16_t>(a);
}

// float_psnr at 16 bits (src/feature/float_psnr): each sample divided by 256 in f32 (exact), the
// difference (exact) squared in f32 -- rounded, as on the CPU -- and that square, a multiple of
// 2^-16 below 2^16, summed exactly as an integer count of 2^-16 units. The host turns the sum
// back into the CPU's f64 sum, which is exact too while the total stays below 2^53 units
// (guaranteed for pictures of at most 2^21 samples; larger ones run on the CPU).
extern "C" __global__ void __launch_bounds__(PSNR_BX) vmaf_float_psnr_sq_u16(PsnrArgs a) {
    __shared__ unsigned long long scratch[32];
    const int x = blockIdx.x * PSNR_BX + threadIdx.x;
    const int y0 = blockIdx.y * PSNR_ROWS;
    const int y1 = min(y0 + PSNR_ROWS, a.h);
    unsigned long long s = 0;
    if (x < a.w) {
        for (int y = y0; y < y1; ++y) {
            const float r = __fdiv_rn((float)load_px<uint16_t>(a.reference, x * a.step, y), 256.0f);
            const float d = __fdiv_rn((float)load_px<uint16_t>(a.distorted, x * a.step, y), 256.0f);
            const float diff = __fsub_rn(r, d);
            const float sq = __fmul_rn(diff, diff);
            s += (unsigned long long)__fmul_rn(sq, 65536.0f);
        }
    }
    s = block_sum_u64(s, scratch);
    if (threadIdx.x == 0 && s != 0) atomicAdd(reinterpret_cast<unsigned long long *>(a.out), s);
}
