// float_ssim: libvmaf's floating-point SSIM of the luma plane (IQA's `_iqa_ssim` with libvmaf's
// defaults). Specification: src/feature/float_ssim/mod.rs and src/feature/iqa/{mod,scalar}.rs.
//
// Per frame: (scale > 1) the box low-pass decimation into two f32 pictures; then, in chunks of
// output rows, the per-pixel SSIM terms (both Gaussian passes of the five maps and
// `ssim_terms`, every pixel in parallel) into an f64 buffer, and ONE thread adding them to the
// four running sums in raster order, as the CPU's sequential `ssim_sums` does. Every float
// operation is the CPU's, in its order and type (f32 products, f64 sums, ...), written with
// round-to-nearest intrinsics; the fatbin is built with --fmad=false, so nothing is fused.
#include "common.cuh"

#define SSIM_WINDOW 11
#define SSIM_HALF (SSIM_WINDOW / 2)
// Terms kernel: output tiles of SSIM_TW x SSIM_TH pixels, 256 threads (8 rows of 32).
#define SSIM_TW 32
#define SSIM_TH 32
#define SSIM_THREADS 256
#define SSIM_IW (SSIM_TW + SSIM_WINDOW - 1)
#define SSIM_IH (SSIM_TH + SSIM_WINDOW - 1)
// Sum kernel: one block; warp 0's first lane sums one shared tile while the other warps load
// the next (double-buffered).
#define SSIM_SUM_THREADS 256
#define SSIM_SUM_TILE 512

// IQA's KBND_SYMMETRIC (scalar::mirror): one reflection about the border, edge repeated.
VMAF_RS_DEV int ssim_mirror(int i, int n) {
    if (i < 0) return -1 - i;
    if (i >= n) return n - (i - n) - 1;
    return i;
}

// picture_copy::to_float: the sample as f32 divided by 1, 4, 16 or 256 (exact; libvmaf's offset
// 0 added to a non-negative value changes nothing).
template <typename T>
VMAF_RS_DEV float ssim_sample(const SrcPlane &p, float divisor, int x, int y) {
    return __fdiv_rn((float)load_px<T>(p, x, y), divisor);
}

struct FloatSsimDecimateArgs {
    SrcPlane reference;
    SrcPlane distorted;
    uint64_t out_ref;  // float[sw * sh], packed
    uint64_t out_dis;  // float[sw * sh], packed
    int32_t w, h;      // the frame's luma size
    int32_t sw, sh;    // the decimated size (iqa::decimated)
    int32_t factor;    // scale (> 1); the box kernel is factor x factor
    int32_t pad_;
    float divisor;     // to_float's divisor for the bit depth
    float tap;         // float_ssim::low_pass_tap: 1 / (factor * factor) in f32
};
static_assert(sizeof(FloatSsimDecimateArgs) == 96, "ABI: keep in sync with src/cuda/kernels.rs");

// grid (ceil(sw / 128), sh), block 128. scalar::filter_pixel at (x * factor, y * factor): f32
// products with the tap summed in f64, rows outer, borders mirrored; out of place (the plan only
// runs where libvmaf's in-place decimation reads original pixels only:
// iqa::decimate_in_place_reads_originals).
template <typename T>
__device__ void ssim_decimate_impl(const FloatSsimDecimateArgs &a) {
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y;
    if (x >= a.sw) return;
    const int c = a.factor / 2;
    const int last = c - ((a.factor & 1) == 0 ? 1 : 0);
    double sr = 0.0, sd = 0.0;
    for (int v = -c; v <= last; ++v) {
        const int row = ssim_mirror(y * a.factor + v, a.h);
        for (int u = -c; u <= last; ++u) {
            const int col = ssim_mirror(x * a.factor + u, a.w);
            const float r = ssim_sample<T>(a.reference, a.divisor, col, row);
            const float d = ssim_sample<T>(a.distorted, a.divisor, col, row);
            sr = __dadd_rn(sr, (double)__fmul_rn(r, a.tap));
            sd = __dadd_rn(sd, (double)__fmul_rn(d, a.tap));
        }
    }
    const size_t at = (size_t)y * a.sw + x;
    reinterpret_cast<float *>(a.out_ref)[at] = __double2float_rn(sr);
    reinterpret_cast<float *>(a.out_dis)[at] = __double2float_rn(sd);
}

