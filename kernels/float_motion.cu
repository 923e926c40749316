// float_motion: libvmaf's float blur of a reference plane and the per-row f32 sums of |prev - cur|
// of two blurred frames. Specification: src/feature/float_motion/mod.rs (`blur`, `mean_abs_diff`,
// `picture_copy::to_float`). Every step is one rounded f32 operation in the CPU's order
// (__fadd_rn/__fmul_rn/__fdiv_rn, and the fatbin is built with --fmad=false): taps accumulated
// from 0 in tap order, each row's sum from 0 in column order by one thread.
#include "common.cuh"

#define FMOTION_BX 128
// Rows one warp of vmaf_float_motion_sad sums (one per lane), and its column tile.
#define FMOTION_TILE 32

struct FloatMotionBlurArgs {
    SrcPlane src;      // the frame's plane (vertical pass; sample x of a row is element x * step)
    uint64_t tmp;      // float[w * h]: the vertical pass (written by vblur, read by hblur)
    uint64_t dst;      // float[w * h]: the blurred frame (hblur)
    float filter[5];   // the taps, `ntaps` of them (5 or 3)
    int32_t ntaps;
    int32_t w, h;      // the plane's size (libvmaf's chroma size for chroma)
    int32_t step;      // 1, or 2 in an interleaved CbCr plane
    int32_t bpc;
};
static_assert(sizeof(FloatMotionBlurArgs) == 80, "ABI: keep in sync with src/cuda/kernels.rs");

// libvmaf's convolution mirror (float_motion's `mirror`): -i before the start, 2n - i - 2 past
// the end, once (the offsets are at most 2 and every plane has at least 8 samples a side).
VMAF_RS_DEV int fmotion_mirror(int i, int n) {
    if (i < 0) return -i;
    if (i >= n) return 2 * n - i - 2;
    return i;
}

// picture_copy's sample: (float)v, divided by 4, 16 or 256 above 8 bits (an f32 division), then
// + (-128) (an f32 addition).
template <typename T>
VMAF_RS_DEV float fmotion_sample(const FloatMotionBlurArgs &a, int x, int y) {
    const float v = (float)load_px<T>(a.src, x * a.step, y);
    if (sizeof(T) == 1) return __fadd_rn(v, -128.0f);
    const float scaler = a.bpc == 10 ? 4.0f : a.bpc == 12 ? 16.0f : 256.0f;
    return __fadd_rn(__fdiv_rn(v, scaler), -128.0f);
}

// grid (ceil(w / 128), h), block 128: tmp[i][x] = sum_k filter[k] * pic[mirror(i - r + k)][x].
template <typename T>
__device__ void fmotion_vblur_impl(const FloatMotionBlurArgs &a) {
    const int x = blockIdx.x * FMOTION_BX + threadIdx.x;
    const int i = blockIdx.y;
    if (x >= a.w) return;
    const int r = a.ntaps / 2;
    float acc = 0.0f;
    for (int k = 0; k < a.ntaps; ++k) {
        const int y = fmotion_mirror(i - r + k, a.h);
        acc = __fadd_rn(acc, __fmul_rn(a.filter[k], fmotion_sample<T>(a, x, y)));
    }
    reinterpret_cast<float *>(a.tmp)[(size_t)i * a.w + x] = acc;
}

extern "C" __global__ void __launch_bounds__(FMOTION_BX)
    vmaf_float_motion_vblur_u8(FloatMotionBlurArgs a) {
    fmotion_vblur_impl<uint8_t>(a);
}
extern "C" __global__ void __launch_bounds__(FMOTION_BX)
    vmaf_float_motion_vblur_u16(FloatMotionBlurArgs a) {
    fmotion_vblur_impl<uint16_t>(a);
}

// grid (ceil(w / 128), h), block 128: dst[i][j] = sum_k filter[k] * tmp[i][mirror(j - r + k)].
extern "C" __global__ void __launch_bounds__(FMOTION_BX)
    vmaf_float_motion_hblur(FloatMotionBlurArgs a) {
    const int j = blockIdx.x * FMOTION_BX + threadIdx.x;
    const int i = blockIdx.y;
    if (j >= a.w) return;
    const int r = a.ntaps / 2;
    const float *row = reinterpret_cast<const float *>(a.tmp) + (size_t)i * a.w;
    float acc = 0.0f;
    for (int k = 0; k < a.ntaps; ++k) {
        acc = __fadd_rn(acc, __fmul_rn(a.filter[k], row[fmotion_mirror(j - r + k, a.w)]));
    }
    reinterpret_cast<float *>(a.dst)[(size_t)i * a.w + j] = acc;
}

struct FloatMotionSadArgs {
    uint64_t prev;   // float[w * h]: the previous frame's blurred plane
    uint64_t cur;    // float[w * h]: this frame's
    uint64_t out;    // uint64_t[h] result slots: row i's f32 sum (its bits in the low 32 bits)
    int32_t w, h;
};
static_assert(sizeof(FloatMotionSadArgs) == 32, "ABI: keep in sync with src/cuda/kernels.rs");

// grid ceil(h / 128), block 128 (4 warps of 32 rows). A warp stages |prev - cur| of its 32 rows
// a 32-column tile at a time in shared memory (coalesced loads), then lane l adds row l's tile
// from left to right: the CPU's sequential f32 row sum, `line += |prev - cur|` from 0.
extern "C" __global__ void __launch_bounds__(FMOTION_BX) vmaf_float_motion_sad(FloatMotionSadArgs a) {
    __shared__ float tile[FMOTION_BX / 32][FMOTION_TILE][FMOTION_TILE + 1];
    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.x >> 5;
    const int row0 = (blockIdx.x * (FMOTION_BX / 32) + warp) * FMOTION_TILE;
    const float *prev = reinterpret_cast<const float *>(a.prev);
    const float *cur = reinterpret_cast<const float *>(a.cur);
    float(*t)[FMOTION_TILE + 1] = tile[warp];
    float line = 0.0f;
    for (int x0 = 0; x0 < a.w; x0 += FMOTION_TILE) {
        const int x = x0 + lane;
        for (int rr = 0; rr < FMOTION_TILE; ++rr) {
            const int y = row0 + rr;
            float d = 0.0f;
            if (y < a.h && x < a.w) {
                const size_t at = (size_t)y * a.w + x;
                d = fabsf(__fsub_rn(prev[at], cur[at]));
            }
            t[rr][lane] = d;
        }
        __syncwarp();
        const int n = min(FMOTION_TILE, a.w - x0);
        for (int c = 0; c < n; ++c) line = __fadd_rn(line, t[lane][c]);
        __syncwarp();  // the tile is rewritten next
    }
    const int y = row0 + lane;
    if (y < a.h) {
        reinterpret_cast<unsigned long long *>(a.out)[y] = (unsigned long long)__float_as_uint(line);
    }
}
