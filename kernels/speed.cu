// SpEED (speed_chroma, speed_temporal): the per-pixel work of `Speed::score` up to the covariance
// sums. Specification: src/feature/speed/mod.rs (`downscale`, `filter_decimated`, `cov_sums`),
// src/feature/speed/cov.rs (each libvmaf family's covariance sum), src/feature/scale.rs
// (`Scaler::scale`), src/feature/float_vif/scalar.rs (`filter1d`) and
// src/feature/picture_copy.rs (`to_float`). Every step is one rounded f32 (f64) operation in the
// CPU's order (__fadd_rn/__fmul_rn/..., and the fatbin is built with --fmad=false; the vector
// families' fused multiply-adds are __fma_rn, as the CPU models' `f64::mul_add`): taps from 0 in
// tap order, the submatrix means and the covariance sums each by one thread in the CPU's order.
// The eigenvalues, the solve and the logarithms are the host's (`Speed::score_prepared`).
#include "common.cuh"

#define SPEED_BX 128
// Threads per block of vmaf_speed_means and vmaf_speed_cov.
#define SPEED_COV_BX 32
// The most taps of the anti-alias filter (35 at the largest kernel scale, 360/97) and of the
// local-mean filter (9).
#define SPEED_MAX_TAPS 40
// SpEED's 5x5 blocks: 25 shifted submatrices, 325 covariance sums (the lower triangle).
#define SPEED_N 25
#define SPEED_SUMS 325

struct SpeedPrepArgs {
    SrcPlane src;       // u8/u16 variants: the frame's plane (sample x of a row is element x * step)
    uint64_t a, b;      // f32 variant: dense float[h][w] planes, the sample is a - b
    uint64_t col_idx;   // int32[sw][ntaps]: the scaler's source columns (method != 0)
    uint64_t col_w;     // float[sw][ntaps]: their weights
    uint64_t row_idx;   // int32[sh][ntaps]: the source rows
    uint64_t row_w;     // float[sh][ntaps]
    uint64_t dst;       // float[sh][sw]
    int32_t w, h;       // the source plane's size
    int32_t sw, sh;     // the output size (w, h when method is 0)
    int32_t step;       // 1, or 2 in an interleaved CbCr plane
    int32_t bpc;
    int32_t method;     // 0 none (a copy), 1 nearest, 2 bilinear, 3 bicubic, 4 lanczos4
    int32_t ntaps;      // taps per position in the tables (1, 2, 4, 9)
};
static_assert(sizeof(SpeedPrepArgs) == 112, "ABI: keep in sync with src/cuda/kernels.rs");

// picture_copy's sample with offset -128: (float)v, divided by 4, 16 or 256 above 8 bits (an f32
// division), then + (-128) (an f32 addition).
template <typename T>
VMAF_RS_DEV float speed_frame_sample(const SpeedPrepArgs &a, int x, int y) {
    const float v = (float)load_px<T>(a.src, x * a.step, y);
    if (sizeof(T) == 1) return __fadd_rn(v, -128.0f);
    const float scaler = a.bpc == 10 ? 4.0f : a.bpc == 12 ? 16.0f : 256.0f;
    return __fadd_rn(__fdiv_rn(v, scaler), -128.0f);
}

// speed_temporal's sample type: `subtract_image`'s a - b of two float pictures.
struct SpeedDiff {};
template <typename T>
struct speed_is_diff {
    static constexpr bool value = false;
};
template <>
struct speed_is_diff<SpeedDiff> {
    static constexpr bool value = true;
};

template <typename T>
VMAF_RS_DEV float speed_sample(const SpeedPrepArgs &a, int x, int y) {
    if constexpr (speed_is_diff<T>::value) {
        const size_t at = (size_t)y * a.w + x;
        return __fsub_rn(reinterpret_cast<const float *>(a.a)[at],
                         reinterpret_cast<const float *>(a.b)[at]);
    } else {
        return speed_frame_sample<T>(a, x, y);
    }
}

