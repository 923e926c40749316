// float_adm: libvmaf's float ADM (the db2 DWT of every scale, decoupling, CSF weighting, contrast
// masking and the per-row sums of the cubed bands). Specification: src/feature/float_adm/scalar.rs
// (`src_indices`, `dwt2`, `decouple`, `csf`, `den_scale`, `cm`), `picture_copy::to_float` and
// src/feature/float_adm/rcp.rs (the decoupling's RCPSS, looked up in the host CPU's table).
// Every step is one rounded f32/f64 operation in the CPU's order (__fadd_rn/__fmul_rn/...;
// the fatbin is built with --fmad=false): taps from 0 in tap order, masking sums in the CPU's
// neighbour order, each row's sum from 0 in column order by one thread, the rows' sums in row
// order by one thread. Only adm_p_norm = 3 (cubes) runs here; the powf of the sums is the host's.
#include "common.cuh"

#define FADM_BX 128

// ---------------------------------------------------------------------------------------------
// DWT

struct FloatAdmDwtArgs {
    SrcPlane src[2];     // scale 0: the frames' luma planes (reference, distorted)
    uint64_t level[2];   // scales 1-3: float band a of the previous scale (stride bs)
    uint64_t tlo[2];     // float[out_h][in_w]: the vertical low pass (per picture)
    uint64_t thi[2];     // float[out_h][in_w]: the vertical high pass
    uint64_t a[2];       // float band a out (stride bs)
    uint64_t hvd[2][3];  // float bands h, v, d out (stride bs)
    float lo[4];         // the db2 taps as float
    float hi[4];
    int32_t in_w, in_h;  // the source's size
    int32_t out_w, out_h;
    int32_t bs;          // band stride
    int32_t bpc;
    int32_t lo_only;     // adm_skip_scale0 at scale 0: band a only
    int32_t pad_;
};
static_assert(sizeof(FloatAdmDwtArgs) == 224, "ABI: keep in sync with src/cuda/kernels.rs");

// scalar::src_indices: taps 2i-1 .. 2i+2, mirrored (-i before the start, 2n - i - 1 past the
// end), then clamped into the plane.
VMAF_RS_DEV void fadm_src_indices(int i, int n, int idx[4]) {
    int i0 = 2 * i - 1;
    if (i0 < 0) i0 = -i0;
    else if (i0 >= n) i0 = 2 * n - i0 - 1;
    idx[0] = i0;
    for (int k = 1; k < 4; ++k) {
        const int v = 2 * i + k - 1;
        idx[k] = v >= n ? 2 * n - v - 1 : v;
    }
    for (int k = 0; k < 4; ++k) idx[k] = min(max(idx[k], 0), n - 1);
}

// scalar's `taps`: from 0, in tap order.
VMAF_RS_DEV float fadm_taps(const float c[4], const float s[4]) {
    float acc = 0.0f;
    for (int k = 0; k < 4; ++k) acc = __fadd_rn(acc, __fmul_rn(c[k], s[k]));
    return acc;
}

// picture_copy::to_float with offset -128: (float)v, divided by 4, 16 or 256 above 8 bits (an
// f32 division), then + (-128.0f).
template <typename T>
VMAF_RS_DEV float fadm_sample(const SrcPlane &p, int bpc, int x, int y) {
    const float v = (float)load_px<T>(p, x, y);
    if (sizeof(T) == 1) return __fadd_rn(v, -128.0f);
    const float scaler = bpc == 10 ? 4.0f : bpc == 12 ? 16.0f : 256.0f;
    return __fadd_rn(__fdiv_rn(v, scaler), -128.0f);
}

