// Integer ADM at four scales. Specification: src/feature/adm/scalar/ (dwt2_s0, dwt2_s123,
// decouple_s0/_s123, csf_s0/_s123, csf_den_s0/_s123, cm_s0/_s123), itself a port of libvmaf's
// integer_adm.c.
//
// Per scale, two kernels:
//   adm_dwt_*:  DWT of reference and distorted (both in one thread), the reference's denominator
//               terms (per-row sums), and the decoupling into restored (r) and additive (a) bands;
//   adm_cm:     contrast masking of r against the CSF of a (DLM numerator) and of a against the
//               CSF of r (AIM numerator), per-row sums.
// then adm_finish turns every per-row sum into libvmaf's rounded row total (integers only); the
// host does the few float steps (powf, pow) exactly as the CPU does.
#include "common.cuh"

// Daubechies-2 analysis taps, Q15 (libvmaf dwt2_db2_coeffs_lo/_hi, = adm::tables::DB2_LO/_HI).
__constant__ int32_t ADM_LO[4] = {15826, 27411, 7345, -4240};
__constant__ int32_t ADM_HI[4] = {-4240, -7345, 27411, -15826};
#define ADM_LO_SUM 46342
#define ADM_BX 128

// DWT source index: 2i-1+k reflected with the edge sample repeated at the far end (libvmaf
// dwt2_src_indices_filt: -1 -> 1, n + m -> n - 1 - m).
// For n < 5, where libvmaf reads outside the plane, the index is clamped into range (as
// adm::scalar::dwt_indices does).
VMAF_RS_DEV int adm_dwt_idx(int v, int n) {
    if (v < 0) v = -v;
    if (v >= n) v = 2 * n - v - 1;
    return v < 0 ? 0 : (v > n - 1 ? n - 1 : v);
}

struct AdmDwtArgs {
    SrcPlane ref, dis;       // scale 0: the input luma; scales 1..3: band_a of the previous scale
    uint64_t out_a_ref, out_a_dis;  // int32_t[oh * ow]: band a (input of the next scale)
    uint64_t r[3], a[3];     // int32_t[oh * ow]: decoupled bands h, v, d
    uint64_t den_rows;       // uint64_t[3 * oh]: per-row denominator sums (h, v, d)
    uint64_t div_lookup;     // int32_t[65537], adm::tables::DIV_LOOKUP
    double gain_limit;
    float cos1_sq;           // adm::tables::COS_1DEG_SQ
    int32_t w, h;            // input size
    int32_t ow, oh;          // band size ((w + 1) / 2, (h + 1) / 2)
    int32_t vp_add, vp_shift;      // vertical pass rounding (scale 0: 8-bit 128/8, else 2^(bpc-1)/bpc)
    int32_t hp_add, hp_shift;      // horizontal pass rounding (scales 1..3)
    int32_t den_left, den_right, den_top, den_bottom;
    uint32_t den_add_sq, den_shift_sq, den_add_cub, den_shift_cub;  // scales 1..3
    int32_t scale;
    // Scale 0 only: reproduce libvmaf's x86 SIMD last output column (adm::scalar::dwt2_s0,
    // s0_last_column_unmirrored): its low-pass taps past the row read the same row's
    // vertical high-pass values at columns 0, 1 instead of mirrored ones.
    int32_t s0_unmirrored;
};
static_assert(sizeof(AdmDwtArgs) == 216, "ABI: keep in sync with src/cuda/kernels.rs");

VMAF_RS_DEV bool adm_angle_flag(long long ot_dp, long long o_mag_sq, long long t_mag_sq, float cos1) {
    // libvmaf converts each int64 to float, then divides by the double 4096.0 (in double).
    const double dp = __ddiv_rn((double)__ll2float_rn(ot_dp), 4096.0);
    const double om = __ddiv_rn((double)__ll2float_rn(o_mag_sq), 4096.0);
    const double tm = __ddiv_rn((double)__ll2float_rn(t_mag_sq), 4096.0);
    return dp >= 0.0 && __dmul_rn(dp, dp) >= __dmul_rn(__dmul_rn((double)cos1, om), tm);
}