extern "C" __global__ void __launch_bounds__(128) vmaf_float_ssim_decimate_u8(FloatSsimDecimateArgs a) {
    ssim_decimate_impl<uint8_t>(a);
}
extern "C" __global__ void __launch_bounds__(128) vmaf_float_ssim_decimate_u16(FloatSsimDecimateArgs a) {
    ssim_decimate_impl<uint16_t>(a);
}

struct FloatSsimTermsArgs {
    SrcPlane reference;  // the SSIM picture: the frame (scale 1) or our decimated f32 buffer
    SrcPlane distorted;
    uint64_t terms;      // double[4][cap]: (l c s, l, c, s) of the chunk's pixels, raster order
    int32_t w, h;        // the SSIM picture's size (at least 11 x 11)
    int32_t y0, rows;    // the chunk: output rows y0 .. y0 + rows of the (w - 10) x (h - 10) map
    int32_t cap;         // stride of the four term arrays, in doubles
    float divisor;       // to_float's divisor (frame sources)
    float c1, c2, c3;    // scalar::Constants
    float gauss[SSIM_WINDOW];  // scalar::GAUSSIAN
};
static_assert(sizeof(FloatSsimTermsArgs) == 136, "ABI: keep in sync with src/cuda/kernels.rs");

// The SSIM picture's samples: a frame plane converted as picture_copy::to_float does, or one of
// our packed f32 pictures.
template <typename T>
struct SsimFrameSrc {
    __device__ __forceinline__ float at(const SrcPlane &p, float divisor, int x, int y) const {
        return ssim_sample<T>(p, divisor, x, y);
    }
};
struct SsimFloatSrc {
    __device__ __forceinline__ float at(const SrcPlane &p, float, int x, int y) const {
        const float *row = reinterpret_cast<const float *>(reinterpret_cast<const uint8_t *>(p.ptr) +
                                                           (uint64_t)y * p.pitch);
        return __ldg(row + x);
    }
};

// scalar::gaussian_dot / convolve_col_pixel: f32 products with the taps summed in f64 in window
// order, rounded to f32.
VMAF_RS_DEV void ssim_acc(double &s, float v, float g) { s = __dadd_rn(s, (double)__fmul_rn(v, g)); }

// scalar::ssim_terms, operation by operation.
VMAF_RS_DEV void ssim_pixel_terms(float mr, float md, float rr, float dd, float rd,
                                  const FloatSsimTermsArgs &a, double t[4]) {
    rr = __fsub_rn(rr, __fmul_rn(mr, mr));
    dd = __fsub_rn(dd, __fmul_rn(md, md));
    // libvmaf's MAX(0.0, x): a double comparison (NaN and -0.0 stay).
    if (0.0 > (double)rr) rr = 0.0f;
    if (0.0 > (double)dd) dd = 0.0f;
    rd = __fsub_rn(rd, __fmul_rn(mr, md));
    const float sigma = __double2float_rn(__dsqrt_rn((double)__fmul_rn(rr, dd)));
    const double lum_num = __dadd_rn(__dmul_rn(__dmul_rn(2.0, (double)mr), (double)md), (double)a.c1);
    const float lum_den = __fadd_rn(__fadd_rn(__fmul_rn(mr, mr), __fmul_rn(md, md)), a.c1);
    const double lum = __ddiv_rn(lum_num, (double)lum_den);
    const double con_num = __dadd_rn(__dmul_rn(2.0, (double)sigma), (double)a.c2);
    const float con_den = __fadd_rn(__fadd_rn(rr, dd), a.c2);
    const double con = __ddiv_rn(con_num, (double)con_den);
    if (rd < 0.0f && sigma <= 0.0f) rd = 0.0f;
    const double st = (double)__fdiv_rn(__fadd_rn(rd, a.c3), __fadd_rn(sigma, a.c3));
    t[0] = __dmul_rn(__dmul_rn(lum, con), st);
    t[1] = lum;
    t[2] = con;
    t[3] = st;
}

