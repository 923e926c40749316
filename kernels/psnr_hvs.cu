// psnr_hvs: libvmaf's PSNR-HVS per plane. Specification: src/feature/psnr_hvs/mod.rs
// (`score`, `block_stats`, `mask_of`) and src/feature/psnr_hvs/dct.rs (`fdct8x8`).
//
// One thread scores one 8x8 block (blocks every 7 samples while a whole block fits, raster
// order): the means and variances in the CPU's f32 operations and order, Daala's integer DCT in
// wrapping 32-bit arithmetic (unsigned here, as C's int wraps in the build libvmaf ships), the
// masking threshold (its square root in double), and the block's 64 weighted squared errors,
// which it writes to the plane's term buffer at block * 64 + i * 8 + j. The CPU adds those terms
// into one f32 running sum over the whole plane, so a second kernel adds them from 0 in that
// order, one thread per plane (the others stage tiles in shared memory). f32/f64 steps use
// __fadd_rn/__fmul_rn/__fdiv_rn/__dsqrt_rn/... and the fatbin is built with --fmad=false.
#include "common.cuh"

#define PHVS_BX 128
#define PHVS_SUM_THREADS 256
#define PHVS_SUM_TILE 2048

struct PsnrHvsBlockArgs {
    SrcPlane reference;
    SrcPlane distorted;
    uint64_t terms;       // float[nbx * nby * 64]: every block's weighted squared errors
    float csf[64];        // the plane's CSF table, row-major
    float mask[64];       // its masking weights
    int32_t nbx, nby;     // blocks across and down
    int32_t step_ref;     // sample x of a row is element x * step (2 in an interleaved CbCr plane)
    int32_t step_dis;
};
static_assert(sizeof(PsnrHvsBlockArgs) == 584, "ABI: keep in sync with src/cuda/kernels.rs");

VMAF_RS_DEV int32_t phvs_add(int32_t a, int32_t b) { return (int32_t)((uint32_t)a + (uint32_t)b); }
VMAF_RS_DEV int32_t phvs_sub(int32_t a, int32_t b) { return (int32_t)((uint32_t)a - (uint32_t)b); }

// dct.rs `lift`: (v * c + 2^(s-1)) >> s, wrapping product and sum, arithmetic shift.
VMAF_RS_DEV int32_t phvs_lift(int32_t v, int32_t c, int s) {
    return (int32_t)((uint32_t)v * (uint32_t)c + (1u << (s - 1))) >> s;
}

// dct.rs `half`: halving that rounds towards zero.
VMAF_RS_DEV int32_t phvs_half(int32_t a) { return (int32_t)(((uint32_t)a >> 31) + (uint32_t)a) >> 1; }

// dct.rs `fdct8`: x[0], x[stride], ... into y[0..8], the same steps in the same order.
VMAF_RS_DEV void phvs_fdct8(int32_t *y, const int32_t *x, int stride) {
    int32_t t0 = x[0], t4 = x[stride], t2 = x[2 * stride], t6 = x[3 * stride];
    int32_t t7 = x[4 * stride], t3 = x[5 * stride], t5 = x[6 * stride], t1 = x[7 * stride];
    t1 = phvs_sub(t0, t1);
    const int32_t t1h = phvs_half(t1);
    t0 = phvs_sub(t0, t1h);
    t4 = phvs_add(t4, t5);
    const int32_t t4h = phvs_half(t4);
    t5 = phvs_sub(t5, t4h);
    t3 = phvs_sub(t2, t3);
    t2 = phvs_sub(t2, phvs_half(t3));
    t6 = phvs_add(t6, t7);
    const int32_t t6h = phvs_half(t6);
    t7 = phvs_sub(t6h, t7);
    t0 = phvs_add(t0, t6h);
    t6 = phvs_sub(t0, t6);
    t2 = phvs_sub(t4h, t2);
    t4 = phvs_sub(t2, t4);
    t0 = phvs_sub(t0, phvs_lift(t4, 13573, 15));
    t4 = phvs_add(t4, phvs_lift(t0, 11585, 14));
    t0 = phvs_sub(t0, phvs_lift(t4, 13573, 15));
    t6 = phvs_sub(t6, phvs_lift(t2, 21895, 15));
    t2 = phvs_add(t2, phvs_lift(t6, 15137, 14));
    t6 = phvs_sub(t6, phvs_lift(t2, 21895, 15));
    t3 = phvs_add(t3, phvs_lift(t5, 19195, 15));
    t5 = phvs_add(t5, phvs_lift(t3, 11585, 14));
    t3 = phvs_sub(t3, phvs_lift(t5, 7489, 13));
    t7 = phvs_sub(phvs_half(t5), t7);
    t5 = phvs_sub(t5, t7);
    t3 = phvs_sub(t1h, t3);
    t1 = phvs_sub(t1, t3);
    t7 = phvs_add(t7, phvs_lift(t1, 3227, 15));
    t1 = phvs_sub(t1, phvs_lift(t7, 6393, 15));
    t7 = phvs_add(t7, phvs_lift(t1, 3227, 15));
    t5 = phvs_add(t5, phvs_lift(t3, 2485, 13));
    t3 = phvs_sub(t3, phvs_lift(t5, 18205, 15));
    t5 = phvs_add(t5, phvs_lift(t3, 2485, 13));
    y[0] = t0;
    y[1] = t1;
    y[2] = t2;
    y[3] = t3;
    y[4] = t4;
    y[5] = t5;
    y[6] = t6;
    y[7] = t7;
}

