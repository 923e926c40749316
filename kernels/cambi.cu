// cambi: libvmaf's banding index of one picture up to its per-pixel c-values. Specification:
// src/feature/cambi (`preprocess::{validate, to_10bit, anti_dither}`, `mask::spatial_mask`,
// `filter::{decimate, filter_mode}`, `cvalues::c_values`).
//
// Everything before the c-value is integer. The CPU works in place on two persistent pictures
// (`image`, `mask`, `stride` samples a row); the kernels keep the same two buffers with the same
// contents after every step: each in-place CPU step, whose reads all see the step's input (see
// the CPU comments), is a gather into the packed `tmp` followed by a write-back of exactly the
// positions the CPU writes. The histograms are exact box counts (any order); the c-value is the
// CPU's f32 expression (__int2float_rn, __fmul_rn, strict `>`). Pooling (quickselect and the
// f64 sums) is the host's, with the CPU's functions, over the c-values this writes.
#include "common.cuh"

#define CAMBI_BX 128
// Side of the spatial mask's window (libvmaf's MASK_FILTER_SIZE).
#define CAMBI_MASK_FILTER 7

struct CambiPrepArgs {
    SrcPlane src;       // the frame's luma
    uint64_t image;     // u16 working picture
    uint64_t xs, ys;    // int32 nearest-neighbour maps (target column/row -> input), 0: none
    uint64_t flag;      // u64 result slot += samples above `max` (validate)
    int32_t in_w, in_h; // the input's size
    int32_t w, h;       // the target's size
    int32_t dst_stride; // samples a row of `image` as written (libvmaf's memcpy: the input's)
    int32_t row_len;    // samples written a row (x >= w get 0)
    int32_t bpc;
    int32_t max;        // largest valid sample
};
static_assert(sizeof(CambiPrepArgs) == 88, "ABI: keep in sync with src/cuda/kernels.rs");

struct CambiPlaneArgs {
    uint64_t src;
    uint64_t dst;
    int32_t src_stride, dst_stride;  // samples a row
    int32_t w, h;                    // the output's size
    int32_t factor;                  // gather: 1 (copy) or 2 (decimation)
    int32_t index;                   // mask: the count a window must exceed
};
static_assert(sizeof(CambiPlaneArgs) == 40, "ABI: keep in sync with src/cuda/kernels.rs");

struct CambiCvalArgs {
    uint64_t image, mask;  // u16, `stride` samples a row
    uint64_t hist;         // u16 [chunks][size][w]
    uint64_t active;       // u32 [size]: steps that count per band row
    uint64_t lut;          // f32 reciprocal table
    uint64_t out;          // f32 [h][w]
    int32_t stride, w, h, pad;
    int32_t base, size;    // the band
    int32_t rows;          // rows per chunk (blockIdx.y)
    int32_t pad_;
    int32_t weights[32];   // contrast weight per step
};
static_assert(sizeof(CambiCvalArgs) == 208, "ABI: keep in sync with src/cuda/kernels.rs");

// grid (ceil(in_w / 128), in_h): counts 16-bit samples above the depth's maximum (the CPU refuses
// the picture then; the plan turns a non-zero count into NaN scores).
extern "C" __global__ void __launch_bounds__(CAMBI_BX) vmaf_cambi_validate_u16(CambiPrepArgs a) {
    const int x = blockIdx.x * CAMBI_BX + threadIdx.x;
    const int y = blockIdx.y;
    if (x >= a.in_w) return;
    if (load_px<uint16_t>(a.src, x, y) > (uint32_t)a.max)
        atomicAdd(reinterpret_cast<unsigned long long *>(a.flag), 1ull);
}

// `to_10bit`'s conversion of one sample.
VMAF_RS_DEV uint16_t cambi_conv(uint32_t v, int bpc) {
    if (bpc == 8) return (uint16_t)(v << 2);
    if (bpc == 9) return (uint16_t)(v << 1);
    const uint32_t round = bpc == 10 ? 0u : 1u << (bpc - 11);
    return (uint16_t)((v + round) >> (bpc - 10));
}

// grid (ceil(row_len / 128), h): image[y * dst_stride + x] = conv(input[ys[y]][xs[x]]), 0 for
// w <= x < row_len (libvmaf's zeroed row padding, copied with its unscaled 10-bit rows).
template <typename T>
__device__ void cambi_to10_impl(const CambiPrepArgs &a) {
    const int x = blockIdx.x * CAMBI_BX + threadIdx.x;
    const int y = blockIdx.y;
    if (x >= a.row_len) return;
    uint16_t v = 0;
    if (x < a.w) {
        const int sx = a.xs ? reinterpret_cast<const int32_t *>(a.xs)[x] : x;
        const int sy = a.ys ? reinterpret_cast<const int32_t *>(a.ys)[y] : y;
        v = cambi_conv(load_px<T>(a.src, sx, sy), a.bpc);
    }
    reinterpret_cast<uint16_t *>(a.image)[(size_t)y * a.dst_stride + x] = v;
}

