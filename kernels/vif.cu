// Integer VIF at four scales. Specification: src/feature/vif/scalar.rs (stat_vertical_u8/_u16,
// pad_line, stat_horizontal, vif_term, subsample_vertical/_horizontal) and the drivers in
// src/feature/vif/mod.rs (row mirroring, scale walk).
#include "common.cuh"

// Taps per scale (Q16, sum 65536): libvmaf vif_filter1d_table, = vif::tables::FILTER_S0..S3.
__constant__ uint16_t VIF_F0[17] = {489,  935,  1640, 2640, 3896, 5274, 6547, 7455, 7784,
                                    7455, 6547, 5274, 3896, 2640, 1640, 935,  489};
__constant__ uint16_t VIF_F1[9] = {1244, 3663, 7925, 12590, 14692, 12590, 7925, 3663, 1244};
__constant__ uint16_t VIF_F2[5] = {3571, 16004, 26386, 16004, 3571};
__constant__ uint16_t VIF_F3[3] = {10904, 43728, 10904};

template <int S> struct VifFilter;
template <> struct VifFilter<0> { static constexpr int TAPS = 17; static __device__ __forceinline__ uint32_t f(int k) { return VIF_F0[k]; } };
template <> struct VifFilter<1> { static constexpr int TAPS = 9;  static __device__ __forceinline__ uint32_t f(int k) { return VIF_F1[k]; } };
template <> struct VifFilter<2> { static constexpr int TAPS = 5;  static __device__ __forceinline__ uint32_t f(int k) { return VIF_F2[k]; } };
template <> struct VifFilter<3> { static constexpr int TAPS = 3;  static __device__ __forceinline__ uint32_t f(int k) { return VIF_F3[k]; } };

#define VIF_BX 128
// libvmaf sigma_nsq = 65536 << 1 (= vif::tables::SIGMA_NSQ).
#define VIF_SIGMA_NSQ 131072

struct VifStatArgs {
    SrcPlane ref, dis;
    uint64_t log2_table;  // uint16_t[65536], vif::tables::log2_table()
    uint64_t sums;        // int64_t[4]: num_log, den_log, num_non_log, den_non_log (accumulated)
    double gain_limit;
    double eps;           // vif::tables::EPS
    uint64_t sq_round;
    int32_t w, h;
    uint32_t mu_round, mu_shift, sq_shift, pad_;
};
static_assert(sizeof(VifStatArgs) == 112, "ABI: keep in sync with src/cuda/kernels.rs");

VMAF_RS_DEV int32_t vif_log2_32(const uint16_t *t, uint32_t v) {
    const int k = 16 - __clz(v);
    return (int32_t)__ldg(t + (v >> k)) + 2048 * k;
}
VMAF_RS_DEV int32_t vif_log2_64(const uint16_t *t, uint64_t v) {
    const int k = 48 - __clzll(v);
    return (int32_t)__ldg(t + (v >> k)) + 2048 * k;
}

// One pixel's VIF term (vif::scalar::vif_term).
VMAF_RS_DEV void vif_term(int32_t s1, int32_t s2, int32_t s12, const VifStatArgs &a,
                          const uint16_t *t, long long acc[4]) {
    s2 = s2 < 0 ? 0 : s2;
    if (s1 >= VIF_SIGMA_NSQ) {
        const uint32_t den = (uint32_t)VIF_SIGMA_NSQ + (uint32_t)s1;
        acc[1] += (long long)(vif_log2_32(t, den) - 2048 * 17);
        if (s12 > 0 && s2 > 0) {
            double g = __ddiv_rn((double)s12, __dadd_rn((double)s1, a.eps));
            int32_t sv_sq = d2i_trunc(__dsub_rn((double)s2, __dmul_rn(g, (double)s12)));
            sv_sq = sv_sq < 0 ? 0 : sv_sq;
            g = g < a.gain_limit ? g : a.gain_limit;
            const uint32_t numer1 = (uint32_t)sv_sq + (uint32_t)VIF_SIGMA_NSQ;
            const long long numer1_tmp =
                d2ll_trunc(__dmul_rn(__dmul_rn(g, g), (double)s1)) + (long long)numer1;
            acc[0] += (long long)(vif_log2_64(t, (uint64_t)numer1_tmp) - vif_log2_64(t, (uint64_t)numer1));
        }
    } else {
        acc[2] += s2;
        acc[3] += 1;
    }
}

