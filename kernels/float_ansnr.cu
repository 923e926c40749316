// float_ansnr: libvmaf's ANSNR filters (3x3 on the reference, 5x5 on the distorted picture, both
// on picture_copy's f32 samples minus 128) and the per-row f32 signal and noise energies of the
// filtered pair. Specification: src/feature/float_ansnr/mod.rs (`filter2d`, `mirror`,
// `row_energies`) and `picture_copy::to_float`. Every step is one rounded f32 operation in the
// CPU's order (__fadd_rn/__fsub_rn/__fmul_rn/__fdiv_rn, and the fatbin is built with
// --fmad=false): each output's taps as inner row sums from 0 in tap order, added from 0 row by
// row; each row's energies from 0 in column order by one thread.
#include "common.cuh"

#define FANSNR_BX 128
// Rows one warp of vmaf_float_ansnr_rows sums (one per lane), and its column tile.
#define FANSNR_TILE 32

struct FloatAnsnrFilterArgs {
    SrcPlane reference;
    SrcPlane distorted;
    uint64_t ref_out;      // float[w * h]: the reference through the 3x3 filter
    uint64_t dis_out;      // float[w * h]: the distorted picture through the 5x5 filter
    float filter_ref[9];   // float_ansnr::FILTER_REF, row-major
    float filter_dis[25];  // float_ansnr::FILTER_DIS, row-major
    int32_t w, h;
    int32_t bpc;
    int32_t pad_;
};
static_assert(sizeof(FloatAnsnrFilterArgs) == 216, "ABI: keep in sync with src/cuda/kernels.rs");

// The ANSNR mirror (float_ansnr's `mirror`): -i before the start, 2n - i - 1 past the end (the
// edge sample repeated), once: offsets are at most 2 and pictures at least 16 samples a side.
VMAF_RS_DEV int fansnr_mirror(int i, int n) {
    if (i < 0) return -i;
    if (i >= n) return 2 * n - i - 1;
    return i;
}

// picture_copy's sample: (float)v, divided by 4, 16 or 256 above 8 bits (an f32 division), then
// + (-128) (an f32 addition).
template <typename T>
VMAF_RS_DEV float fansnr_sample(const SrcPlane &p, int bpc, int x, int y) {
    const float v = (float)load_px<T>(p, x, y);
    if (sizeof(T) == 1) return __fadd_rn(v, -128.0f);
    const float scaler = bpc == 10 ? 4.0f : bpc == 12 ? 16.0f : 256.0f;
    return __fadd_rn(__fdiv_rn(v, scaler), -128.0f);
}

// filter2d's output (i, j) with a square fw x fw filter: for each filter row fi, inner = sum over
// fj from 0 of f[fi][fj] * pic[mirror(i - r + fi)][mirror(j - r + fj)]; accum += inner from 0.
template <typename T, int FW>
VMAF_RS_DEV float fansnr_filter(const SrcPlane &p, const float *f, int bpc, int i, int j, int w,
                                int h) {
    const int r = FW / 2;
    float accum = 0.0f;
#pragma unroll
    for (int fi = 0; fi < FW; ++fi) {
        const int y = fansnr_mirror(i - r + fi, h);
        float inner = 0.0f;
#pragma unroll
        for (int fj = 0; fj < FW; ++fj) {
            const int x = fansnr_mirror(j - r + fj, w);
            inner = __fadd_rn(inner, __fmul_rn(f[fi * FW + fj], fansnr_sample<T>(p, bpc, x, y)));
        }
        accum = __fadd_rn(accum, inner);
    }
    return accum;
}

// grid (ceil(w / 128), h), block 128: both filtered pictures at (i, j).
template <typename T>
__device__ void fansnr_filter_impl(const FloatAnsnrFilterArgs &a) {
    const int j = blockIdx.x * FANSNR_BX + threadIdx.x;
    const int i = blockIdx.y;
    if (j >= a.w) return;
    const size_t at = (size_t)i * a.w + j;
    reinterpret_cast<float *>(a.ref_out)[at] =
        fansnr_filter<T, 3>(a.reference, a.filter_ref, a.bpc, i, j, a.w, a.h);
    reinterpret_cast<float *>(a.dis_out)[at] =
        fansnr_filter<T, 5>(a.distorted, a.filter_dis, a.bpc, i, j, a.w, a.h);
}

extern "C" __global__ void __launch_bounds__(FANSNR_BX)
    vmaf_float_ansnr_filter_u8(FloatAnsnrFilterArgs a) {
    fansnr_filter_impl<uint8_t>(a);
}
extern "C" __global__ void __launch_bounds__(FANSNR_BX)
    vmaf_float_ansnr_filter_u16(FloatAnsnrFilterArgs a) {
    fansnr_filter_impl<uint16_t>(a);
}

struct FloatAnsnrRowsArgs {
    uint64_t ref;   // float[w * h]: the filtered reference
    uint64_t dis;   // float[w * h]: the filtered distorted picture
    uint64_t out;   // uint64_t[2 * h] result slots: row i's signal at i, its noise at h + i (f32
                    // bits in the low 32 bits)
    int32_t w, h;
};
static_assert(sizeof(FloatAnsnrRowsArgs) == 32, "ABI: keep in sync with src/cuda/kernels.rs");

// grid ceil(h / 128), block 128 (4 warps of 32 rows). A warp stages r * r and (r - d) * (r - d)
// of its 32 rows a 32-column tile at a time in shared memory (coalesced loads), then lane l adds
// row l's tile from left to right: row_energies' sequential f32 sums from 0.
extern "C" __global__ void __launch_bounds__(FANSNR_BX) vmaf_float_ansnr_rows(FloatAnsnrRowsArgs a) {
    __shared__ float sig_tile[FANSNR_BX / 32][FANSNR_TILE][FANSNR_TILE + 1];
    __shared__ float noise_tile[FANSNR_BX / 32][FANSNR_TILE][FANSNR_TILE + 1];
    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.x >> 5;
    const int row0 = (blockIdx.x * (FANSNR_BX / 32) + warp) * FANSNR_TILE;
    const float *ref = reinterpret_cast<const float *>(a.ref);
    const float *dis = reinterpret_cast<const float *>(a.dis);
    float(*ts)[FANSNR_TILE + 1] = sig_tile[warp];
    float(*tn)[FANSNR_TILE + 1] = noise_tile[warp];
    float sig = 0.0f, noise = 0.0f;
    for (int x0 = 0; x0 < a.w; x0 += FANSNR_TILE) {
        const int x = x0 + lane;
        for (int rr = 0; rr < FANSNR_TILE; ++rr) {
            const int y = row0 + rr;
            float s = 0.0f, n = 0.0f;
            if (y < a.h && x < a.w) {
                const size_t at = (size_t)y * a.w + x;
                const float r = ref[at];
                const float e = __fsub_rn(r, dis[at]);
                s = __fmul_rn(r, r);
                n = __fmul_rn(e, e);
            }
            ts[rr][lane] = s;
            tn[rr][lane] = n;
        }
        __syncwarp();
        const int cnt = min(FANSNR_TILE, a.w - x0);
        for (int c = 0; c < cnt; ++c) {
            sig = __fadd_rn(sig, ts[lane][c]);
            noise = __fadd_rn(noise, tn[lane][c]);
        }
        __syncwarp();  // the tiles are rewritten next
    }
    const int y = row0 + lane;
    if (y < a.h) {
        unsigned long long *out = reinterpret_cast<unsigned long long *>(a.out);
        out[y] = (unsigned long long)__float_as_uint(sig);
        out[a.h + y] = (unsigned long long)__float_as_uint(noise);
    }
}