// grid (ceil(sw / 128), sh), block 128: the plane's float samples (method 0), or `Scaler::scale`
// of them with the host's tap tables (each sample recomputed per tap: the same value every time).
template <typename T>
__device__ void speed_prep_impl(const SpeedPrepArgs &a) {
    const int x = blockIdx.x * SPEED_BX + threadIdx.x;
    const int y = blockIdx.y;
    if (x >= a.sw || y >= a.sh) return;
    float v;
    if (a.method == 0) {
        v = speed_sample<T>(a, x, y);
    } else {
        const int n = a.ntaps;
        const int *ci = reinterpret_cast<const int *>(a.col_idx) + (size_t)x * n;
        const float *cw = reinterpret_cast<const float *>(a.col_w) + (size_t)x * n;
        const int *ri = reinterpret_cast<const int *>(a.row_idx) + (size_t)y * n;
        const float *rw = reinterpret_cast<const float *>(a.row_w) + (size_t)y * n;
        if (a.method == 1) {
            v = speed_sample<T>(a, ci[0], ri[0]);
        } else if (a.method == 2) {
            // (1-dy)(1-dx) r1[x1] + (1-dy) dx r1[x2] + dy (1-dx) r2[x1] + dy dx r2[x2], left to
            // right.
            const float dx = cw[0], dy = rw[0];
            const float odx = __fsub_rn(1.0f, dx), ody = __fsub_rn(1.0f, dy);
            const float t1 = __fmul_rn(__fmul_rn(ody, odx), speed_sample<T>(a, ci[0], ri[0]));
            const float t2 = __fmul_rn(__fmul_rn(ody, dx), speed_sample<T>(a, ci[1], ri[0]));
            const float t3 = __fmul_rn(__fmul_rn(dy, odx), speed_sample<T>(a, ci[0], ri[1]));
            const float t4 = __fmul_rn(__fmul_rn(dy, dx), speed_sample<T>(a, ci[1], ri[1]));
            v = __fadd_rn(__fadd_rn(__fadd_rn(t1, t2), t3), t4);
        } else if (a.method == 3) {
            // Rows outer, columns inner, from 0: v += s * (wx * wy).
            v = 0.0f;
            for (int ky = 0; ky < n; ++ky) {
                for (int kx = 0; kx < n; ++kx) {
                    const float s = speed_sample<T>(a, ci[kx], ri[ky]);
                    v = __fadd_rn(v, __fmul_rn(s, __fmul_rn(cw[kx], rw[ky])));
                }
            }
        } else {
            // Lanczos: w = wx * wy; sum += w; v += s * w; then v / sum.
            v = 0.0f;
            float sum = 0.0f;
            for (int ky = 0; ky < n; ++ky) {
                for (int kx = 0; kx < n; ++kx) {
                    const float wgt = __fmul_rn(cw[kx], rw[ky]);
                    sum = __fadd_rn(sum, wgt);
                    v = __fadd_rn(v, __fmul_rn(speed_sample<T>(a, ci[kx], ri[ky]), wgt));
                }
            }
            v = __fdiv_rn(v, sum);
        }
    }
    reinterpret_cast<float *>(a.dst)[(size_t)y * a.sw + x] = v;
}

extern "C" __global__ void __launch_bounds__(SPEED_BX) vmaf_speed_prep_u8(SpeedPrepArgs a) {
    speed_prep_impl<uint8_t>(a);
}
extern "C" __global__ void __launch_bounds__(SPEED_BX) vmaf_speed_prep_u16(SpeedPrepArgs a) {
    speed_prep_impl<uint16_t>(a);
}
extern "C" __global__ void __launch_bounds__(SPEED_BX) vmaf_speed_prep_f32(SpeedPrepArgs a) {
    speed_prep_impl<SpeedDiff>(a);
}

struct SpeedFilterArgs {
    uint64_t src;    // float[h][w]
    uint64_t dst;    // float[oh][ow]
    uint64_t sub;    // horizontal pass: 0, or float[oh][ow] that the result is subtracted from
    float taps[SPEED_MAX_TAPS];
    int32_t ntaps;
    int32_t w, h;    // the source's size
    int32_t ow, oh;  // the output's size
    int32_t step;    // the output keeps every step-th row (vertical) or column (horizontal)
};
static_assert(sizeof(SpeedFilterArgs) == 208, "ABI: keep in sync with src/cuda/kernels.rs");

// The filters' mirror (speed's and filter1d's): -i before the start, 2n - i - 2 past the end,
// once (every plane is larger than the filter's radius).
VMAF_RS_DEV int speed_mirror(int i, int n) {
    if (i < 0) return -i;
    if (i >= n) return 2 * n - i - 2;
    return i;
}