// Applies the enhancement-gain clamp of adm_decouple: MIN/MAX against the distorted coefficient
// in double, converted back by truncation.
VMAF_RS_DEV long long adm_gain_clamp(long long rst, long long t, bool angle, float rst_f, double egl) {
    const double g = __dmul_rn((double)rst, egl);
    const double td = (double)t;
    if (angle && rst_f > 0.0f) rst = d2ll_trunc(g < td ? g : td);
    if (angle && rst_f < 0.0f) rst = d2ll_trunc(g > td ? g : td);
    return rst;
}

// adm_decouple (scale 0, int16 coefficients).
VMAF_RS_DEV void adm_decouple16(int32_t o, int32_t t, bool angle, const int32_t *div, double egl,
                                int32_t *r_out, int32_t *a_out) {
    int32_t tmp_k = o == 0 ? 32768
                           : (int32_t)(((long long)__ldg(div + o + 32768) * t + 16384) >> 15);
    const int32_t k = tmp_k < 0 ? 0 : (tmp_k > 32768 ? 32768 : tmp_k);
    int16_t rst = (int16_t)((k * o + 16384) >> 15);
    const float rst_f = __fmul_rn(__fdiv_rn((float)k, 32768.0f), __fdiv_rn((float)o, 64.0f));
    rst = (int16_t)adm_gain_clamp(rst, t, angle, rst_f, egl);
    *r_out = rst;
    *a_out = (int16_t)(t - rst);
}

// adm_decouple_s123 (int32 coefficients; division through a 15-bit normalised reciprocal).
VMAF_RS_DEV void adm_decouple32(int32_t o, int32_t t, bool angle, const int32_t *div, double egl,
                                int32_t *r_out, int32_t *a_out) {
    long long tmp_k;
    if (o == 0) {
        tmp_k = 32768;
    } else {
        const uint32_t ab = o < 0 ? (uint32_t)0 - (uint32_t)o : (uint32_t)o;
        const long long sign = o < 0 ? -1 : 1;
        int sh = 0;
        uint32_t msb = ab;
        if (ab >= 32768u) {
            sh = 17 - __clz(ab);
            msb = (uint16_t)((ab + (1u << (sh - 1))) >> sh);
        }
        const long long add = (long long)(int32_t)(1u << (14 + sh));
        tmp_k = ((long long)__ldg(div + msb + 32768) * t * sign + add) >> (15 + sh);
    }
    const long long k = tmp_k < 0 ? 0 : (tmp_k > 32768 ? 32768 : tmp_k);
    int32_t rst = (int32_t)((k * o + 16384) >> 15);
    const float rst_f = __fmul_rn(__fdiv_rn((float)k, 32768.0f), __fdiv_rn((float)o, 64.0f));
    rst = (int32_t)adm_gain_clamp(rst, t, angle, rst_f, egl);
    *r_out = rst;
    *a_out = (int32_t)((uint32_t)t - (uint32_t)rst);
}

// Scale-0 vertical pass of source column x (rows = the four source rows): low- and high-pass of
// reference and distorted, centred and rounded by bpc bits into int16 (adm::scalar
// dwt_s0_vertical).
template <typename T>
VMAF_RS_DEV void adm_vertical_s0(const AdmDwtArgs &a, int x, const int rows[4], int32_t *lo_r,
                                 int32_t *hi_r, int32_t *lo_d, int32_t *hi_d) {
    uint32_t lr = 0, hr = 0, ld = 0, hd = 0;
#pragma unroll
    for (int k = 0; k < 4; ++k) {
        const int32_t ur = (int32_t)load_px<T>(a.ref, x, rows[k]);
        const int32_t ud = (int32_t)load_px<T>(a.dis, x, rows[k]);
        lr += (uint32_t)(ADM_LO[k] * ur);
        hr += (uint32_t)(ADM_HI[k] * ur);
        ld += (uint32_t)(ADM_LO[k] * ud);
        hd += (uint32_t)(ADM_HI[k] * ud);
    }
    const uint32_t off = (uint32_t)(ADM_LO_SUM * a.vp_add);
    *lo_r = (int16_t)((int32_t)(lr - off + (uint32_t)a.vp_add) >> a.vp_shift);
    *lo_d = (int16_t)((int32_t)(ld - off + (uint32_t)a.vp_add) >> a.vp_shift);
    *hi_r = (int16_t)((int32_t)(hr + (uint32_t)a.vp_add) >> a.vp_shift);
    *hi_d = (int16_t)((int32_t)(hd + (uint32_t)a.vp_add) >> a.vp_shift);
}

