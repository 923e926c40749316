// float_vif: libvmaf's float VIF at four scales. Specification: src/feature/float_vif/scalar.rs
// (`filter1d`, `dec2`, `statistic`, `log2f_approx`), src/feature/float_vif/mod.rs (the scale loop)
// and src/feature/scale.rs (`vif_prescale`'s scalers). Every step is one rounded f32 (or f64)
// operation in the CPU's order (__fadd_rn/__fmul_rn/__fdiv_rn/__ddiv_rn..., and the fatbin is
// built with --fmad=false): the vertical pass accumulates taps from 0 in tap order, then the
// horizontal pass from 0 in tap order, both with the CPU's single mirror. The CPU's log2 is
// libvmaf's polynomial approximation (exponent bits plus an f32 Horner polynomial), not a libm
// call, so it is repeated exactly here. Each row's num/den sums (f32, from 0 in column order) are
// added by one thread per row; the f32 sum over rows is the host's.
#include "common.cuh"

#define FVIF_BX 128
// Rows one warp of vmaf_float_vif_rowsum sums (one per lane), and its column tile.
#define FVIF_TILE 32
// The most taps a filter has: vif_kernelscale 360/97 at scale 0 makes 65 (scalar::filter_size).
#define FVIF_MAX_TAPS 72

struct FloatVifConvertArgs {
    SrcPlane reference;   // the frames' luma
    SrcPlane distorted;
    uint64_t out_ref;     // float[h][w]: picture_copy's samples (v, v / 4, 16 or 256, then - 128)
    uint64_t out_dis;
    int32_t w, h;
    int32_t bpc;
    int32_t pad_;
};
static_assert(sizeof(FloatVifConvertArgs) == 80, "ABI: keep in sync with src/cuda/kernels.rs");

// picture_copy's sample (`to_float` with offset -128): (float)v, divided by 4, 16 or 256 above 8
// bits (an f32 division), then + (-128) (an f32 addition).
template <typename T>
VMAF_RS_DEV float fvif_sample(const SrcPlane &p, int bpc, int x, int y) {
    const float v = (float)load_px<T>(p, x, y);
    if (sizeof(T) == 1) return __fadd_rn(v, -128.0f);
    const float scaler = bpc == 10 ? 4.0f : bpc == 12 ? 16.0f : 256.0f;
    return __fadd_rn(__fdiv_rn(v, scaler), -128.0f);
}

// grid (ceil(w / 128), h), block 128: both pictures as floats.
template <typename T>
__device__ void fvif_convert_impl(const FloatVifConvertArgs &a) {
    const int x = blockIdx.x * FVIF_BX + threadIdx.x;
    const int y = blockIdx.y;
    if (x >= a.w) return;
    const size_t at = (size_t)y * a.w + x;
    reinterpret_cast<float *>(a.out_ref)[at] = fvif_sample<T>(a.reference, a.bpc, x, y);
    reinterpret_cast<float *>(a.out_dis)[at] = fvif_sample<T>(a.distorted, a.bpc, x, y);
}

extern "C" __global__ void __launch_bounds__(FVIF_BX)
    vmaf_float_vif_convert_u8(FloatVifConvertArgs a) {
    fvif_convert_impl<uint8_t>(a);
}
extern "C" __global__ void __launch_bounds__(FVIF_BX)
    vmaf_float_vif_convert_u16(FloatVifConvertArgs a) {
    fvif_convert_impl<uint16_t>(a);
}

struct FloatVifScaleArgs {
    uint64_t src;       // float[h][w]: a converted picture
    uint64_t dst;       // float[sh][sw]: its vif_prescale scaling
    uint64_t col_idx;   // int32[sw][ntaps]: each output column's source columns (mirrored)
    uint64_t col_wt;    // float[sw][ntaps]: their weights (bilinear: dx first, then 0)
    uint64_t row_idx;   // int32[sh][ntaps]
    uint64_t row_wt;    // float[sh][ntaps]
    int32_t w, h, sw, sh;
    int32_t method;     // 0 nearest, 1 bilinear, 2 bicubic, 3 lanczos4 (scale.rs `Method`)
    int32_t ntaps;      // 1, 2, 4 or 9
};
static_assert(sizeof(FloatVifScaleArgs) == 72, "ABI: keep in sync with src/cuda/kernels.rs");