// grid (ceil((w - 10) / 32), ceil(rows / 32)), block 256. One 32 x 32 tile of the SSIM map:
// the 42 x 42 input pixels of both pictures to shared memory, the horizontal pass of the five
// maps (r, d, r*r, d*d, r*d; the products in f32 as scalar::squares) for the tile's 42 rows, the
// vertical pass and the terms per output pixel.
template <typename Src>
__device__ void ssim_terms_impl(const FloatSsimTermsArgs &a) {
    __shared__ float in_r[SSIM_IH][SSIM_IW];
    __shared__ float in_d[SSIM_IH][SSIM_IW];
    __shared__ float hz[5][SSIM_IH][SSIM_TW];
    const Src src{};
    const int dw = a.w - (SSIM_WINDOW - 1);
    const int x0 = blockIdx.x * SSIM_TW;
    const int ty0 = blockIdx.y * SSIM_TH;  // tile's first output row, chunk-relative
    const int oy0 = a.y0 + ty0;            // ... in the whole map
    const int tid = threadIdx.x;
    const int tx = tid & (SSIM_TW - 1);
    const int tyy = tid / SSIM_TW;
    for (int i = tid; i < SSIM_IH * SSIM_IW; i += SSIM_THREADS) {
        const int iy = i / SSIM_IW, ix = i % SSIM_IW;
        const int gx = x0 + ix, gy = oy0 + iy;
        float r = 0.0f, d = 0.0f;  // outside the picture: read by no output in range
        if (gx < a.w && gy < a.h) {
            r = src.at(a.reference, a.divisor, gx, gy);
            d = src.at(a.distorted, a.divisor, gx, gy);
        }
        in_r[iy][ix] = r;
        in_d[iy][ix] = d;
    }
    __syncthreads();
    for (int iy = tyy; iy < SSIM_IH; iy += SSIM_THREADS / SSIM_TW) {
        double s[5] = {0.0, 0.0, 0.0, 0.0, 0.0};
#pragma unroll
        for (int k = 0; k < SSIM_WINDOW; ++k) {
            const float r = in_r[iy][tx + k], d = in_d[iy][tx + k], g = a.gauss[k];
            ssim_acc(s[0], r, g);
            ssim_acc(s[1], d, g);
            ssim_acc(s[2], __fmul_rn(r, r), g);
            ssim_acc(s[3], __fmul_rn(d, d), g);
            ssim_acc(s[4], __fmul_rn(r, d), g);
        }
#pragma unroll
        for (int m = 0; m < 5; ++m) hz[m][iy][tx] = __double2float_rn(s[m]);
    }
    __syncthreads();
    const int gx = x0 + tx;
    if (gx >= dw) return;
    double *terms = reinterpret_cast<double *>(a.terms);
    for (int oy = tyy; oy < SSIM_TH; oy += SSIM_THREADS / SSIM_TW) {
        const int cy = ty0 + oy;  // chunk-relative output row
        if (cy >= a.rows) break;
        double s[5] = {0.0, 0.0, 0.0, 0.0, 0.0};
#pragma unroll
        for (int k = 0; k < SSIM_WINDOW; ++k) {
            const float g = a.gauss[k];
#pragma unroll
            for (int m = 0; m < 5; ++m) ssim_acc(s[m], hz[m][oy + k][tx], g);
        }
        double t[4];
        ssim_pixel_terms(__double2float_rn(s[0]), __double2float_rn(s[1]), __double2float_rn(s[2]),
                         __double2float_rn(s[3]), __double2float_rn(s[4]), a, t);
        const size_t at = (size_t)cy * dw + gx;
#pragma unroll
        for (int m = 0; m < 4; ++m) terms[(size_t)m * a.cap + at] = t[m];
    }
}