// grid (ceil(ow / 128), oh), block 128. Output row i, columns [j0, j0 + 128).
// S0 = true: scale 0 on T samples (int16 arithmetic); false: scales 1..3 on int32 band a.
template <typename T, bool S0>
__device__ void adm_dwt_impl(const AdmDwtArgs &a) {
    constexpr int N = 2 * ADM_BX + 2;
    __shared__ int32_t lo_r[N], hi_r[N], lo_d[N], hi_d[N];
    __shared__ unsigned long long scratch[32];
    const int i = blockIdx.y;
    const int j0 = blockIdx.x * ADM_BX;
    const int n = min(ADM_BX, a.ow - j0);
    int rows[4];
#pragma unroll
    for (int k = 0; k < 4; ++k) rows[k] = adm_dwt_idx(2 * i - 1 + k, a.h);
    // Vertical pass for the source columns 2*j0-1 .. 2*(j0+n-1)+2.
    for (int t = threadIdx.x; t < 2 * n + 2; t += blockDim.x) {
        const int x = adm_dwt_idx(2 * j0 - 1 + t, a.w);
        if (S0) {
            adm_vertical_s0<T>(a, x, rows, &lo_r[t], &hi_r[t], &lo_d[t], &hi_d[t]);
        } else {
            const int32_t *pr = reinterpret_cast<const int32_t *>(a.ref.ptr);
            const int32_t *pd = reinterpret_cast<const int32_t *>(a.dis.ptr);
            const uint64_t stride = a.ref.pitch / 4;
            long long lr = 0, hr = 0, ld = 0, hd = 0;
#pragma unroll
            for (int k = 0; k < 4; ++k) {
                const long long ur = __ldg(pr + rows[k] * stride + x);
                const long long ud = __ldg(pd + rows[k] * stride + x);
                lr += (long long)ADM_LO[k] * ur;
                hr += (long long)ADM_HI[k] * ur;
                ld += (long long)ADM_LO[k] * ud;
                hd += (long long)ADM_HI[k] * ud;
            }
            lo_r[t] = (int32_t)((lr + a.vp_add) >> a.vp_shift);
            hi_r[t] = (int32_t)((hr + a.vp_add) >> a.vp_shift);
            lo_d[t] = (int32_t)((ld + a.vp_add) >> a.vp_shift);
            hi_d[t] = (int32_t)((hd + a.vp_add) >> a.vp_shift);
        }
    }
    __syncthreads();
    unsigned long long den[3] = {0, 0, 0};
    const int j = j0 + threadIdx.x;
    if ((int)threadIdx.x < n) {
        const int s = 2 * threadIdx.x;  // shared index of source column 2j-1
        // Bands: a = lo(lo), v = hi(lo), h = lo(hi), d = hi(hi).
        int32_t ref_b[4], dis_b[4];
        if (S0) {
            uint32_t acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
#pragma unroll
            for (int k = 0; k < 4; ++k) {
                acc[0] += (uint32_t)(ADM_LO[k] * lo_r[s + k]);
                acc[1] += (uint32_t)(ADM_HI[k] * lo_r[s + k]);
                acc[2] += (uint32_t)(ADM_LO[k] * hi_r[s + k]);
                acc[3] += (uint32_t)(ADM_HI[k] * hi_r[s + k]);
                acc[4] += (uint32_t)(ADM_LO[k] * lo_d[s + k]);
                acc[5] += (uint32_t)(ADM_HI[k] * lo_d[s + k]);
                acc[6] += (uint32_t)(ADM_LO[k] * hi_d[s + k]);
                acc[7] += (uint32_t)(ADM_HI[k] * hi_d[s + k]);
            }
            // order a, v, h, d
#pragma unroll
            for (int q = 0; q < 4; ++q) {
                ref_b[q] = (int16_t)((int32_t)(acc[q] + 32768u) >> 16);
                dis_b[q] = (int16_t)((int32_t)(acc[4 + q] + 32768u) >> 16);
            }
            if (a.s0_unmirrored && j == a.ow - 1) {
                // SIMD last column: low-pass taps past the row continue into the same row's
                // vertical high-pass values (columns 0, 1); bands a and v only.
                int32_t tr[4], td[4];
#pragma unroll
                for (int k = 0; k < 4; ++k) {
                    const int x = 2 * j - 1 + k;
                    if (x < a.w) {
                        tr[k] = lo_r[s + k];
                        td[k] = lo_d[s + k];
                    } else {
                        int32_t l_r, h_r, l_d, h_d;
                        adm_vertical_s0<T>(a, x - a.w, rows, &l_r, &h_r, &l_d, &h_d);
                        tr[k] = h_r;
                        td[k] = h_d;
                    }
                }
                uint32_t ar = 0, vr = 0, ad = 0, vd = 0;
#pragma unroll
                for (int k = 0; k < 4; ++k) {
                    ar += (uint32_t)(ADM_LO[k] * tr[k]);
                    vr += (uint32_t)(ADM_HI[k] * tr[k]);
                    ad += (uint32_t)(ADM_LO[k] * td[k]);
                    vd += (uint32_t)(ADM_HI[k] * td[k]);
                }
                ref_b[0] = (int16_t)((int32_t)(ar + 32768u) >> 16);
                ref_b[1] = (int16_t)((int32_t)(vr + 32768u) >> 16);
                dis_b[0] = (int16_t)((int32_t)(ad + 32768u) >> 16);
                dis_b[1] = (int16_t)((int32_t)(vd + 32768u) >> 16);
            }
        } else {
            long long acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
#pragma unroll
            for (int k = 0; k < 4; ++k) {
                acc[0] += (long long)ADM_LO[k] * lo_r[s + k];
                acc[1] += (long long)ADM_HI[k] * lo_r[s + k];
                acc[2] += (long long)ADM_LO[k] * hi_r[s + k];
                acc[3] += (long long)ADM_HI[k] * hi_r[s + k];
                acc[4] += (long long)ADM_LO[k] * lo_d[s + k];
                acc[5] += (long long)ADM_HI[k] * lo_d[s + k];
                acc[6] += (long long)ADM_LO[k] * hi_d[s + k];
                acc[7] += (long long)ADM_HI[k] * hi_d[s + k];
            }
#pragma unroll
            for (int q = 0; q < 4; ++q) {
                ref_b[q] = (int32_t)((acc[q] + a.hp_add) >> a.hp_shift);
                dis_b[q] = (int32_t)((acc[4 + q] + a.hp_add) >> a.hp_shift);
            }
        }
        const uint64_t at = (uint64_t)i * a.ow + j;
        reinterpret_cast<int32_t *>(a.out_a_ref)[at] = ref_b[0];
        reinterpret_cast<int32_t *>(a.out_a_dis)[at] = dis_b[0];
        // h, v, d as libvmaf's band_h, band_v, band_d
        const int32_t oh_ = ref_b[2], ov = ref_b[1], od = ref_b[3];
        const int32_t th = dis_b[2], tv = dis_b[1], td = dis_b[3];
        // Denominator: reference coefficients cubed, inside the border.
        if (i >= a.den_top && i < a.den_bottom && j >= a.den_left && j < a.den_right) {
            const int32_t o3[3] = {oh_, ov, od};
#pragma unroll
            for (int q = 0; q < 3; ++q) {
                if (S0) {
                    const unsigned long long v = (uint16_t)(o3[q] < 0 ? -o3[q] : o3[q]);
                    den[q] = v * v * v;
                } else {
                    const unsigned long long v = o3[q] < 0 ? (uint32_t)0 - (uint32_t)o3[q] : (uint32_t)o3[q];
                    den[q] = ((((v * v + a.den_add_sq) >> a.den_shift_sq) * v) + a.den_add_cub) >> a.den_shift_cub;
                }
            }
        }
        const long long ot_dp = (long long)oh_ * th + (long long)ov * tv;
        const long long o_mag_sq = (long long)oh_ * oh_ + (long long)ov * ov;
        const long long t_mag_sq = (long long)th * th + (long long)tv * tv;
        const bool angle = adm_angle_flag(ot_dp, o_mag_sq, t_mag_sq, a.cos1_sq);
        const int32_t *div = reinterpret_cast<const int32_t *>(a.div_lookup);
        const int32_t o3[3] = {oh_, ov, od};
        const int32_t t3[3] = {th, tv, td};
#pragma unroll
        for (int q = 0; q < 3; ++q) {
            int32_t rr, aa;
            if (S0) adm_decouple16(o3[q], t3[q], angle, div, a.gain_limit, &rr, &aa);
            else adm_decouple32(o3[q], t3[q], angle, div, a.gain_limit, &rr, &aa);
            reinterpret_cast<int32_t *>(a.r[q])[at] = rr;
            reinterpret_cast<int32_t *>(a.a[q])[at] = aa;
        }
    }
    if (i >= a.den_top && i < a.den_bottom) {
        unsigned long long *rows_out = reinterpret_cast<unsigned long long *>(a.den_rows);
#pragma unroll
        for (int q = 0; q < 3; ++q) {
            const unsigned long long tot = block_sum_u64(den[q], scratch);
            if (threadIdx.x == 0 && tot != 0) atomicAdd(rows_out + (uint64_t)q * a.oh + i, tot);
        }
    }
}