// grid (ceil(sw / 128), sh), block 128: scale.rs `Scaler::scale` for one output sample, from the
// host's per-column and per-row taps (the same values its own tables hold), summed in its order.
extern "C" __global__ void __launch_bounds__(FVIF_BX) vmaf_float_vif_scale(FloatVifScaleArgs a) {
    const int x = blockIdx.x * FVIF_BX + threadIdx.x;
    const int y = blockIdx.y;
    if (x >= a.sw) return;
    const float *src = reinterpret_cast<const float *>(a.src);
    const int *ci = reinterpret_cast<const int *>(a.col_idx) + (size_t)x * a.ntaps;
    const float *cw = reinterpret_cast<const float *>(a.col_wt) + (size_t)x * a.ntaps;
    const int *ri = reinterpret_cast<const int *>(a.row_idx) + (size_t)y * a.ntaps;
    const float *rw = reinterpret_cast<const float *>(a.row_wt) + (size_t)y * a.ntaps;
    float v;
    if (a.method == 0) {
        v = src[(size_t)ri[0] * a.w + ci[0]];
    } else if (a.method == 1) {
        // (1-dy)(1-dx) r1[x1] + (1-dy) dx r1[x2] + dy (1-dx) r2[x1] + dy dx r2[x2], left to right.
        const float *r1 = src + (size_t)ri[0] * a.w;
        const float *r2 = src + (size_t)ri[1] * a.w;
        const float dx = cw[0], dy = rw[0];
        const float ody = __fsub_rn(1.0f, dy);
        const float odx = __fsub_rn(1.0f, dx);
        const float t1 = __fmul_rn(__fmul_rn(ody, odx), r1[ci[0]]);
        const float t2 = __fmul_rn(__fmul_rn(ody, dx), r1[ci[1]]);
        const float t3 = __fmul_rn(__fmul_rn(dy, odx), r2[ci[0]]);
        const float t4 = __fmul_rn(__fmul_rn(dy, dx), r2[ci[1]]);
        v = __fadd_rn(__fadd_rn(__fadd_rn(t1, t2), t3), t4);
    } else if (a.method == 2) {
        // Rows outer, columns inner, from 0: v += row[sx] * (wx * wy).
        v = 0.0f;
        for (int ky = 0; ky < a.ntaps; ++ky) {
            const float *row = src + (size_t)ri[ky] * a.w;
            for (int kx = 0; kx < a.ntaps; ++kx) {
                v = __fadd_rn(v, __fmul_rn(row[ci[kx]], __fmul_rn(cw[kx], rw[ky])));
            }
        }
    } else {
        // As bicubic, with the weights' sum alongside, then v / sum.
        float sum = 0.0f;
        v = 0.0f;
        for (int ky = 0; ky < a.ntaps; ++ky) {
            const float *row = src + (size_t)ri[ky] * a.w;
            for (int kx = 0; kx < a.ntaps; ++kx) {
                const float wgt = __fmul_rn(cw[kx], rw[ky]);
                sum = __fadd_rn(sum, wgt);
                v = __fadd_rn(v, __fmul_rn(row[ci[kx]], wgt));
            }
        }
        v = __fdiv_rn(v, sum);
    }
    reinterpret_cast<float *>(a.dst)[(size_t)y * a.sw + x] = v;
}

struct FloatVifArgs {
    uint64_t ref;        // float[h][w]: the scale's reference picture
    uint64_t dis;        // float[h][w]: its distorted picture
    uint64_t tmp;        // vertical passes: float[5][h][w] (vpass), float[2][h / 2][w] (dec_vpass)
    uint64_t out;        // stat: num float[h][w]; dec_hpass: reference float[h / 2][w / 2]
    uint64_t out2;       // stat: den float[h][w]; dec_hpass: distorted float[h / 2][w / 2]
    uint64_t sums;       // rowsum: result slots, row i's num sum at [i], its den sum at [h + i]
    double sigma_nsq;    // vif_sigma_nsq
    float filter[FVIF_MAX_TAPS];  // the scale's taps, `ntaps` of them
    float poly[9];       // log2f_approx's coefficients as f32 (the C double literals rounded)
    float gain_limit;    // (float)vif_enhn_gain_limit
    float sigma_max_inv; // scalar::sigma_max_inv(sigma_nsq)
    float eps;           // 1e-10f
    int32_t ntaps;
    int32_t w, h;        // the size filtered (before decimation for dec_*)
    int32_t pad_;
};
static_assert(sizeof(FloatVifArgs) == 408, "ABI: keep in sync with src/cuda/kernels.rs");