// grid (ceil(w / 128), oh), block 128: dst[oi][x] = sum_k taps[k] * src[mirror(oi step - r + k)][x]
// (ow == w): the vertical pass at the rows kept.
extern "C" __global__ void __launch_bounds__(SPEED_BX) vmaf_speed_vfilter(SpeedFilterArgs a) {
    const int x = blockIdx.x * SPEED_BX + threadIdx.x;
    const int oi = blockIdx.y;
    if (x >= a.w || oi >= a.oh) return;
    const int r = a.ntaps / 2;
    const float *src = reinterpret_cast<const float *>(a.src);
    float acc = 0.0f;
    for (int k = 0; k < a.ntaps; ++k) {
        const int y = speed_mirror(oi * a.step - r + k, a.h);
        acc = __fadd_rn(acc, __fmul_rn(a.taps[k], src[(size_t)y * a.w + x]));
    }
    reinterpret_cast<float *>(a.dst)[(size_t)oi * a.w + x] = acc;
}

// grid (ceil(ow / 128), oh), block 128 (oh == h): the horizontal pass at the columns kept,
// acc = sum_k taps[k] * src[i][mirror(oj step - r + k)], stored as acc or as sub[i][oj] - acc.
extern "C" __global__ void __launch_bounds__(SPEED_BX) vmaf_speed_hfilter(SpeedFilterArgs a) {
    const int oj = blockIdx.x * SPEED_BX + threadIdx.x;
    const int i = blockIdx.y;
    if (oj >= a.ow || i >= a.oh) return;
    const int r = a.ntaps / 2;
    const float *row = reinterpret_cast<const float *>(a.src) + (size_t)i * a.w;
    float acc = 0.0f;
    for (int k = 0; k < a.ntaps; ++k) {
        acc = __fadd_rn(acc, __fmul_rn(a.taps[k], row[speed_mirror(oj * a.step - r + k, a.w)]));
    }
    const size_t at = (size_t)i * a.ow + oj;
    if (a.sub != 0) acc = __fsub_rn(reinterpret_cast<const float *>(a.sub)[at], acc);
    reinterpret_cast<float *>(a.dst)[at] = acc;
}

struct SpeedCovArgs {
    uint64_t small[4];  // float[dh][dw] per plane: the decimated plane less its local mean
    uint64_t sums[4];   // double[325] per plane: the covariance sums (result slots)
    uint64_t means;     // float[4][25]: the submatrices' means (written by vmaf_speed_means)
    int32_t dw;         // the small planes' stride
    int32_t subw, subh; // each submatrix's size
    int32_t family;     // libvmaf's kernels: 0 C, 1 AVX2, 2 AVX-512
    float n_sub;        // (float)(subw * subh)
    int32_t pad_;
};
static_assert(sizeof(SpeedCovArgs) == 96, "ABI: keep in sync with src/cuda/kernels.rs");

// grid (1, planes), block 32: thread t < 25 sums submatrix t (rows from t / 5, columns from t % 5)
// row by row, left to right, in f32 from 0, and divides by the float count (`cov_sums`' means).
extern "C" __global__ void __launch_bounds__(SPEED_COV_BX) vmaf_speed_means(SpeedCovArgs a) {
    const int t = threadIdx.x;
    const int p = blockIdx.y;
    if (t >= SPEED_N) return;
    const float *small = reinterpret_cast<const float *>(a.small[p]);
    const int r0 = t / 5, c0 = t % 5;
    float acc = 0.0f;
    for (int i = 0; i < a.subh; ++i) {
        const float *row = small + (size_t)(r0 + i) * a.dw + c0;
        for (int j = 0; j < a.subw; ++j) acc = __fadd_rn(acc, row[j]);
    }
    reinterpret_cast<float *>(a.means)[p * SPEED_N + t] = __fdiv_rn(acc, a.n_sub);
}

// cov.rs `sum_c`: one accumulator, row by row, multiply then add.
VMAF_RS_DEV double speed_cov_c(const float *x, const float *y, int stride, int h, int w, double mx,
                               double my) {
    double acc = 0.0;
    for (int i = 0; i < h; ++i) {
        const float *rx = x + (size_t)i * stride;
        const float *ry = y + (size_t)i * stride;
        for (int j = 0; j < w; ++j) {
            acc = __dadd_rn(acc, __dmul_rn(__dsub_rn((double)rx[j], mx), __dsub_rn((double)ry[j], my)));
        }
    }
    return acc;
}