// grid (ceil(in_w / 128), out_h, 2 pictures), block 128: the vertical pass of output row i.
// T = uint8_t / uint16_t: scale 0 from the frame; T = float: band a of the previous scale.
template <typename T>
__device__ void fadm_dwt_v_impl(const FloatAdmDwtArgs &a) {
    const int j = blockIdx.x * FADM_BX + threadIdx.x;
    const int i = blockIdx.y;
    const int pic = blockIdx.z;
    if (j >= a.in_w) return;
    int iy[4];
    fadm_src_indices(i, a.in_h, iy);
    float s[4];
    for (int k = 0; k < 4; ++k) {
        if (sizeof(T) == 4) {
            s[k] = reinterpret_cast<const float *>(a.level[pic])[(size_t)iy[k] * a.bs + j];
        } else {
            s[k] = fadm_sample<T>(a.src[pic], a.bpc, j, iy[k]);
        }
    }
    const size_t at = (size_t)i * a.in_w + j;
    reinterpret_cast<float *>(a.tlo[pic])[at] = fadm_taps(a.lo, s);
    if (!a.lo_only) reinterpret_cast<float *>(a.thi[pic])[at] = fadm_taps(a.hi, s);
}

extern "C" __global__ void __launch_bounds__(FADM_BX) vmaf_float_adm_dwt_v_u8(FloatAdmDwtArgs a) {
    fadm_dwt_v_impl<uint8_t>(a);
}
extern "C" __global__ void __launch_bounds__(FADM_BX) vmaf_float_adm_dwt_v_u16(FloatAdmDwtArgs a) {
    fadm_dwt_v_impl<uint16_t>(a);
}
extern "C" __global__ void __launch_bounds__(FADM_BX) vmaf_float_adm_dwt_v_f32(FloatAdmDwtArgs a) {
    fadm_dwt_v_impl<float>(a);
}

// grid (ceil(out_w / 128), out_h, 2 pictures), block 128: the horizontal pass, a = LO(lo),
// v = HI(lo), h = LO(hi), d = HI(hi) (scalar::dwt2's band order).
extern "C" __global__ void __launch_bounds__(FADM_BX) vmaf_float_adm_dwt_h(FloatAdmDwtArgs a) {
    const int j = blockIdx.x * FADM_BX + threadIdx.x;
    const int i = blockIdx.y;
    const int pic = blockIdx.z;
    if (j >= a.out_w) return;
    int ix[4];
    fadm_src_indices(j, a.in_w, ix);
    const float *lo = reinterpret_cast<const float *>(a.tlo[pic]) + (size_t)i * a.in_w;
    float s[4];
    for (int k = 0; k < 4; ++k) s[k] = lo[ix[k]];
    const size_t o = (size_t)i * a.bs + j;
    reinterpret_cast<float *>(a.a[pic])[o] = fadm_taps(a.lo, s);
    if (a.lo_only) return;
    reinterpret_cast<float *>(a.hvd[pic][1])[o] = fadm_taps(a.hi, s);
    const float *hi = reinterpret_cast<const float *>(a.thi[pic]) + (size_t)i * a.in_w;
    for (int k = 0; k < 4; ++k) s[k] = hi[ix[k]];
    reinterpret_cast<float *>(a.hvd[pic][0])[o] = fadm_taps(a.lo, s);
    reinterpret_cast<float *>(a.hvd[pic][2])[o] = fadm_taps(a.hi, s);
}

// ---------------------------------------------------------------------------------------------
// Decoupling

struct FloatAdmDecoupleArgs {
    uint64_t ref[3];     // the reference's bands h, v, d
    uint64_t dis[3];     // the distorted's
    uint64_t r[3];       // out: restored bands
    uint64_t a[3];       // out: additive impairment bands
    uint64_t rcp_table;  // uint32_t[4096]: rcp.rs's RcpModel table (unused with exact_div)
    double gain_limit;
    float cos_1deg_sq;
    float eps;
    int32_t bs;
    int32_t left, right, top, bottom;  // Region::taps
    int32_t exact_div;   // 1: the CPU divides (no RCPSS): plain division
};
static_assert(sizeof(FloatAdmDecoupleArgs) == 144, "ABI: keep in sync with src/cuda/kernels.rs");