// libvmaf's convolution mirror (scalar.rs `mirror`): -i before the start, 2n - i - 2 past the
// end, once (the configure-time check keeps every scale larger than its filter's radius).
VMAF_RS_DEV int fvif_mirror(int i, int n) {
    if (i < 0) return -i;
    if (i >= n) return 2 * n - i - 2;
    return i;
}

// grid (ceil(w / 128), h), block 128: the vertical pass of row i of the five sources filter1d
// filters (x, y, x*x, y*y, x*y), each `acc += f[k] * v` from 0 in tap order, as the CPU's `tmp`.
extern "C" __global__ void __launch_bounds__(FVIF_BX) vmaf_float_vif_vpass(FloatVifArgs a) {
    const int x = blockIdx.x * FVIF_BX + threadIdx.x;
    const int i = blockIdx.y;
    if (x >= a.w) return;
    const int r = a.ntaps / 2;
    const float *ref = reinterpret_cast<const float *>(a.ref);
    const float *dis = reinterpret_cast<const float *>(a.dis);
    float m1 = 0.0f, m2 = 0.0f, xx = 0.0f, yy = 0.0f, xy = 0.0f;
    for (int k = 0; k < a.ntaps; ++k) {
        const size_t at = (size_t)fvif_mirror(i - r + k, a.h) * a.w + x;
        const float fk = a.filter[k];
        const float u = ref[at], v = dis[at];
        m1 = __fadd_rn(m1, __fmul_rn(fk, u));
        m2 = __fadd_rn(m2, __fmul_rn(fk, v));
        xx = __fadd_rn(xx, __fmul_rn(fk, __fmul_rn(u, u)));
        yy = __fadd_rn(yy, __fmul_rn(fk, __fmul_rn(v, v)));
        xy = __fadd_rn(xy, __fmul_rn(fk, __fmul_rn(u, v)));
    }
    const size_t plane = (size_t)a.w * a.h;
    const size_t at = (size_t)i * a.w + x;
    float *tmp = reinterpret_cast<float *>(a.tmp);
    tmp[at] = m1;
    tmp[plane + at] = m2;
    tmp[2 * plane + at] = xx;
    tmp[3 * plane + at] = yy;
    tmp[4 * plane + at] = xy;
}

// The horizontal pass of one vertical-pass row at column j: `acc += f[k] * row[mirror(j - r + k)]`
// from 0 in tap order.
VMAF_RS_DEV float fvif_hpass(const FloatVifArgs &a, const float *row, int j) {
    const int r = a.ntaps / 2;
    float acc = 0.0f;
    for (int k = 0; k < a.ntaps; ++k) {
        acc = __fadd_rn(acc, __fmul_rn(a.filter[k], row[fvif_mirror(j - r + k, a.w)]));
    }
    return acc;
}

// scalar.rs `log2f_approx`: the exponent bits, plus an f32 Horner polynomial of the mantissa.
VMAF_RS_DEV float fvif_log2f_approx(const FloatVifArgs &a, float x) {
    if (x == 0.0f) return __int_as_float(0xff800000);  // -inf
    if (x < 0.0f) return __int_as_float(0x7fc00000);
    const uint32_t u = __float_as_uint(x);
    const uint32_t exponent = (u & 0x7f800000u) >> 23;
    const float remain = __uint_as_float((u & 0x007fffffu) | 0x3f800000u);
    const float log_base = (float)((int)exponent - 127);
    const float t = __fsub_rn(remain, 1.0f);
    float var = 0.0f;
    for (int k = 0; k < 9; ++k) var = __fadd_rn(__fmul_rn(var, t), a.poly[k]);
    return __fadd_rn(log_base, var);
}