// cov.rs `row_model` over every row with L lanes (4: AVX2, 8: AVX-512): 2L columns a step into
// two L-lane accumulators side by side, then L columns into the first, each lane fused; the rest
// into `tail`, unfused. Then the family's final sum (`reduce_avx2` / `reduce_avx512`).
template <int L>
VMAF_RS_DEV double speed_cov_vec(const float *x, const float *y, int stride, int h, int w,
                                 double mx, double my) {
    double acc[2 * L];
#pragma unroll
    for (int l = 0; l < 2 * L; ++l) acc[l] = 0.0;
    double tail = 0.0;
    for (int i = 0; i < h; ++i) {
        const float *rx = x + (size_t)i * stride;
        const float *ry = y + (size_t)i * stride;
        int j = 0;
        for (; j + 2 * L <= w; j += 2 * L) {
#pragma unroll
            for (int l = 0; l < 2 * L; ++l) {
                acc[l] = __fma_rn(__dsub_rn((double)rx[j + l], mx), __dsub_rn((double)ry[j + l], my),
                                  acc[l]);
            }
        }
        for (; j + L <= w; j += L) {
#pragma unroll
            for (int l = 0; l < L; ++l) {
                acc[l] = __fma_rn(__dsub_rn((double)rx[j + l], mx), __dsub_rn((double)ry[j + l], my),
                                  acc[l]);
            }
        }
        for (; j < w; ++j) {
            tail = __dadd_rn(tail, __dmul_rn(__dsub_rn((double)rx[j], mx), __dsub_rn((double)ry[j], my)));
        }
    }
    if constexpr (L == 4) {
        // The lanes of both accumulators added, then left to right, the tail last.
        double t[4];
#pragma unroll
        for (int l = 0; l < 4; ++l) t[l] = __dadd_rn(acc[l], acc[l + 4]);
        return __dadd_rn(__dadd_rn(__dadd_rn(__dadd_rn(t[0], t[1]), t[2]), t[3]), tail);
    } else {
        // GCC's _mm512_reduce_add_pd tree: lanes l + 4 onto l, then 2, 3 onto 0, 1, then 1 onto 0.
        double s[8];
#pragma unroll
        for (int l = 0; l < 8; ++l) s[l] = __dadd_rn(acc[l], acc[l + 8]);
        double t[4];
#pragma unroll
        for (int l = 0; l < 4; ++l) t[l] = __dadd_rn(s[l + 4], s[l]);
        const double u0 = __dadd_rn(t[2], t[0]);
        const double u1 = __dadd_rn(t[3], t[1]);
        return __dadd_rn(__dadd_rn(u0, u1), tail);
    }
}

// grid (ceil(325 / 32), planes), block 32: thread p computes sum p = xi (xi + 1) / 2 + yi
// (yi <= xi) of the plane, the submatrices from (xi / 5, xi % 5) and (yi / 5, yi % 5), in the
// family's order (`cov_sums`).
extern "C" __global__ void __launch_bounds__(SPEED_COV_BX) vmaf_speed_cov(SpeedCovArgs a) {
    const int p = blockIdx.x * SPEED_COV_BX + threadIdx.x;
    const int plane = blockIdx.y;
    if (p >= SPEED_SUMS) return;
    int xi = 0;
    while ((xi + 1) * (xi + 2) / 2 <= p) ++xi;
    const int yi = p - xi * (xi + 1) / 2;
    const float *small = reinterpret_cast<const float *>(a.small[plane]);
    const float *means = reinterpret_cast<const float *>(a.means) + plane * SPEED_N;
    const float *x = small + (size_t)(xi / 5) * a.dw + xi % 5;
    const float *y = small + (size_t)(yi / 5) * a.dw + yi % 5;
    const double mx = (double)means[xi], my = (double)means[yi];
    double s;
    if (a.family == 0) {
        s = speed_cov_c(x, y, a.dw, a.subh, a.subw, mx, my);
    } else if (a.family == 1) {
        s = speed_cov_vec<4>(x, y, a.dw, a.subh, a.subw, mx, my);
    } else {
        s = speed_cov_vec<8>(x, y, a.dw, a.subh, a.subw, mx, my);
    }
    reinterpret_cast<double *>(a.sums[plane])[p] = s;
}