extern "C" __global__ void __launch_bounds__(CAMBI_BX) vmaf_cambi_to10_u8(CambiPrepArgs a) {
    cambi_to10_impl<uint8_t>(a);
}
extern "C" __global__ void __launch_bounds__(CAMBI_BX) vmaf_cambi_to10_u16(CambiPrepArgs a) {
    cambi_to10_impl<uint16_t>(a);
}

// grid (ceil(w / 128), h): `anti_dither` out of place (it reads original samples only): the
// truncated mean of the 2x2 block a sample starts, 1x2 / 2x1 on the last column / row; the last
// sample stays.
extern "C" __global__ void __launch_bounds__(CAMBI_BX) vmaf_cambi_antidither(CambiPlaneArgs a) {
    const int x = blockIdx.x * CAMBI_BX + threadIdx.x;
    const int y = blockIdx.y;
    if (x >= a.w) return;
    const uint16_t *s = reinterpret_cast<const uint16_t *>(a.src);
    const uint16_t *top = s + (size_t)y * a.src_stride;
    uint32_t v;
    if (y + 1 < a.h) {
        const uint16_t *bottom = top + a.src_stride;
        if (x + 1 < a.w)
            v = ((uint32_t)top[x] + top[x + 1] + bottom[x] + bottom[x + 1]) >> 2;
        else
            v = ((uint32_t)top[x] + bottom[x]) >> 1;
    } else if (x + 1 < a.w) {
        v = ((uint32_t)top[x] + top[x + 1]) >> 1;
    } else {
        v = top[x];
    }
    reinterpret_cast<uint16_t *>(a.dst)[(size_t)y * a.dst_stride + x] = (uint16_t)v;
}

// grid (ceil(w / 128), h): dst[y][x] = src[factor * y][factor * x] (a copy, or `decimate`
// out of place: its reads never see its writes).
extern "C" __global__ void __launch_bounds__(CAMBI_BX) vmaf_cambi_gather(CambiPlaneArgs a) {
    const int x = blockIdx.x * CAMBI_BX + threadIdx.x;
    const int y = blockIdx.y;
    if (x >= a.w) return;
    const uint16_t *s = reinterpret_cast<const uint16_t *>(a.src);
    reinterpret_cast<uint16_t *>(a.dst)[(size_t)y * a.dst_stride + x] =
        s[(size_t)a.factor * y * a.src_stride + (size_t)a.factor * x];
}

// grid (ceil(w / 128), h): the zero-derivative flag of `mask::derivative_row` (u8, packed, w a
// row): equal to the right and lower neighbours, which count as equal past the last column / row.
extern "C" __global__ void __launch_bounds__(CAMBI_BX) vmaf_cambi_deriv(CambiPlaneArgs a) {
    const int x = blockIdx.x * CAMBI_BX + threadIdx.x;
    const int y = blockIdx.y;
    if (x >= a.w) return;
    const uint16_t *row = reinterpret_cast<const uint16_t *>(a.src) + (size_t)y * a.src_stride;
    const uint16_t v = row[x];
    const bool right = x + 1 == a.w || v == row[x + 1];
    const bool below = y + 1 == a.h || v == row[a.src_stride + x];
    reinterpret_cast<uint8_t *>(a.dst)[(size_t)y * a.w + x] = (uint8_t)(right && below);
}

// grid (ceil(w / 128), h): mask[y][x] = (the flags in the 7x7 window, zero outside, > index).
extern "C" __global__ void __launch_bounds__(CAMBI_BX) vmaf_cambi_mask(CambiPlaneArgs a) {
    const int x = blockIdx.x * CAMBI_BX + threadIdx.x;
    const int y = blockIdx.y;
    if (x >= a.w) return;
    const int r = CAMBI_MASK_FILTER / 2;
    const uint8_t *d = reinterpret_cast<const uint8_t *>(a.src);
    const int x0 = max(x - r, 0), x1 = min(x + r, a.w - 1);
    const int y0 = max(y - r, 0), y1 = min(y + r, a.h - 1);
    uint32_t sum = 0;
    for (int i = y0; i <= y1; ++i)
        for (int j = x0; j <= x1; ++j) sum += d[(size_t)i * a.w + j];
    reinterpret_cast<uint16_t *>(a.dst)[(size_t)y * a.dst_stride + x] =
        (uint16_t)(sum > (uint32_t)a.index);
}

// libvmaf's mode3: the repeated value of three, else their minimum (symmetric).
VMAF_RS_DEV uint16_t cambi_mode3(uint16_t a, uint16_t b, uint16_t c) {
    if (a == b || a == c) return a;
    if (b == c) return b;
    return min(min(a, b), c);
}

// The horizontal mode3 of `filter_mode` (the first and last column kept).
VMAF_RS_DEV uint16_t cambi_hmode(const uint16_t *row, int x, int w) {
    if (x == 0 || x == w - 1) return row[x];
    return cambi_mode3(row[x - 1], row[x], row[x + 1]);
}