extern "C" __global__ void __launch_bounds__(SSIM_THREADS) vmaf_float_ssim_terms_u8(FloatSsimTermsArgs a) {
    ssim_terms_impl<SsimFrameSrc<uint8_t>>(a);
}
extern "C" __global__ void __launch_bounds__(SSIM_THREADS) vmaf_float_ssim_terms_u16(FloatSsimTermsArgs a) {
    ssim_terms_impl<SsimFrameSrc<uint16_t>>(a);
}
extern "C" __global__ void __launch_bounds__(SSIM_THREADS) vmaf_float_ssim_terms_f32(FloatSsimTermsArgs a) {
    ssim_terms_impl<SsimFloatSrc>(a);
}

struct FloatSsimSumArgs {
    uint64_t terms;  // double[4][cap], as the terms kernel wrote them
    uint64_t out;    // double[4] in the result block (its u64 slots): the running sums, += terms
    int32_t n;       // terms in this chunk
    int32_t cap;
};
static_assert(sizeof(FloatSsimSumArgs) == 24, "ABI: keep in sync with src/cuda/kernels.rs");

// grid 1, block 256. scalar::ssim_sums / add_terms: each of the four sums adds the chunk's terms
// one at a time in raster order, continuing from the value in `out` (+0.0, the zeroed slot, on
// the first chunk; the CPU starts at 0.0 too). Only thread 0 adds; the four sums are independent
// chains. Threads 32.. stage the next tile of terms in shared memory meanwhile.
extern "C" __global__ void __launch_bounds__(SSIM_SUM_THREADS) vmaf_float_ssim_sum(FloatSsimSumArgs a) {
    __shared__ double buf[2][4][SSIM_SUM_TILE];
    const double *terms = reinterpret_cast<const double *>(a.terms);
    const int tid = threadIdx.x;
    const int tiles = (a.n + SSIM_SUM_TILE - 1) / SSIM_SUM_TILE;
    // Tile k of the four arrays into buf[b], by threads first, first + step, ...
    auto load = [&](int k, int b, int first, int step) {
        const int base = k * SSIM_SUM_TILE;
        const int cnt = min(SSIM_SUM_TILE, a.n - base);
        for (int i = first; i < 4 * SSIM_SUM_TILE; i += step) {
            const int m = i / SSIM_SUM_TILE, j = i % SSIM_SUM_TILE;
            if (j < cnt) buf[b][m][j] = terms[(size_t)m * a.cap + base + j];
        }
    };
    if (tiles > 0) load(0, 0, tid, SSIM_SUM_THREADS);
    __syncthreads();
    double *out = reinterpret_cast<double *>(a.out);
    double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
    if (tid == 0) {
        s0 = out[0];
        s1 = out[1];
        s2 = out[2];
        s3 = out[3];
    }
    for (int k = 0; k < tiles; ++k) {
        const int b = k & 1;
        if (tid == 0) {
            const int cnt = min(SSIM_SUM_TILE, a.n - k * SSIM_SUM_TILE);
            const double *t0 = buf[b][0], *t1 = buf[b][1], *t2 = buf[b][2], *t3 = buf[b][3];
#pragma unroll 4
            for (int j = 0; j < cnt; ++j) {
                s0 = __dadd_rn(s0, t0[j]);
                s1 = __dadd_rn(s1, t1[j]);
                s2 = __dadd_rn(s2, t2[j]);
                s3 = __dadd_rn(s3, t3[j]);
            }
        } else if (tid >= 32 && k + 1 < tiles) {
            load(k + 1, b ^ 1, tid - 32, SSIM_SUM_THREADS - 32);
        }
        __syncthreads();
    }
    if (tid == 0) {
        out[0] = s0;
        out[1] = s1;
        out[2] = s2;
        out[3] = s3;
    }
}