// dct.rs `fdct8x8`: down every column into the transposed scratch, then down every column of it.
VMAF_RS_DEV void phvs_fdct8x8(int32_t *block) {
    int32_t z[64];
    for (int i = 0; i < 8; ++i) phvs_fdct8(z + 8 * i, block + i, 8);
    for (int i = 0; i < 8; ++i) phvs_fdct8(block + 8 * i, z + i, 8);
}

// mod.rs `block_stats`: the whole-block variance as the ratio of the quarters' summed variances
// to it (when positive), every sum from 0 in raster order in f32.
VMAF_RS_DEV float phvs_block_stats(const int32_t *px) {
    float gmean = 0.0f;
    float means[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (int i = 0; i < 8; ++i) {
        for (int j = 0; j < 8; ++j) {
            const float v = __int2float_rn(px[i * 8 + j]);
            gmean = __fadd_rn(gmean, v);
            const int s = ((i & 12) >> 2) + ((j & 12) >> 1);
            means[s] = __fadd_rn(means[s], v);
        }
    }
    gmean = __fdiv_rn(gmean, 64.0f);
    for (int k = 0; k < 4; ++k) means[k] = __fdiv_rn(means[k], 16.0f);
    float gvar = 0.0f;
    float vars[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (int i = 0; i < 8; ++i) {
        for (int j = 0; j < 8; ++j) {
            const float v = __int2float_rn(px[i * 8 + j]);
            const int s = ((i & 12) >> 2) + ((j & 12) >> 1);
            const float dg = __fsub_rn(v, gmean);
            const float ds = __fsub_rn(v, means[s]);
            gvar = __fadd_rn(gvar, __fmul_rn(dg, dg));
            vars[s] = __fadd_rn(vars[s], __fmul_rn(ds, ds));
        }
    }
    // C's `1 / 63.f * 64` and `1 / 15.f * 16`, folded left to right in float.
    gvar = __fmul_rn(gvar, __fmul_rn(__fdiv_rn(1.0f, 63.0f), 64.0f));
    const float k15 = __fmul_rn(__fdiv_rn(1.0f, 15.0f), 16.0f);
    for (int k = 0; k < 4; ++k) vars[k] = __fmul_rn(vars[k], k15);
    if (gvar > 0.0f) {
        gvar = __fdiv_rn(__fadd_rn(__fadd_rn(__fadd_rn(vars[0], vars[1]), vars[2]), vars[3]), gvar);
    }
    return gvar;
}

// mod.rs `mask_of`: the AC coefficients' masking energy in f32, its scaled square root in double.
VMAF_RS_DEV float phvs_mask_of(const int32_t *dct, const float *mask, float gvar) {
    float m = 0.0f;
    for (int i = 0; i < 8; ++i) {
        for (int j = i == 0 ? 1 : 0; j < 8; ++j) {
            const int32_t c = dct[i * 8 + j];
            const int32_t sq = (int32_t)((uint32_t)c * (uint32_t)c);
            m = __fadd_rn(m, __fmul_rn(__int2float_rn(sq), mask[i * 8 + j]));
        }
    }
    return __double2float_rn(__ddiv_rn(__dsqrt_rn((double)__fmul_rn(m, gvar)), 32.0));
}

// grid (ceil(nbx / 128), nby), block 128: block (bx, by) at samples (7 bx, 7 by).
template <typename T>
__device__ void phvs_block_impl(const PsnrHvsBlockArgs &a) {
    const int bx = blockIdx.x * PHVS_BX + threadIdx.x;
    const int by = blockIdx.y;
    if (bx >= a.nbx) return;
    const int x0 = 7 * bx, y0 = 7 * by;
    int32_t bs[64], bd[64];
    for (int i = 0; i < 8; ++i) {
        for (int j = 0; j < 8; ++j) {
            bs[i * 8 + j] = (int32_t)load_px<T>(a.reference, (x0 + j) * a.step_ref, y0 + i);
            bd[i * 8 + j] = (int32_t)load_px<T>(a.distorted, (x0 + j) * a.step_dis, y0 + i);
        }
    }
    const float s_gvar = phvs_block_stats(bs);
    const float d_gvar = phvs_block_stats(bd);
    phvs_fdct8x8(bs);
    phvs_fdct8x8(bd);
    float s_mask = phvs_mask_of(bs, a.mask, s_gvar);
    const float d_mask = phvs_mask_of(bd, a.mask, d_gvar);
    if (d_mask > s_mask) s_mask = d_mask;
    float *out = reinterpret_cast<float *>(a.terms) + ((size_t)by * a.nbx + bx) * 64;
    for (int i = 0; i < 8; ++i) {
        for (int j = 0; j < 8; ++j) {
            const int k = i * 8 + j;
            // Rust's wrapping_abs of the wrapping difference (|i32::MIN| stays i32::MIN).
            const uint32_t dif = (uint32_t)bs[k] - (uint32_t)bd[k];
            const int32_t ad = (int32_t)dif < 0 ? (int32_t)(0u - dif) : (int32_t)dif;
            float err = __int2float_rn(ad);
            if (k != 0) {
                const float t = __fdiv_rn(s_mask, a.mask[k]);
                err = err < t ? 0.0f : __fsub_rn(err, t);
            }
            const float e = __fmul_rn(err, a.csf[k]);
            out[k] = __fmul_rn(e, e);
        }
    }
}

extern "C" __global__ void __launch_bounds__(PHVS_BX) vmaf_psnr_hvs_block_u8(PsnrHvsBlockArgs a) {
    phvs_block_impl<uint8_t>(a);
}
extern "C" __global__ void __launch_bounds__(PHVS_BX) vmaf_psnr_hvs_block_u16(PsnrHvsBlockArgs a) {
    phvs_block_impl<uint16_t>(a);
}

struct PsnrHvsSumArgs {
    uint64_t terms[3];  // float[n[p]]: plane p's terms, in the CPU's order
    uint64_t out[3];    // plane p's result slot: the f32 sum's bits in the low 32 bits
    int32_t n[3];
    int32_t pad_;
};
static_assert(sizeof(PsnrHvsSumArgs) == 64, "ABI: keep in sync with src/cuda/kernels.rs");

// grid 3 (one block per plane), block 256. score's `ret += term` over the plane's terms, in
// order (common.cuh's ordered_sum).
extern "C" __global__ void __launch_bounds__(PHVS_SUM_THREADS) vmaf_psnr_hvs_sum(PsnrHvsSumArgs a) {
    __shared__ float buf[2][PHVS_SUM_TILE];
    const int p = blockIdx.x;
    const float ret = ordered_sum<float, PHVS_SUM_THREADS, PHVS_SUM_TILE>(
        reinterpret_cast<const float *>(a.terms[p]), a.n[p], buf);
    if (threadIdx.x == 0) {
        reinterpret_cast<unsigned long long *>(a.out[p])[0] =
            (unsigned long long)__float_as_uint(ret);
    }
}