extern "C" __global__ void __launch_bounds__(ADM_BX) vmaf_adm_dwt_u8_s0(AdmDwtArgs a) {
    adm_dwt_impl<uint8_t, true>(a);
}
extern "C" __global__ void __launch_bounds__(ADM_BX) vmaf_adm_dwt_u16_s0(AdmDwtArgs a) {
    adm_dwt_impl<uint16_t, true>(a);
}
extern "C" __global__ void __launch_bounds__(ADM_BX) vmaf_adm_dwt_s123(AdmDwtArgs a) {
    adm_dwt_impl<int32_t, false>(a);
}

struct AdmCmArgs {
    uint64_t r[3], a[3];   // int32_t[h * w] decoupled bands h, v, d
    uint64_t rows;         // int64_t[6 * h]: per-row sums, DLM h, v, d then AIM h, v, d
    int32_t w, h;          // band size
    int32_t left, right, top, bottom;
    uint32_t rfactor[3];   // scale 0: i_rfactor (u16 values); scales 1..3: (u32)(rfactor * 2^32)
    uint32_t add_cub[3], shift_cub[3];
    int32_t scale, pad_;
};
static_assert(sizeof(AdmCmArgs) == 128, "ABI: keep in sync with src/cuda/kernels.rs");

// CSF value and its two filtered forms (neighbour term, centre term) of one coefficient.
template <bool S0>
VMAF_RS_DEV void adm_csf(int32_t v, int band, const AdmCmArgs &a, int32_t *flt, int32_t *ctr) {
    if (S0) {
        const int shifts[3] = {15, 15, 17};
        const int adds[3] = {16384, 16384, 65535};
        const int32_t dst = (int32_t)(a.rfactor[band] * (uint32_t)v);
        const int32_t c = (int16_t)((int32_t)((uint32_t)dst + (uint32_t)adds[band]) >> shifts[band]);
        const int32_t ac = c < 0 ? -c : c;
        *flt = (int16_t)((4369 * ac + 2048) >> 12);   // FIX_ONE_BY_30, Q17 -> >> 12
        *ctr = (int16_t)((8738 * ac + 2048) >> 12);   // ONE_BY_15
    } else {
        const int32_t c = (int32_t)(((long long)a.rfactor[band] * v + (1ll << 27)) >> 28);
        // Rust's i32::wrapping_abs, sign-extended (as adm::scalar).
        const long long ac = (long long)(int32_t)(c < 0 ? (uint32_t)0 - (uint32_t)c : (uint32_t)c);
        // libvmaf's rounding constant here is (int32_t)(1u << 31), i.e. -2^31.
        *flt = (int32_t)((143165577ll * ac - 2147483648ll) >> 32);  // I4 FIX_ONE_BY_30
        *ctr = (int32_t)((286331153ll * ac - 2147483648ll) >> 32);  // I4_ONE_BY_15
    }
}