// rcp.rs `RcpModel::rcp_bits`: the host CPU's RCPSS from its 12-leading-mantissa-bit table.
VMAF_RS_DEV float fadm_rcp(const uint32_t *table, float xf) {
    const uint32_t x = __float_as_uint(xf);
    const uint32_t s = x & 0x80000000u;
    const uint32_t e = (x >> 23) & 0xffu;
    const uint32_t m = x & 0x7fffffu;
    uint32_t r;
    if (e == 0) {
        r = s | 0x7f800000u;
    } else if (e == 255) {
        r = m != 0 ? (x | 0x400000u) : s;
    } else {
        const uint32_t t = __ldg(table + (m >> 11));
        const int te = (int)((t >> 23) & 0xffu) - ((int)e - 127);
        r = te <= 0 ? s : (s | ((uint32_t)te << 23) | (t & 0x7fffffu));
    }
    return __uint_as_float(r);
}

// scalar::divs: n * (xi + xi * (1 - d * xi)) with xi = RCPSS(d), or n / d.
VMAF_RS_DEV float fadm_divs(const FloatAdmDecoupleArgs &a, float n, float d) {
    if (a.exact_div) return __fdiv_rn(n, d);
    const float xi = fadm_rcp(reinterpret_cast<const uint32_t *>(a.rcp_table), d);
    return __fmul_rn(n, __fadd_rn(xi, __fmul_rn(xi, __fsub_rn(1.0f, __fmul_rn(d, xi)))));
}

// grid (ceil((right - left) / 128), bottom - top), block 128: scalar::decouple at one sample.
extern "C" __global__ void __launch_bounds__(FADM_BX)
    vmaf_float_adm_decouple(FloatAdmDecoupleArgs a) {
    const int j = a.left + blockIdx.x * FADM_BX + threadIdx.x;
    const int i = a.top + blockIdx.y;
    if (j >= a.right) return;
    const size_t k = (size_t)i * a.bs + j;
    float o[3], t[3], rst[3];
    for (int b = 0; b < 3; ++b) {
        o[b] = reinterpret_cast<const float *>(a.ref[b])[k];
        t[b] = reinterpret_cast<const float *>(a.dis[b])[k];
    }
    for (int b = 0; b < 3; ++b) {
        float kk = fadm_divs(a, t[b], __fadd_rn(o[b], a.eps));
        // Rust's clamp(0, 1): NaN and -0 stay.
        if (kk < 0.0f) kk = 0.0f;
        if (kk > 1.0f) kk = 1.0f;
        rst[b] = __fmul_rn(kk, o[b]);
    }
    const float ot_dp = __fadd_rn(__fmul_rn(o[0], t[0]), __fmul_rn(o[1], t[1]));
    const float o_mag_sq = __fadd_rn(__fmul_rn(o[0], o[0]), __fmul_rn(o[1], o[1]));
    const float t_mag_sq = __fadd_rn(__fmul_rn(t[0], t[0]), __fmul_rn(t[1], t[1]));
    const bool angle = ot_dp >= 0.0f &&
                       __fmul_rn(ot_dp, ot_dp) >=
                           __fmul_rn(__fmul_rn(a.cos_1deg_sq, o_mag_sq), t_mag_sq);
    if (angle) {
        for (int b = 0; b < 3; ++b) {
            const double tb = (double)t[b];
            if ((double)rst[b] > 0.0) {
                const double g = __dmul_rn((double)rst[b], a.gain_limit);
                rst[b] = __double2float_rn(g < tb ? g : tb);
            }
            if ((double)rst[b] < 0.0) {
                const double g = __dmul_rn((double)rst[b], a.gain_limit);
                rst[b] = __double2float_rn(g > tb ? g : tb);
            }
        }
    }
    for (int b = 0; b < 3; ++b) {
        reinterpret_cast<float *>(a.r[b])[k] = rst[b];
        reinterpret_cast<float *>(a.a[b])[k] = __fsub_rn(t[b], rst[b]);
    }
}