// `(float)q` of an f64 log2 argument, with the CPU's NaN. The one NaN the CPU's statistic can
// reach is 0 / 0 (sigma1_sq == 0 with vif_sigma_nsq=0): x86's (and AArch64's) default NaN has an
// empty payload, which `1.0 + NaN` and the conversion to f32 keep (quiet bit only: mantissa
// 0x400000, whatever the sign, which log2f_approx ignores), while the GPU's canonical NaN has
// every mantissa bit set. So a NaN becomes the CPU's f32 NaN here.
VMAF_RS_DEV float fvif_arg(double q) {
    return isnan(q) ? __int_as_float(0x7fc00000) : __double2float_rn(q);
}

// grid (ceil(w / 128), h), block 128: the horizontal passes of the five vertical passes at (j, i),
// then scalar.rs `statistic`'s per-pixel num and den.
extern "C" __global__ void __launch_bounds__(FVIF_BX) vmaf_float_vif_stat(FloatVifArgs a) {
    const int j = blockIdx.x * FVIF_BX + threadIdx.x;
    const int i = blockIdx.y;
    if (j >= a.w) return;
    const size_t plane = (size_t)a.w * a.h;
    const float *row = reinterpret_cast<const float *>(a.tmp) + (size_t)i * a.w;
    const float m1 = fvif_hpass(a, row, j);
    const float m2 = fvif_hpass(a, row + plane, j);
    const float xx = fvif_hpass(a, row + 2 * plane, j);
    const float yy = fvif_hpass(a, row + 3 * plane, j);
    const float xy = fvif_hpass(a, row + 4 * plane, j);
    const float eps = a.eps;
    float sigma1_sq = __fsub_rn(xx, __fmul_rn(m1, m1));
    float sigma2_sq = __fsub_rn(yy, __fmul_rn(m2, m2));
    const float sigma12 = __fsub_rn(xy, __fmul_rn(m1, m2));
    sigma1_sq = sigma1_sq > 0.0f ? sigma1_sq : 0.0f;
    sigma2_sq = sigma2_sq > 0.0f ? sigma2_sq : 0.0f;
    float gain = __fdiv_rn(sigma12, __fadd_rn(sigma1_sq, eps));
    float sv_sq = __fsub_rn(sigma2_sq, __fmul_rn(gain, sigma12));
    if (sigma1_sq < eps) {
        gain = 0.0f;
        sv_sq = sigma2_sq;
        sigma1_sq = 0.0f;
    }
    if (sigma2_sq < eps) {
        gain = 0.0f;
        sv_sq = 0.0f;
    }
    if (gain < 0.0f) {
        sv_sq = sigma2_sq;
        gain = 0.0f;
    }
    sv_sq = sv_sq > eps ? sv_sq : eps;
    gain = gain < a.gain_limit ? gain : a.gain_limit;
    // The divisions in double (the f32 terms widened exactly), each argument rounded to f32.
    const double g2s = (double)__fmul_rn(__fmul_rn(gain, gain), sigma1_sq);
    float num = fvif_log2f_approx(
        a, fvif_arg(__dadd_rn(1.0, __ddiv_rn(g2s, __dadd_rn((double)sv_sq, a.sigma_nsq)))));
    float den = fvif_log2f_approx(a, fvif_arg(__dadd_rn(1.0, __ddiv_rn((double)sigma1_sq, a.sigma_nsq))));
    if (sigma12 < 0.0f) num = 0.0f;
    if ((double)sigma1_sq < a.sigma_nsq) {
        num = __fsub_rn(1.0f, __fmul_rn(sigma2_sq, a.sigma_max_inv));
        den = 1.0f;
    }
    const size_t at = (size_t)i * a.w + j;
    reinterpret_cast<float *>(a.out)[at] = num;
    reinterpret_cast<float *>(a.out2)[at] = den;
}

