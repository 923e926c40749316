// Integer motion: SAD of the 5-tap blur of the difference of two reference frames.
// Specification: src/feature/motion/scalar.rs (`blurred_diff_sad`).
#include "common.cuh"

// libvmaf's 5-tap Gaussian (integer_motion.h), sum 65536; same as motion::scalar::FILTER.
__constant__ int32_t MOTION_FILTER[5] = {3571, 16004, 26386, 16004, 3571};

#define MOTION_BX 128

struct MotionArgs {
    SrcPlane prev;       // previous (or, five-frame mode, one-before-previous) reference luma
    SrcPlane cur;        // current reference luma
    uint64_t row_sums;   // uint32_t[h]: per-row SAD, zeroed before the launch
    int32_t w, h, bpc, pad_;
};
static_assert(sizeof(MotionArgs) == 72, "ABI: keep in sync with src/cuda/kernels.rs");

// grid (ceil(w / 128), h), block 128. Row i, columns [x0, x0 + 128): vertical blur of prev - cur
// (rounded by bpc bits) for the needed columns into shared memory, horizontal blur (rounded by 16
// bits), |.| summed per row in u32 (wrapping, like the CPU's `row_sad`).
template <typename T>
__device__ void motion_sad_impl(const MotionArgs &a) {
    __shared__ int32_t ys[MOTION_BX + 4];
    const int i = blockIdx.y;
    const int x0 = blockIdx.x * MOTION_BX;
    const int n = min(MOTION_BX, a.w - x0);
    int rows[5];
#pragma unroll
    for (int k = 0; k < 5; ++k) rows[k] = mirror_iter(i - 2 + k, a.h);
    const long long y_round = 1ll << (a.bpc - 1);
    for (int t = threadIdx.x; t < n + 4; t += blockDim.x) {
        const int x = mirror_iter(x0 - 2 + t, a.w);
        long long acc = 0;
#pragma unroll
        for (int k = 0; k < 5; ++k) {
            const long long d =
                (long long)load_px<T>(a.prev, x, rows[k]) - (long long)load_px<T>(a.cur, x, rows[k]);
            acc += (long long)MOTION_FILTER[k] * d;
        }
        ys[t] = (int32_t)((acc + y_round) >> a.bpc);
    }
    __syncthreads();
    uint32_t v = 0;
    if ((int)threadIdx.x < n) {
        long long acc = 0;
#pragma unroll
        for (int k = 0; k < 5; ++k) acc += (long long)MOTION_FILTER[k] * (long long)ys[threadIdx.x + k];
        const int32_t b = (int32_t)((acc + (1ll << 15)) >> 16);
        v = b < 0 ? (uint32_t)0 - (uint32_t)b : (uint32_t)b;
    }
    v = warp_sum_u32(v);
    if ((threadIdx.x & 31) == 0 && v != 0) atomicAdd(reinterpret_cast<uint32_t *>(a.row_sums) + i, v);
}

extern "C" __global__ void __launch_bounds__(MOTION_BX) vmaf_motion_sad_u8(MotionArgs a) {
    motion_sad_impl<uint8_t>(a);
}
extern "C" __global__ void __launch_bounds__(MOTION_BX) vmaf_motion_sad_u16(MotionArgs a) {
    motion_sad_impl<uint16_t>(a);
}

struct MotionFinishArgs {
    uint64_t row_sums;  // uint32_t[h]
    uint64_t out;       // uint64_t: the frame's SAD
    int32_t h, pad_;
};
static_assert(sizeof(MotionFinishArgs) == 24, "ABI: keep in sync with src/cuda/kernels.rs");

// grid 1, block 256: the 64-bit total of the per-row u32 sums.
extern "C" __global__ void __launch_bounds__(256) vmaf_motion_finish(MotionFinishArgs a) {
    __shared__ unsigned long long scratch[32];
    const uint32_t *rows = reinterpret_cast<const uint32_t *>(a.row_sums);
    unsigned long long s = 0;
    for (int i = threadIdx.x; i < a.h; i += blockDim.x) s += rows[i];
    s = block_sum_u64(s, scratch);
    if (threadIdx.x == 0) *reinterpret_cast<unsigned long long *>(a.out) = s;
}