// grid (ceil(w / 128), h): `filter_mode` from the packed picture `src` (w a row) into `dst`:
// rows 1..h-2 the vertical mode3 of the horizontal ones, the first and last rows copied.
extern "C" __global__ void __launch_bounds__(CAMBI_BX) vmaf_cambi_filter(CambiPlaneArgs a) {
    const int x = blockIdx.x * CAMBI_BX + threadIdx.x;
    const int y = blockIdx.y;
    if (x >= a.w) return;
    const uint16_t *s = reinterpret_cast<const uint16_t *>(a.src);
    const uint16_t *row = s + (size_t)y * a.w;
    uint16_t v;
    if (y == 0 || y == a.h - 1) {
        v = row[x];
    } else {
        v = cambi_mode3(cambi_hmode(row - a.w, x, a.w), cambi_hmode(row, x, a.w),
                        cambi_hmode(row + a.w, x, a.w));
    }
    reinterpret_cast<uint16_t *>(a.dst)[(size_t)y * a.dst_stride + x] = v;
}

// Adds `delta` (1 or 0xffff, wrapping) to column x's histogram for the masked in-band pixels of
// row i within `pad` columns of x.
VMAF_RS_DEV void cambi_hist_row(const CambiCvalArgs &a, uint16_t *col, int x, int i,
                                uint16_t delta) {
    const uint16_t *img = reinterpret_cast<const uint16_t *>(a.image) + (size_t)i * a.stride;
    const uint16_t *msk = reinterpret_cast<const uint16_t *>(a.mask) + (size_t)i * a.stride;
    const int j0 = max(x - a.pad, 0), j1 = min(x + a.pad, a.w - 1);
    for (int j = j0; j <= j1; ++j) {
        if (msk[j] == 0) continue;
        const uint16_t r = (uint16_t)(img[j] - (uint16_t)a.base);
        if (r < (uint16_t)a.size) col[(size_t)r * a.w] = (uint16_t)(col[(size_t)r * a.w] + delta);
    }
}

// grid (ceil(w / 128), chunks), block 128: thread (x, chunk) computes the c-values of column x
// for rows [chunk * rows, min((chunk + 1) * rows, h)), sliding its own column's histograms (the
// counts per band value of the masked pixels in the window, `hist[chunk][r][x]`) down the rows.
// The counts equal the CPU's (integers, window clipped to the picture); the c-value is
// `cvalues::c_value`'s f32 expression.
extern "C" __global__ void __launch_bounds__(CAMBI_BX) vmaf_cambi_cvalues(CambiCvalArgs a) {
    const int x = blockIdx.x * CAMBI_BX + threadIdx.x;
    const int y0 = blockIdx.y * a.rows;
    if (x >= a.w || y0 >= a.h) return;
    const int y1 = min(y0 + a.rows, a.h);
    uint16_t *col = reinterpret_cast<uint16_t *>(a.hist) + (size_t)blockIdx.y * a.size * a.w + x;
    for (int r = 0; r < a.size; ++r) col[(size_t)r * a.w] = 0;
    for (int i = max(y0 - a.pad, 0); i <= min(y0 + a.pad, a.h - 1); ++i)
        cambi_hist_row(a, col, x, i, 1);
    const uint32_t *active = reinterpret_cast<const uint32_t *>(a.active);
    const float *lut = reinterpret_cast<const float *>(a.lut);
    for (int y = y0; y < y1; ++y) {
        if (y > y0) {
            if (y - a.pad - 1 >= 0) cambi_hist_row(a, col, x, y - a.pad - 1, 0xffff);
            if (y + a.pad < a.h) cambi_hist_row(a, col, x, y + a.pad, 1);
        }
        const size_t at = (size_t)y * a.stride + x;
        float c = 0.0f;
        const uint16_t r = (uint16_t)(reinterpret_cast<const uint16_t *>(a.image)[at] -
                                      (uint16_t)a.base);
        if (reinterpret_cast<const uint16_t *>(a.mask)[at] != 0 && r < (uint16_t)a.size) {
            uint32_t steps = active[r];
            const int32_t p0 = col[(size_t)r * a.w];
            while (steps != 0) {
                const int d = __ffs(steps) - 1;
                steps &= steps - 1;
                // Setup checked that r + d + 1 is inside the band (as the CPU relies on).
                const int32_t p1 = col[(size_t)(r + d + 1) * a.w];
                const int32_t p2 = r > d ? (int32_t)col[(size_t)(r - d - 1) * a.w] : 0;
                const int32_t pm = p1 > p2 ? p1 : p2;
                const float num = __int2float_rn(a.weights[d] * p0 * pm);
                const float val = __fmul_rn(num, lut[pm + p0]);
                if (val > c) c = val;
            }
        }
        reinterpret_cast<float *>(a.out)[(size_t)y * a.w + x] = c;
    }
}