// ---------------------------------------------------------------------------------------------
// CSF

struct FloatAdmCsfArgs {
    uint64_t src[3];
    uint64_t dst[3];     // rfactor * src
    uint64_t flt[3];     // |dst| / 30 (ONE_BY_30 in double)
    double one_by_30;
    float rfactor[3];
    int32_t bs;
    int32_t left, right, top, bottom;  // Region::taps
};
static_assert(sizeof(FloatAdmCsfArgs) == 112, "ABI: keep in sync with src/cuda/kernels.rs");

// grid (ceil((right - left) / 128), bottom - top, 3 bands), block 128: scalar::csf.
extern "C" __global__ void __launch_bounds__(FADM_BX) vmaf_float_adm_csf(FloatAdmCsfArgs a) {
    const int j = a.left + blockIdx.x * FADM_BX + threadIdx.x;
    const int i = a.top + blockIdx.y;
    const int b = blockIdx.z;
    if (j >= a.right) return;
    const size_t k = (size_t)i * a.bs + j;
    const float v = __fmul_rn(a.rfactor[b], reinterpret_cast<const float *>(a.src[b])[k]);
    reinterpret_cast<float *>(a.dst[b])[k] = v;
    reinterpret_cast<float *>(a.flt[b])[k] =
        __double2float_rn(__dmul_rn(a.one_by_30, (double)fabsf(v)));
}

// ---------------------------------------------------------------------------------------------
// Contrast masking

struct FloatAdmCmArgs {
    uint64_t src[3];     // the bands masked (restored for DLM, impairment for AIM)
    uint64_t flt[3];     // the neighbours' CSF / 30
    uint64_t csf[3];     // the centre's CSF
    uint64_t val[3];     // out: max(|src * rfactor| - threshold, 0)^3 per sample (stride bs)
    double one_by_15;
    float rfactor[3];
    int32_t w, h;        // the band's size (for the mirrored neighbours)
    int32_t bs;
    int32_t left, right, top, bottom;  // Region::pool
    int32_t bypass;      // adm_bypass_cm: no threshold
    int32_t pad_;
};
static_assert(sizeof(FloatAdmCmArgs) == 152, "ABI: keep in sync with src/cuda/kernels.rs");

// scalar::cm's neighbours: row/column 1 before the first, the last again after the last.
VMAF_RS_DEV int fadm_before(int i, int n) { return i == 0 ? min(1, n - 1) : i - 1; }
VMAF_RS_DEV int fadm_after(int i, int n) { return i + 1 >= n ? n - 1 : i + 1; }

// grid (ceil((right - left) / 128), bottom - top), block 128: scalar::cm's value of one sample
// (the threshold summed over the bands, each band's 3x3 in row-major order with the centre's
// CSF / 15 added in double), cubed.
extern "C" __global__ void __launch_bounds__(FADM_BX) vmaf_float_adm_cm(FloatAdmCmArgs a) {
    const int j = a.left + blockIdx.x * FADM_BX + threadIdx.x;
    const int i = a.top + blockIdx.y;
    if (j >= a.right) return;
    const size_t rows[3] = {(size_t)fadm_before(i, a.h) * a.bs, (size_t)i * a.bs,
                            (size_t)fadm_after(i, a.h) * a.bs};
    const int cols[3] = {fadm_before(j, a.w), j, fadm_after(j, a.w)};
    float thr = 0.0f;
    if (!a.bypass) {
        for (int b = 0; b < 3; ++b) {
            const float *f = reinterpret_cast<const float *>(a.flt[b]);
            const float *c = reinterpret_cast<const float *>(a.csf[b]);
            float sum = 0.0f;
            for (int ri = 0; ri < 3; ++ri) {
                for (int ci = 0; ci < 3; ++ci) {
                    const size_t at = rows[ri] + cols[ci];
                    if (ri == 1 && ci == 1) {
                        sum = __double2float_rn(
                            __dadd_rn((double)sum, __dmul_rn(a.one_by_15, (double)fabsf(c[at]))));
                    } else {
                        sum = __fadd_rn(sum, f[at]);
                    }
                }
            }
            thr = __fadd_rn(thr, sum);
        }
    }
    const size_t k = (size_t)i * a.bs + j;
    for (int b = 0; b < 3; ++b) {
        const float s = reinterpret_cast<const float *>(a.src[b])[k];
        float x = __fsub_rn(fabsf(__fmul_rn(s, a.rfactor[b])), thr);
        if (x < 0.0f) x = 0.0f;
        reinterpret_cast<float *>(a.val[b])[k] = __fmul_rn(__fmul_rn(x, x), x);
    }
}

