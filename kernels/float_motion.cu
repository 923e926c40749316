// float_motion: libvmaf's float blur of a reference plane, motion_add_scale1's bilinear halving
// and the per-row f32 sums of |prev - cur| of two blurred (or halved) frames. Specification:
// src/feature/float_motion/mod.rs (`blur`, `mean_abs_diff`, `picture_copy::to_float`) and
// src/feature/scale.rs (the bilinear `Scaler`). Every step is one rounded f32 operation in the CPU's order
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

struct FloatMotionHalfArgs {
    uint64_t src;    // float[h][w]: a blurred frame
    uint64_t dst;    // float[sh][sw]: its bilinear halving (motion_add_scale1)
    float ratio_x;   // (float)w / (float)sw, as the host's scaler computes it
    float ratio_y;   // (float)h / (float)sh
    int32_t w, h, sw, sh;
};
static_assert(sizeof(FloatMotionHalfArgs) == 40, "ABI: keep in sync with src/cuda/kernels.rs");

// The bilinear scaler's mirror (src/feature/scale.rs `mirror`): -i before the start,
// 2 (n - 1) - i past the end.
VMAF_RS_DEV int fmotion_scale_mirror(int i, int n) {
    const int right = n - 1;
    if (i < 0) return -i;
    if (i > right) return 2 * right - i;
    return i;
}

// One output position's bilinear taps (scale.rs `axis`, Method::Bilinear): the position
// (float)(((double)x + 0.5) * (double)ratio - 0.5), its mirrored floor and ceiling, and the
// weight of the second, the position minus the *mirrored* floor.
VMAF_RS_DEV void fmotion_bilinear_taps(int x, float ratio, int n, int &i1, int &i2, float &d) {
    const double p = __dsub_rn(__dmul_rn(__dadd_rn((double)x, 0.5), (double)ratio), 0.5);
    const float xx = __double2float_rn(p);
    i1 = fmotion_scale_mirror((int)floorf(xx), n);
    i2 = fmotion_scale_mirror((int)ceilf(xx), n);
    d = __fsub_rn(xx, (float)i1);
}

// grid (ceil(sw / 128), sh), block 128: scale.rs `Scaler::scale`'s bilinear sum,
// (1-dy)(1-dx) r1[x1] + (1-dy) dx r1[x2] + dy (1-dx) r2[x1] + dy dx r2[x2], left to right.
extern "C" __global__ void __launch_bounds__(FMOTION_BX)
    vmaf_float_motion_half(FloatMotionHalfArgs a) {
    const int x = blockIdx.x * FMOTION_BX + threadIdx.x;
    const int y = blockIdx.y;
    if (x >= a.sw) return;
    int x1, x2, y1, y2;
    float dx, dy;
    fmotion_bilinear_taps(x, a.ratio_x, a.w, x1, x2, dx);
    fmotion_bilinear_taps(y, a.ratio_y, a.h, y1, y2, dy);
    const float *src = reinterpret_cast<const float *>(a.src);
    const float *r1 = src + (size_t)y1 * a.w;
    const float *r2 = src + (size_t)y2 * a.w;
    const float ody = __fsub_rn(1.0f, dy);
    const float odx = __fsub_rn(1.0f, dx);
    const float t1 = __fmul_rn(__fmul_rn(ody, odx), r1[x1]);
    const float t2 = __fmul_rn(__fmul_rn(ody, dx), r1[x2]);
    const float t3 = __fmul_rn(__fmul_rn(dy, odx), r2[x1]);
    const float t4 = __fmul_rn(__fmul_rn(dy, dx), r2[x2]);
    reinterpret_cast<float *>(a.dst)[(size_t)y * a.sw + x] =
        __fadd_rn(__fadd_rn(__fadd_rn(t1, t2), t3), t4);
}