// libvmaf's mirrored neighbours of index i in 0..n: i - 1 and i + 1, with -1 -> 1 and n -> n - 1
// (0 -> (1, 1), n-1 -> (n-2, n-1); (0, 0) when n == 1). `v` is i - 1, i or i + 1.
VMAF_RS_DEV int adm_cm_idx(int v, int n) {
    if (v < 0) return n > 1 ? 1 : 0;
    return v > n - 1 ? n - 1 : v;
}

// Rows of one contrast-masking block (kernels.rs ADM_CM_ROWS); its ADM_BX threads are 16 per row,
// each taking every 16th of the row's 128 columns.
#define ADM_CM_ROWS 8
#define ADM_CM_LANES (ADM_BX / ADM_CM_ROWS)

// grid (ceil((right - left) / 128), ceil((bottom - top) / ADM_CM_ROWS)), block ADM_BX: contrast
// masking sums of ADM_CM_ROWS rows of 128 columns. The neighbour (CSF) terms of the tile and its
// border are computed once, summed over the three bands, into shared memory; each coefficient's
// masking threshold then sums 8 of them and its own three centre terms (u32, wrapping: any order).
// libvmaf visits the single column of a 1-wide band twice (as its first and its last column),
// and the single row of a 1-high band twice (adm_finish doubles that row).
template <bool S0>
__device__ void adm_cm_impl(const AdmCmArgs &a) {
    constexpr int R = ADM_CM_ROWS;
    constexpr int W = ADM_BX + 2;
    static_assert(R * ADM_CM_LANES == ADM_BX && ADM_CM_LANES <= 32 && (32 % ADM_CM_LANES) == 0, "lanes");
    // [0]: the CSF of a (DLM threshold), [1]: the CSF of r (AIM threshold).
    __shared__ uint32_t nb[2][R + 2][W];
    const int i0 = a.top + blockIdx.y * R;
    const int nr = min(R, a.bottom - i0);
    const int j0 = a.left + blockIdx.x * ADM_BX;
    const int n = min(ADM_BX, a.right - j0);
    for (int p = threadIdx.x; p < (nr + 2) * (n + 2); p += ADM_BX) {
        const int v = p / (n + 2), u = p % (n + 2);
        const uint64_t at = (uint64_t)adm_cm_idx(i0 - 1 + v, a.h) * a.w + adm_cm_idx(j0 - 1 + u, a.w);
        uint32_t s0 = 0, s1 = 0;
#pragma unroll
        for (int b = 0; b < 3; ++b) {
            int32_t flt, ctr;
            adm_csf<S0>(__ldg(reinterpret_cast<const int32_t *>(a.a[b]) + at), b, a, &flt, &ctr);
            s0 += (uint32_t)flt;
            adm_csf<S0>(__ldg(reinterpret_cast<const int32_t *>(a.r[b]) + at), b, a, &flt, &ctr);
            s1 += (uint32_t)flt;
        }
        nb[0][v][u] = s0;
        nb[1][v][u] = s1;
    }
    __syncthreads();
    const int r = threadIdx.x / ADM_CM_LANES;
    const int lane = threadIdx.x % ADM_CM_LANES;
    unsigned long long acc[6] = {0, 0, 0, 0, 0, 0};  // wrapping sums, as the atomics
    if (r < nr) {
        const int i = i0 + r;
        for (int c = lane; c < n; c += ADM_CM_LANES) {
            const uint64_t at = (uint64_t)i * a.w + j0 + c;
            uint32_t thr[2];
#pragma unroll
            for (int m = 0; m < 2; ++m) {
                thr[m] = nb[m][r][c] + nb[m][r][c + 1] + nb[m][r][c + 2] + nb[m][r + 1][c] +
                         nb[m][r + 1][c + 2] + nb[m][r + 2][c] + nb[m][r + 2][c + 1] + nb[m][r + 2][c + 2];
            }
            int32_t xa[3], xr[3];
#pragma unroll
            for (int b = 0; b < 3; ++b) {
                xa[b] = __ldg(reinterpret_cast<const int32_t *>(a.a[b]) + at);
                xr[b] = __ldg(reinterpret_cast<const int32_t *>(a.r[b]) + at);
                int32_t flt, ctr;
                adm_csf<S0>(xa[b], b, a, &flt, &ctr);
                thr[0] += (uint32_t)ctr;
                adm_csf<S0>(xr[b], b, a, &flt, &ctr);
                thr[1] += (uint32_t)ctr;
            }
#pragma unroll
            for (int b = 0; b < 3; ++b) {
                // DLM: x from r, threshold from a; AIM: x from a, threshold from r.
                const int32_t xsrc[2] = {xr[b], xa[b]};
#pragma unroll
                for (int m = 0; m < 2; ++m) {
                    int32_t x;
                    long long xm;
                    int32_t x_sq;
                    if (S0) {
                        x = (int32_t)(a.rfactor[b] * (uint32_t)xsrc[m]);
                        const int sub_shift = b == 2 ? 12 : 10;
                        const long long sq_add = b == 2 ? 536870912ll : 268435456ll;
                        const int sq_shift = b == 2 ? 30 : 29;
                        xm = (long long)(x < 0 ? -(long long)x : (long long)x) -
                             (long long)(int32_t)(thr[m] << sub_shift);
                        // C: int32 arithmetic; values stay in range for valid input.
                        x = (int32_t)xm;
                        x = x < 0 ? 0 : x;
                        x_sq = (int32_t)(((long long)x * x + sq_add) >> sq_shift);
                    } else {
                        x = (int32_t)(((long long)xsrc[m] * a.rfactor[b] + (1ll << 27)) >> 28);
                        xm = (long long)(x < 0 ? -(long long)x : (long long)x) - (long long)(int32_t)thr[m];
                        x = (int32_t)xm;
                        x = x < 0 ? 0 : x;
                        x_sq = (int32_t)(((long long)x * x + 536870912ll) >> 30);
                    }
                    long long v = ((long long)x_sq * x + (long long)a.add_cub[b]) >> a.shift_cub[b];
                    if (a.w == 1) v *= 2;
                    acc[m * 3 + b] += (unsigned long long)v;
                }
            }
        }
    }
    // Per row: the sum over its ADM_CM_LANES threads (consecutive lanes of one warp), then one
    // atomic per quantity.
    long long *rows = reinterpret_cast<long long *>(a.rows);
#pragma unroll
    for (int q = 0; q < 6; ++q) {
        unsigned long long v = acc[q];
#pragma unroll
        for (int o = ADM_CM_LANES / 2; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o, ADM_CM_LANES);
        if (lane == 0 && r < nr && v != 0) atomic_add_i64(rows + (uint64_t)q * a.h + i0 + r, (long long)v);
    }
}

