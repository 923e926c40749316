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

// Rows per block and threads per block (kernels.rs MOTION_ROWS, MOTION_THREADS: the vertical
// pass's MOTION_BX + 4 columns in whole warps).
#define MOTION_ROWS 8
#define MOTION_THREADS 160

template <typename T> struct MotionAcc { typedef long long A; };
// 8-bit: every vertically filtered value is at most 2^16 * 255 in magnitude, exact in 32 bits
// (the horizontal sums are not: they stay 64-bit).
template <> struct MotionAcc<uint8_t> { typedef int32_t A; };

// grid (ceil(w / 128), ceil(h / MOTION_ROWS)), block MOTION_THREADS. Rows [MOTION_ROWS *
// blockIdx.y, +MOTION_ROWS), columns [x0, x0 + 128): vertical blur of prev - cur (rounded by bpc
// bits) for the needed columns into shared memory, each input row loaded once for the output
// rows it feeds; horizontal blur (rounded by 16 bits), |.| summed per row in u32 (wrapping, like
// the CPU's `row_sad`).
template <typename T>
__device__ void motion_sad_impl(const MotionArgs &a) {
    typedef typename MotionAcc<T>::A A;
    constexpr int R = MOTION_ROWS;
    static_assert(MOTION_BX + 4 <= MOTION_THREADS, "one thread per vertical-pass column");
    __shared__ int32_t ys[R][MOTION_BX + 4];
    const int i0 = blockIdx.y * R;
    const int nr = min(R, a.h - i0);
    const int x0 = blockIdx.x * MOTION_BX;
    const int n = min(MOTION_BX, a.w - x0);
    const int t = threadIdx.x;
    const A y_round = (A)1 << (a.bpc - 1);
    if (t < n + 4) {
        const int x = mirror_iter(x0 - 2 + t, a.w);
        A acc[R];
#pragma unroll
        for (int r = 0; r < R; ++r) acc[r] = 0;
#pragma unroll
        for (int y = 0; y < R + 4; ++y) {
            const int row = mirror_iter(i0 - 2 + y, a.h);
            const A d = (A)load_px<T>(a.prev, x, row) - (A)load_px<T>(a.cur, x, row);
#pragma unroll
            for (int r = 0; r < R; ++r) {
                const int k = y - r;
                if (k >= 0 && k < 5) acc[r] += (A)MOTION_FILTER[k] * d;
            }
        }
#pragma unroll
        for (int r = 0; r < R; ++r) ys[r][t] = (int32_t)((acc[r] + y_round) >> a.bpc);
    }
    __syncthreads();
    for (int r = 0; r < nr; ++r) {
        uint32_t v = 0;
        if (t < n) {
            // 64-bit even for 8-bit input: |ys| reaches 65280, and 2^16 * 65280 overflows int32.
            long long acc = 0;
#pragma unroll
            for (int k = 0; k < 5; ++k) acc += (long long)MOTION_FILTER[k] * ys[r][t + k];
            const int32_t b = (int32_t)((acc + (1 << 15)) >> 16);
            v = b < 0 ? (uint32_t)0 - (uint32_t)b : (uint32_t)b;
        }
        v = warp_sum_u32(v);
        if ((t & 31) == 0 && v != 0) atomicAdd(reinterpret_cast<uint32_t *>(a.row_sums) + i0 + r, v);
    }
}

extern "C" __global__ void __launch_bounds__(MOTION_THREADS) vmaf_motion_sad_u8(MotionArgs a) {
    motion_sad_impl<uint8_t>(a);
}
extern "C" __global__ void __launch_bounds__(MOTION_THREADS) vmaf_motion_sad_u16(MotionArgs a) {
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