// Rows of output one block computes per scale (kernels.rs `vif_rows`): enough to share each
// input row's loads and products among the output rows it feeds and to amortise the block's
// set-up and its one reduction; fewer at the coarse scales, which have few rows.
template <int S> struct VifRows { static constexpr int R = 8 >> S; };
// Threads per block of the statistic (kernels.rs VIF_THREADS): the widest vertical pass, VIF_BX
// + 16 columns, rounded up to whole warps.
#define VIF_THREADS 160

template <bool NARROW> struct VifAcc { typedef unsigned long long T; };
template <> struct VifAcc<true> { typedef uint32_t T; };

// grid (ceil(w / 128), ceil(h / R)), block VIF_THREADS: the statistic of rows
// [R * blockIdx.y, +R) for 128 columns, accumulated into a.sums (one reduction per block).
//   vertical pass: one thread per column (128 + 2 * HALF of them), each input row loaded once
//   and added, with its tap, into every output row it feeds (R + TAPS - 1 rows for R outputs);
//   horizontal pass: four adjacent output columns per thread, their 4 + TAPS - 1 inputs read as
//   16-byte vectors from shared memory.
// T is the sample type of the planes (8-bit input, or 16-bit input / our scale buffers).
template <typename T, int S>
__device__ void vif_stat_impl(const VifStatArgs &a) {
    constexpr int TAPS = VifFilter<S>::TAPS;
    constexpr int HALF = TAPS / 2;
    constexpr int R = VifRows<S>::R;
    // Row length in shared memory, a multiple of 4 (16-byte vector reads) covering the 4 + TAPS
    // - 1 values the last quad reads.
    constexpr int N = (VIF_BX + 2 * HALF + 3) / 4 * 4;
    // 8-bit scale 0: every vertical sum fits 32 bits (sum of taps 2^16 times 255^2 < 2^32, and
    // libvmaf keeps them unshifted), so the squares need no 64-bit arithmetic.
    constexpr bool NARROW = sizeof(T) == 1 && S == 0;
    typedef typename VifAcc<NARROW>::T Acc;
    static_assert(VIF_BX + 2 * HALF <= VIF_THREADS, "one thread per vertical-pass column");
    __shared__ __align__(16) uint32_t s_mu1[R][N];
    __shared__ __align__(16) uint32_t s_mu2[R][N];
    __shared__ __align__(16) uint32_t s_xx[R][N];
    __shared__ __align__(16) uint32_t s_yy[R][N];
    __shared__ __align__(16) uint32_t s_xy[R][N];
    __shared__ unsigned long long scratch[32];
    const int i0 = blockIdx.y * R;
    const int x0 = blockIdx.x * VIF_BX;
    const int n = min(VIF_BX, a.w - x0);
    const int nr = min(R, a.h - i0);
    const int t = threadIdx.x;
    if (t < n + 2 * HALF) {
        const int x = mirror_iter(x0 - HALF + t, a.w);
        uint32_t m1[R], m2[R];
        Acc xx[R], yy[R], xy[R];
#pragma unroll
        for (int r = 0; r < R; ++r) m1[r] = m2[r] = 0, xx[r] = yy[r] = xy[r] = 0;
#pragma unroll
        for (int y = 0; y < R + TAPS - 1; ++y) {
            // Rows past the picture's end (a last, partial block) are read mirrored and their
            // outputs never used.
            const int row = mirror_iter(i0 - HALF + y, a.h);
            const uint32_t X = load_px<T>(a.ref, x, row);
            const uint32_t Y = load_px<T>(a.dis, x, row);
#pragma unroll
            for (int r = 0; r < R; ++r) {
                const int k = y - r;
                if (k >= 0 && k < TAPS) {
                    const uint32_t f = VifFilter<S>::f(k);
                    const uint32_t fx = f * X, fy = f * Y;  // below 2^32: 16-bit taps and samples
                    m1[r] += fx;
                    m2[r] += fy;
                    xx[r] += (Acc)fx * X;
                    yy[r] += (Acc)fy * Y;
                    xy[r] += (Acc)fx * Y;
                }
            }
        }
#pragma unroll
        for (int r = 0; r < R; ++r) {
            s_mu1[r][t] = (uint16_t)((m1[r] + a.mu_round) >> a.mu_shift);
            s_mu2[r][t] = (uint16_t)((m2[r] + a.mu_round) >> a.mu_shift);
            s_xx[r][t] = (uint32_t)(((unsigned long long)xx[r] + a.sq_round) >> a.sq_shift);
            s_yy[r][t] = (uint32_t)(((unsigned long long)yy[r] + a.sq_round) >> a.sq_shift);
            s_xy[r][t] = (uint32_t)(((unsigned long long)xy[r] + a.sq_round) >> a.sq_shift);
        }
    }
    __syncthreads();
    long long acc[4] = {0, 0, 0, 0};
    const uint16_t *table = reinterpret_cast<const uint16_t *>(a.log2_table);
    // Quads: R rows of VIF_BX / 4, spread over the block's threads.
    for (int q = t; q < R * (VIF_BX / 4); q += VIF_THREADS) {
        const int r = q / (VIF_BX / 4);
        const int c = 4 * (q % (VIF_BX / 4));  // first of the quad's columns, in the block
        if (r >= nr || c >= n) continue;
        uint32_t mu1[4] = {0, 0, 0, 0}, mu2[4] = {0, 0, 0, 0};
        unsigned long long sxx[4] = {0, 0, 0, 0}, syy[4] = {0, 0, 0, 0}, sxy[4] = {0, 0, 0, 0};
        // One stream at a time: its 4 + TAPS - 1 values, then the four outputs' sums.
#define VIF_HSUM(ARR, SUM, WIDE)                                                                \
        {                                                                                       \
            uint32_t v[(4 + TAPS - 1 + 3) / 4 * 4];                                             \
            _Pragma("unroll") for (int u = 0; u < (4 + TAPS - 1 + 3) / 4; ++u) {                \
                const uint4 w4 = *reinterpret_cast<const uint4 *>(&ARR[r][c + 4 * u]);          \
                v[4 * u] = w4.x, v[4 * u + 1] = w4.y, v[4 * u + 2] = w4.z, v[4 * u + 3] = w4.w; \
            }                                                                                   \
            _Pragma("unroll") for (int o = 0; o < 4; ++o) {                                     \
                _Pragma("unroll") for (int k = 0; k < TAPS; ++k) {                              \
                    SUM[o] += (WIDE)VifFilter<S>::f(k) * v[o + k];                              \
                }                                                                               \
            }                                                                                   \
        }
        VIF_HSUM(s_mu1, mu1, uint32_t)
        VIF_HSUM(s_mu2, mu2, uint32_t)
        VIF_HSUM(s_xx, sxx, unsigned long long)
        VIF_HSUM(s_yy, syy, unsigned long long)
        VIF_HSUM(s_xy, sxy, unsigned long long)
#undef VIF_HSUM
#pragma unroll
        for (int o = 0; o < 4; ++o) {
            if (c + o >= n) break;
            const uint32_t mu1_sq = (uint32_t)(((unsigned long long)mu1[o] * mu1[o] + 2147483648ull) >> 32);
            const uint32_t mu2_sq = (uint32_t)(((unsigned long long)mu2[o] * mu2[o] + 2147483648ull) >> 32);
            const uint32_t mu1_mu2 = (uint32_t)(((unsigned long long)mu1[o] * mu2[o] + 2147483648ull) >> 32);
            const uint32_t xx_f = (uint32_t)((sxx[o] + 32768ull) >> 16);
            const uint32_t yy_f = (uint32_t)((syy[o] + 32768ull) >> 16);
            const uint32_t xy_f = (uint32_t)((sxy[o] + 32768ull) >> 16);
            vif_term((int32_t)(xx_f - mu1_sq), (int32_t)(yy_f - mu2_sq), (int32_t)(xy_f - mu1_mu2),
                     a, table, acc);
        }
    }
    long long *sums = reinterpret_cast<long long *>(a.sums);
#pragma unroll
    for (int q = 0; q < 4; ++q) {
        const unsigned long long tot = block_sum_u64((unsigned long long)acc[q], scratch);
        if (threadIdx.x == 0 && tot != 0) atomic_add_i64(sums + q, (long long)tot);
    }
}