// One warp's 32 rows (row0..row0+31) of `src` (float[h][w]) summed per row from 0 in column
// order, one lane per row, staged 32 columns at a time in `t` (coalesced loads); lane l returns
// row0 + l's sum.
VMAF_RS_DEV float fvif_warp_row_sum(const float *src, int w, int h, int row0,
                                    float (*t)[FVIF_TILE + 1]) {
    const int lane = threadIdx.x & 31;
    float line = 0.0f;
    for (int x0 = 0; x0 < w; x0 += FVIF_TILE) {
        const int x = x0 + lane;
        for (int rr = 0; rr < FVIF_TILE; ++rr) {
            const int y = row0 + rr;
            t[rr][lane] = (y < h && x < w) ? src[(size_t)y * w + x] : 0.0f;
        }
        __syncwarp();
        const int n = min(FVIF_TILE, w - x0);
        for (int c = 0; c < n; ++c) line = __fadd_rn(line, t[lane][c]);
        __syncwarp();  // the tile is rewritten next
    }
    return line;
}

// grid ceil(h / 128), block 128 (4 warps of 32 rows): statistic's `row_num += num` and
// `row_den += den`, each row by one thread from left to right; each sum's f32 bits go to the low
// half of its result slot.
extern "C" __global__ void __launch_bounds__(FVIF_BX) vmaf_float_vif_rowsum(FloatVifArgs a) {
    __shared__ float tile[FVIF_BX / 32][FVIF_TILE][FVIF_TILE + 1];
    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.x >> 5;
    const int row0 = (blockIdx.x * (FVIF_BX / 32) + warp) * FVIF_TILE;
    const float num = fvif_warp_row_sum(reinterpret_cast<const float *>(a.out), a.w, a.h, row0, tile[warp]);
    const float den = fvif_warp_row_sum(reinterpret_cast<const float *>(a.out2), a.w, a.h, row0, tile[warp]);
    const int y = row0 + lane;
    if (y < a.h) {
        unsigned long long *sums = reinterpret_cast<unsigned long long *>(a.sums);
        sums[y] = (unsigned long long)__float_as_uint(num);
        sums[a.h + y] = (unsigned long long)__float_as_uint(den);
    }
}

// grid (ceil(w / 128), h / 2), block 128: the vertical pass (x only) of rows 2i of both pictures,
// the only rows dec2 keeps of filter1d's output: tmp[0][i][x] (reference), tmp[1][i][x].
extern "C" __global__ void __launch_bounds__(FVIF_BX) vmaf_float_vif_dec_vpass(FloatVifArgs a) {
    const int x = blockIdx.x * FVIF_BX + threadIdx.x;
    const int i = blockIdx.y;
    if (x >= a.w) return;
    const int r = a.ntaps / 2;
    const float *ref = reinterpret_cast<const float *>(a.ref);
    const float *dis = reinterpret_cast<const float *>(a.dis);
    float m1 = 0.0f, m2 = 0.0f;
    for (int k = 0; k < a.ntaps; ++k) {
        const size_t at = (size_t)fvif_mirror(2 * i - r + k, a.h) * a.w + x;
        m1 = __fadd_rn(m1, __fmul_rn(a.filter[k], ref[at]));
        m2 = __fadd_rn(m2, __fmul_rn(a.filter[k], dis[at]));
    }
    const size_t half = (size_t)(a.h / 2) * a.w;
    const size_t at = (size_t)i * a.w + x;
    float *tmp = reinterpret_cast<float *>(a.tmp);
    tmp[at] = m1;
    tmp[half + at] = m2;
}

// grid (ceil((w / 2) / 128), h / 2), block 128: the horizontal pass at column 2j of dec_vpass's
// rows (mirrored on the undecimated width w): the next scale's pictures, (w / 2) x (h / 2).
extern "C" __global__ void __launch_bounds__(FVIF_BX) vmaf_float_vif_dec_hpass(FloatVifArgs a) {
    const int j = blockIdx.x * FVIF_BX + threadIdx.x;
    const int i = blockIdx.y;
    const int ow = a.w / 2;
    if (j >= ow) return;
    const size_t half = (size_t)(a.h / 2) * a.w;
    const float *row = reinterpret_cast<const float *>(a.tmp) + (size_t)i * a.w;
    const size_t at = (size_t)i * ow + j;
    reinterpret_cast<float *>(a.out)[at] = fvif_hpass(a, row, 2 * j);
    reinterpret_cast<float *>(a.out2)[at] = fvif_hpass(a, row + half, 2 * j);
}