// ---------------------------------------------------------------------------------------------
// Row sums and their totals

struct FloatAdmRowsArgs {
    uint64_t src[3];     // cm: the per-sample values; den: the reference's bands h, v, d
    uint64_t out;        // float[3][bottom - top]: each band's row sums
    float rfactor[3];
    int32_t den;         // 1: sum |rfactor * band|^3 (scalar::den_scale); 0: sum the values
    int32_t bs;
    int32_t left, right, top, bottom;  // Region::pool
    int32_t pad_;
};
static_assert(sizeof(FloatAdmRowsArgs) == 72, "ABI: keep in sync with src/cuda/kernels.rs");

// grid (ceil((bottom - top) / 128), 3 bands), block 128: one thread adds one row of one band
// from 0, left to right (scalar's `inner`).
extern "C" __global__ void __launch_bounds__(FADM_BX) vmaf_float_adm_rows(FloatAdmRowsArgs a) {
    const int r = blockIdx.x * FADM_BX + threadIdx.x;
    const int b = blockIdx.y;
    const int n = a.bottom - a.top;
    if (r >= n) return;
    const float *row = reinterpret_cast<const float *>(a.src[b]) + (size_t)(a.top + r) * a.bs;
    float inner = 0.0f;
    for (int j = a.left; j < a.right; ++j) {
        float v = row[j];
        if (a.den) {
            const float x = fabsf(__fmul_rn(a.rfactor[b], v));
            v = __fmul_rn(__fmul_rn(x, x), x);
        }
        inner = __fadd_rn(inner, v);
    }
    reinterpret_cast<float *>(a.out)[(size_t)b * n + r] = inner;
}

struct FloatAdmTotalArgs {
    uint64_t rows;       // float: every scale's row sums, scale s from off[s]: [9][n[s]]
                         // (den h, v, d; DLM h, v, d; AIM h, v, d)
    uint64_t out;        // 36 result slots: [scale][9] f32 totals (bits in the low half)
    int32_t off[4];
    int32_t n[4];        // rows of each scale's pooling region (0 for a skipped scale)
};
static_assert(sizeof(FloatAdmTotalArgs) == 48, "ABI: keep in sync with src/cuda/kernels.rs");

// 1 block of 64 threads: thread t < 36 adds the row sums of its (scale, quantity) from 0 in row
// order (scalar's `acc[b] += inner[b]`).
extern "C" __global__ void __launch_bounds__(64) vmaf_float_adm_total(FloatAdmTotalArgs a) {
    const int t = threadIdx.x;
    if (t >= 36) return;
    const int s = t / 9, q = t % 9;
    const float *rows = reinterpret_cast<const float *>(a.rows) + a.off[s] + (size_t)q * a.n[s];
    float acc = 0.0f;
    for (int r = 0; r < a.n[s]; ++r) acc = __fadd_rn(acc, rows[r]);
    reinterpret_cast<unsigned long long *>(a.out)[t] = (unsigned long long)__float_as_uint(acc);
}