extern "C" __global__ void __launch_bounds__(ADM_BX) vmaf_adm_cm_s0(AdmCmArgs a) { adm_cm_impl<true>(a); }
extern "C" __global__ void __launch_bounds__(ADM_BX) vmaf_adm_cm_s123(AdmCmArgs a) { adm_cm_impl<false>(a); }

struct AdmFinishArgs {
    uint64_t rows[4];      // per scale: 9 * h[s] row sums (6 CM as int64, then 3 den as uint64)
    uint64_t out;          // uint64_t[4 * 9]: the rounded row totals, scale-major
    int32_t h[4];
    uint32_t shift[4][9];
    uint32_t add[4][9];
};
static_assert(sizeof(AdmFinishArgs) == 344, "ABI: keep in sync with src/cuda/kernels.rs");

// grid (9, 4), block 256: for quantity q of scale s, sum over rows of (row + add) >> shift
// (arithmetic shift for the signed CM sums, logical for the unsigned denominator sums). The host
// passes every shift already masked to 0..63 (x86 shift semantics, as adm::scalar).
extern "C" __global__ void __launch_bounds__(256) vmaf_adm_finish(AdmFinishArgs a) {
    __shared__ unsigned long long scratch[32];
    const int q = blockIdx.x, s = blockIdx.y;
    const int h = a.h[s];
    const uint32_t sh = a.shift[s][q];
    const uint32_t add = a.add[s][q];
    const unsigned long long *rows = reinterpret_cast<const unsigned long long *>(a.rows[s]) + (uint64_t)q * h;
    unsigned long long tot = 0;
    for (int i = threadIdx.x; i < h; i += blockDim.x) {
        const unsigned long long v = rows[i];
        if (q < 6) tot += (unsigned long long)(((long long)v + (long long)add) >> sh);
        else tot += (v + add) >> sh;
    }
    if (q < 6 && h == 1) tot *= 2;  // the row of a 1-high band is visited twice (see adm_cm)
    tot = block_sum_u64(tot, scratch);
    if (threadIdx.x == 0) reinterpret_cast<unsigned long long *>(a.out)[s * 9 + q] = tot;
}