// ---------------------------------------------------------------------------------------------
// float_ms_ssim: libvmaf's multi-scale SSIM. Specification: src/feature/float_ms_ssim/mod.rs and
// src/feature/iqa/{mod,scalar}.rs. Per frame: four decimations (scale s - 1 -> s, the 9 x 9
// low-pass, factor 2, out of place as the CPU does it), then each of the five scales' SSIM map
// through the float_ssim terms and sum kernels above (their own four result slots per scale);
// the powers and the product over the scales are the host's, with the CPU's function.

#define MS_SSIM_LPF_LEN 9

struct FloatMsSsimDecimateArgs {
    SrcPlane reference;  // scale s - 1: the frame (s = 1) or our packed f32 picture
    SrcPlane distorted;
    uint64_t out_ref;    // float[sw * sh], packed: scale s
    uint64_t out_dis;
    int32_t w, h;        // scale s - 1's size
    int32_t sw, sh;      // scale s's size (iqa::decimated(w, 2), iqa::decimated(h, 2))
    float divisor;       // to_float's divisor (frame sources)
    int32_t pad_;
    float lpf[MS_SSIM_LPF_LEN * MS_SSIM_LPF_LEN];  // float_ms_ssim::LPF, row-major
    int32_t pad2_;
};
static_assert(sizeof(FloatMsSsimDecimateArgs) == 416, "ABI: keep in sync with src/cuda/kernels.rs");

// grid (ceil(sw / 128), sh), block 128. scalar::filter_pixel with the 9 x 9 kernel at
// (2 x, 2 y): for each kernel row (top to bottom) and column (left to right), the f32 product of
// the mirrored sample and the tap added to an f64 sum, rounded to f32 at the end.
template <typename Src>
__device__ void ms_ssim_decimate_impl(const FloatMsSsimDecimateArgs &a) {
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y;
    if (x >= a.sw) return;
    const Src src{};
    const int c = MS_SSIM_LPF_LEN / 2;
    double sr = 0.0, sd = 0.0;
    int t = 0;
    for (int v = -c; v <= c; ++v) {
        const int row = ssim_mirror(2 * y + v, a.h);
        for (int u = -c; u <= c; ++u, ++t) {
            const int col = ssim_mirror(2 * x + u, a.w);
            const float k = a.lpf[t];
            sr = __dadd_rn(sr, (double)__fmul_rn(src.at(a.reference, a.divisor, col, row), k));
            sd = __dadd_rn(sd, (double)__fmul_rn(src.at(a.distorted, a.divisor, col, row), k));
        }
    }
    const size_t at = (size_t)y * a.sw + x;
    reinterpret_cast<float *>(a.out_ref)[at] = __double2float_rn(sr);
    reinterpret_cast<float *>(a.out_dis)[at] = __double2float_rn(sd);
}

extern "C" __global__ void __launch_bounds__(128) vmaf_float_ms_ssim_decimate_u8(FloatMsSsimDecimateArgs a) {
    ms_ssim_decimate_impl<SsimFrameSrc<uint8_t>>(a);
}
extern "C" __global__ void __launch_bounds__(128) vmaf_float_ms_ssim_decimate_u16(FloatMsSsimDecimateArgs a) {
    ms_ssim_decimate_impl<SsimFrameSrc<uint16_t>>(a);
}
extern "C" __global__ void __launch_bounds__(128) vmaf_float_ms_ssim_decimate_f32(FloatMsSsimDecimateArgs a) {
    ms_ssim_decimate_impl<SsimFloatSrc>(a);
}
