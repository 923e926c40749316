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

// grid (ceil(w / 128), h), block 128: the statistic of row i for 128 columns, accumulated into
// a.sums. T is the sample type of the planes (8-bit input, or 16-bit input / our scale buffers).
template <typename T, int S>
__device__ void vif_stat_impl(const VifStatArgs &a) {
    constexpr int TAPS = VifFilter<S>::TAPS;
    constexpr int HALF = TAPS / 2;
    constexpr int N = VIF_BX + 2 * HALF;
    __shared__ uint32_t s_mu1[N], s_mu2[N], s_xx[N], s_yy[N], s_xy[N];
    __shared__ unsigned long long scratch[32];
    const int i = blockIdx.y;
    const int x0 = blockIdx.x * VIF_BX;
    const int n = min(VIF_BX, a.w - x0);
    int rows[TAPS];
#pragma unroll
    for (int k = 0; k < TAPS; ++k) rows[k] = mirror_iter(i - HALF + k, a.h);
    for (int t = threadIdx.x; t < n + 2 * HALF; t += blockDim.x) {
        const int x = mirror_iter(x0 - HALF + t, a.w);
        uint32_t m1 = 0, m2 = 0;
        unsigned long long xx = 0, yy = 0, xy = 0;
#pragma unroll
        for (int k = 0; k < TAPS; ++k) {
            const uint32_t f = VifFilter<S>::f(k);
            const uint32_t X = load_px<T>(a.ref, x, rows[k]);
            const uint32_t Y = load_px<T>(a.dis, x, rows[k]);
            const uint32_t fx = f * X, fy = f * Y;
            m1 += fx;
            m2 += fy;
            xx += (unsigned long long)fx * X;
            yy += (unsigned long long)fy * Y;
            xy += (unsigned long long)fx * Y;
        }
        s_mu1[t] = (uint16_t)((m1 + a.mu_round) >> a.mu_shift);
        s_mu2[t] = (uint16_t)((m2 + a.mu_round) >> a.mu_shift);
        s_xx[t] = (uint32_t)((xx + a.sq_round) >> a.sq_shift);
        s_yy[t] = (uint32_t)((yy + a.sq_round) >> a.sq_shift);
        s_xy[t] = (uint32_t)((xy + a.sq_round) >> a.sq_shift);
    }
    __syncthreads();
    long long acc[4] = {0, 0, 0, 0};
    if ((int)threadIdx.x < n) {
        const int s = threadIdx.x;
        uint32_t mu1 = 0, mu2 = 0;
        unsigned long long xx = 0, yy = 0, xy = 0;
#pragma unroll
        for (int k = 0; k < TAPS; ++k) {
            const uint32_t f = VifFilter<S>::f(k);
            mu1 += f * s_mu1[s + k];
            mu2 += f * s_mu2[s + k];
            xx += (unsigned long long)f * s_xx[s + k];
            yy += (unsigned long long)f * s_yy[s + k];
            xy += (unsigned long long)f * s_xy[s + k];
        }
        const uint32_t mu1_sq = (uint32_t)(((unsigned long long)mu1 * mu1 + 2147483648ull) >> 32);
        const uint32_t mu2_sq = (uint32_t)(((unsigned long long)mu2 * mu2 + 2147483648ull) >> 32);
        const uint32_t mu1_mu2 = (uint32_t)(((unsigned long long)mu1 * mu2 + 2147483648ull) >> 32);
        const uint32_t xx_f = (uint32_t)((xx + 32768ull) >> 16);
        const uint32_t yy_f = (uint32_t)((yy + 32768ull) >> 16);
        const uint32_t xy_f = (uint32_t)((xy + 32768ull) >> 16);
        vif_term((int32_t)(xx_f - mu1_sq), (int32_t)(yy_f - mu2_sq), (int32_t)(xy_f - mu1_mu2), a,
                 reinterpret_cast<const uint16_t *>(a.log2_table), acc);
    }
    long long *sums = reinterpret_cast<long long *>(a.sums);
#pragma unroll
    for (int q = 0; q < 4; ++q) {
        const unsigned long long tot = block_sum_u64((unsigned long long)acc[q], scratch);
        if (threadIdx.x == 0 && tot != 0) atomic_add_i64(sums + q, (long long)tot);
    }
}

#define VIF_STAT(T, TN, S)                                                                      \
    extern "C" __global__ void __launch_bounds__(VIF_BX) vmaf_vif_stat_##TN##_s##S(VifStatArgs a) { \
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

// grid (ceil((w/2) / 128), h/2), block 128: filters with the taps of scale S and keeps even rows
// and columns (vif::mod.rs `downsample`).
template <typename T, int S>
__device__ void vif_down_impl(const VifDownArgs &a) {
    constexpr int TAPS = VifFilter<S>::TAPS;
    constexpr int HALF = TAPS / 2;
    constexpr int N = 2 * VIF_BX + 2 * HALF;
    __shared__ uint32_t lr[N], ld[N];
    const int wo = a.w / 2;
    const int k_out = blockIdx.y;
    const int m0 = blockIdx.x * VIF_BX;
    const int n = min(VIF_BX, wo - m0);
    int rows[TAPS];
#pragma unroll
    for (int k = 0; k < TAPS; ++k) rows[k] = mirror_iter(2 * k_out - HALF + k, a.h);
    const int ncols = 2 * (n - 1) + 2 * HALF + 1;
    for (int t = threadIdx.x; t < ncols; t += blockDim.x) {
        const int x = mirror_iter(2 * m0 - HALF + t, a.w);
        uint32_t ar = 0, ad = 0;
#pragma unroll
        for (int k = 0; k < TAPS; ++k) {
            const uint32_t f = VifFilter<S>::f(k);
            ar += f * load_px<T>(a.ref, x, rows[k]);
            ad += f * load_px<T>(a.dis, x, rows[k]);
        }
        lr[t] = (uint16_t)((ar + a.round) >> a.shift);
        ld[t] = (uint16_t)((ad + a.round) >> a.shift);
    }
    __syncthreads();
    if ((int)threadIdx.x < n) {
        const int s = 2 * threadIdx.x;
        uint32_t ar = 0, ad = 0;
#pragma unroll
        for (int k = 0; k < TAPS; ++k) {
            const uint32_t f = VifFilter<S>::f(k);
            ar += f * lr[s + k];
            ad += f * ld[s + k];
        }
        const uint64_t at = (uint64_t)k_out * wo + m0 + threadIdx.x;
        reinterpret_cast<uint16_t *>(a.out_ref)[at] = (uint16_t)((ar + 32768u) >> 16);
        reinterpret_cast<uint16_t *>(a.out_dis)[at] = (uint16_t)((ad + 32768u) >> 16);
    }
}

#define VIF_DOWN(T, TN, S)                                                                      \
    extern "C" __global__ void __launch_bounds__(VIF_BX) vmaf_vif_down_##TN##_s##S(VifDownArgs a) { \
        vif_down_impl<T, S>(a);                                                                 \
    }
VIF_DOWN(uint8_t, u8, 1)
VIF_DOWN(uint16_t, u16, 1)
VIF_DOWN(uint16_t, u16, 2)
VIF_DOWN(uint16_t, u16, 3)