#define VIF_STAT(T, TN, S)                                                                      \
    extern "C" __global__ void __launch_bounds__(VIF_THREADS) vmaf_vif_stat_##TN##_s##S(VifStatArgs a) { \
        vif_stat_impl<T, S>(a);                                                                 \
    }
VIF_STAT(uint8_t, u8, 0)
VIF_STAT(uint16_t, u16, 0)
VIF_STAT(uint16_t, u16, 1)
VIF_STAT(uint16_t, u16, 2)
VIF_STAT(uint16_t, u16, 3)

struct VifDownArgs {
    SrcPlane ref, dis;
    uint64_t out_ref, out_dis;  // uint16_t[(h/2) * (w/2)], row pitch w/2 samples
    int32_t w, h;               // source size
    uint32_t round, shift;      // vertical pass: (acc + round) >> shift, truncated to 16 bits
};
static_assert(sizeof(VifDownArgs) == 80, "ABI: keep in sync with src/cuda/kernels.rs");

// Threads per block of the downsampling (kernels.rs VIF_DOWN_THREADS): its vertical pass,
// 2 * (VIF_BX - 1) + TAPS columns, in one round.
#define VIF_DOWN_THREADS 288

// grid (ceil((w/2) / 128), ceil((h/2) / R)), block VIF_DOWN_THREADS, R = VifRows<S>::R: filters
// with the taps of scale S and keeps even rows and columns (vif::mod.rs `downsample`), R output
// rows per block, each input row loaded once for every output row it feeds.
template <typename T, int S>
__device__ void vif_down_impl(const VifDownArgs &a) {
    constexpr int TAPS = VifFilter<S>::TAPS;
    constexpr int HALF = TAPS / 2;
    constexpr int R = VifRows<S>::R;
    constexpr int N = 2 * VIF_BX + 2 * HALF;
    static_assert(2 * (VIF_BX - 1) + TAPS <= VIF_DOWN_THREADS, "one thread per column");
    __shared__ uint32_t lr[R][N], ld[R][N];
    const int wo = a.w / 2;
    const int k0 = blockIdx.y * R;
    const int nr = min(R, a.h / 2 - k0);
    const int m0 = blockIdx.x * VIF_BX;
    const int n = min(VIF_BX, wo - m0);
    const int ncols = 2 * (n - 1) + 2 * HALF + 1;
    const int t = threadIdx.x;
    if (t < ncols) {
        const int x = mirror_iter(2 * m0 - HALF + t, a.w);
        uint32_t ar[R], ad[R];
#pragma unroll
        for (int r = 0; r < R; ++r) ar[r] = ad[r] = 0;
#pragma unroll
        for (int y = 0; y < 2 * (R - 1) + TAPS; ++y) {
            const int row = mirror_iter(2 * k0 - HALF + y, a.h);
            const uint32_t X = load_px<T>(a.ref, x, row);
            const uint32_t Y = load_px<T>(a.dis, x, row);
#pragma unroll
            for (int r = 0; r < R; ++r) {
                const int k = y - 2 * r;
                if (k >= 0 && k < TAPS) {
                    const uint32_t f = VifFilter<S>::f(k);
                    ar[r] += f * X;
                    ad[r] += f * Y;
                }
            }
        }
#pragma unroll
        for (int r = 0; r < R; ++r) {
            lr[r][t] = (uint16_t)((ar[r] + a.round) >> a.shift);
            ld[r][t] = (uint16_t)((ad[r] + a.round) >> a.shift);
        }
    }
    __syncthreads();
    for (int q = t; q < R * VIF_BX; q += VIF_DOWN_THREADS) {
        const int r = q / VIF_BX, j = q % VIF_BX;
        if (r >= nr || j >= n) continue;
        const int s = 2 * j;
        uint32_t ar = 0, ad = 0;
#pragma unroll
        for (int k = 0; k < TAPS; ++k) {
            const uint32_t f = VifFilter<S>::f(k);
            ar += f * lr[r][s + k];
            ad += f * ld[r][s + k];
        }
        const uint64_t at = (uint64_t)(k0 + r) * wo + m0 + j;
        reinterpret_cast<uint16_t *>(a.out_ref)[at] = (uint16_t)((ar + 32768u) >> 16);
        reinterpret_cast<uint16_t *>(a.out_dis)[at] = (uint16_t)((ad + 32768u) >> 16);
    }
}

#define VIF_DOWN(T, TN, S)                                                                      \
    extern "C" __global__ void __launch_bounds__(VIF_DOWN_THREADS) vmaf_vif_down_##TN##_s##S(VifDownArgs a) { \
        vif_down_impl<T, S>(a);                                                                 \
    }
VIF_DOWN(uint8_t, u8, 1)
VIF_DOWN(uint16_t, u16, 1)
VIF_DOWN(uint16_t, u16, 2)
VIF_DOWN(uint16_t, u16, 3)
