//! AVX-512 peers of the scalar ADM kernels, equal to them bit for bit, installed into the kernel
//! table by [`install`] over the AVX2 ones (a kernel without an AVX-512 peer keeps its AVX2 one):
//!
//! * [`super::scalar::decouple_s123`]: see [`decouple_s123`].
//!
//! Beyond AVX-512 F and BW ([`crate::cpu::CpuLevel::Avx512`]) the kernels use CD (`vplzcnt`) and
//! DQ (`int64` to `float`/`double` conversions), which every AVX-512 CPU with BW also has. They
//! are `#[target_feature]` functions reached only through safe entry points that [`install`]
//! puts into the table after checking all four; that check is what every `unsafe` call of them
//! relies on.

use core::arch::x86_64::*;

use super::scalar::Region;
use super::tables::{COS_1DEG_SQ, DIV_LOOKUP};
use super::Kernels;

/// Replaces the entries of `k` that have an AVX-512 kernel, if this CPU has AVX-512 F, BW, CD
/// and DQ.
pub(super) fn install(k: &mut Kernels) {
    if !(is_x86_feature_detected!("avx512f")
        && is_x86_feature_detected!("avx512bw")
        && is_x86_feature_detected!("avx512cd")
        && is_x86_feature_detected!("avx512dq"))
    {
        return;
    }
    k.decouple_s123 = decouple_s123;
}

// ---------------------------------------------------------------------------------------------
// Scale-1..3 decoupling
// ---------------------------------------------------------------------------------------------

/// The AVX-512 [`DecoupleS123`](super::DecoupleS123): 8 samples per step in 64-bit lanes, so
/// every `int64` of the scalar kernel is a lane: the angle test's dot products exact
/// (`_mm512_mul_epi32`) and rounded to `float` as C's `(float)` of an `int64` (`vcvtqq2ps`);
/// the 15 leading bits of `|o|` from `vplzcnt`, their reciprocal gathered from `DIV_LOOKUP`,
/// the rounding constant `1 << (14 + shift)` as C's `int` (which wraps at `shift` 17) and the
/// arithmetic shift `vpsravq`; the gain limit in `double` with `minpd`/`maxpd` (which return the
/// second operand unless the first is smaller/greater, as the scalar's comparisons) and
/// `cvttpd2dq` (C's truncation, `INT32_MIN` out of range). A row's last, partial step is masked.
fn decouple_s123(
    ref_hvd: [&[i32]; 3],
    dis_hvd: [&[i32]; 3],
    r_hvd: [&mut [i32]; 3],
    a_hvd: [&mut [i32]; 3],
    stride: usize,
    reg: Region,
    egl: f64,
) {
    // SAFETY: only reachable through `install`, which checked that the CPU has AVX-512 F, BW,
    // CD and DQ.
    unsafe { decouple_s123_avx512(ref_hvd, dis_hvd, r_hvd, a_hvd, stride, reg, egl) }
}

#[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
fn decouple_s123_avx512(
    ref_hvd: [&[i32]; 3],
    dis_hvd: [&[i32]; 3],
    r_hvd: [&mut [i32]; 3],
    a_hvd: [&mut [i32]; 3],
    stride: usize,
    reg: Region,
    egl: f64,
) {
    if reg.bottom <= reg.top || reg.right <= reg.left {
        return;
    }
    let [r_h, r_v, r_d] = r_hvd;
    let [a_h, a_v, a_d] = a_hvd;
    let mut out = [r_h, r_v, r_d, a_h, a_v, a_d];
    // Every step touches [i * stride + j, i * stride + j + n) with j + n <= right, i < bottom.
    let end = (reg.bottom - 1) * stride + reg.right;
    assert!(ref_hvd.iter().chain(&dis_hvd).all(|b| b.len() >= end));
    assert!(out.iter().all(|b| b.len() >= end));
    let c = DecoupleConsts {
        inv4096: _mm512_set1_pd(1.0 / 4096.0),
        cos: _mm512_set1_pd(COS_1DEG_SQ as f64),
        egl: _mm512_set1_pd(egl),
    };
    for i in reg.top..reg.bottom {
        for j in (reg.left..reg.right).step_by(8) {
            let n = (reg.right - j).min(8);
            decouple_s123_step(ref_hvd, dis_hvd, &mut out, i * stride + j, n, &c);
        }
    }
}

/// The constants of [`decouple_s123_step`].
struct DecoupleConsts {
    inv4096: __m512d,
    cos: __m512d,
    egl: __m512d,
}

/// The 8 `i32` at `b[p..]` (only the first `n <= 8` read; the others 0), sign-extended to
/// 64-bit lanes.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
fn load_i32x8_i64(b: &[i32], p: usize, n: usize) -> __m512i {
    let b = &b[p..p + n];
    // SAFETY: the mask enables the first n lanes, which `b` holds; masked-off lanes are not
    // accessed.
    let v = unsafe { _mm512_maskz_loadu_epi32((1u16 << n) - 1, b.as_ptr()) };
    _mm512_cvtepi32_epi64(_mm512_castsi512_si256(v))
}

/// Stores the low 32 bits of the first `n <= 8` 64-bit lanes of `v` to `b[p..p + n]`.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
fn store_i64x8_i32(b: &mut [i32], p: usize, n: usize, v: __m512i) {
    let b = &mut b[p..p + n];
    let v = _mm512_castsi256_si512(_mm512_cvtepi64_epi32(v));
    // SAFETY: the mask enables the first n lanes, which `b` holds; masked-off lanes are not
    // written.
    unsafe { _mm512_mask_storeu_epi32(b.as_mut_ptr(), (1u16 << n) - 1, v) }
}

/// Samples `p .. p + n` (`n <= 8`) of [`decouple_s123_avx512`]; `out` is `[r_h, r_v, r_d, a_h,
/// a_v, a_d]`.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
fn decouple_s123_step(
    ref_hvd: [&[i32]; 3],
    dis_hvd: [&[i32]; 3],
    out: &mut [&mut [i32]; 6],
    p: usize,
    n: usize,
    c: &DecoupleConsts,
) {
    let lanes: __mmask8 = ((1u16 << n) - 1) as u8;
    let o = [
        load_i32x8_i64(ref_hvd[0], p, n),
        load_i32x8_i64(ref_hvd[1], p, n),
        load_i32x8_i64(ref_hvd[2], p, n),
    ];
    let t = [
        load_i32x8_i64(dis_hvd[0], p, n),
        load_i32x8_i64(dis_hvd[1], p, n),
        load_i32x8_i64(dis_hvd[2], p, n),
    ];
    // The angle flag: int64 dot products (no overflow: each is a sum of two products of i32),
    // each `(float)` then `(double) / 4096`.
    let dot = |a0: __m512i, a1: __m512i, b0: __m512i, b1: __m512i| {
        _mm512_add_epi64(_mm512_mul_epi32(a0, b0), _mm512_mul_epi32(a1, b1))
    };
    let scaled = |v: __m512i| _mm512_mul_pd(_mm512_cvtps_pd(_mm512_cvtepi64_ps(v)), c.inv4096);
    let ot = scaled(dot(o[0], o[1], t[0], t[1]));
    let om = scaled(dot(o[0], o[1], o[0], o[1]));
    let tm = scaled(dot(t[0], t[1], t[0], t[1]));
    let rhs = _mm512_mul_pd(_mm512_mul_pd(c.cos, om), tm);
    let flag = _mm512_cmp_pd_mask::<_CMP_GE_OQ>(ot, _mm512_setzero_pd())
        & _mm512_cmp_pd_mask::<_CMP_GE_OQ>(_mm512_mul_pd(ot, ot), rhs);
    let z = _mm512_setzero_si512();
    let one = _mm512_set1_epi64(1);
    let k32768 = _mm512_set1_epi64(32768);
    for b in 0..3 {
        let (ob, tb) = (o[b], t[b]);
        let nonzero = _mm512_mask_cmpneq_epi64_mask(lanes, ob, z);
        let negative = _mm512_cmplt_epi64_mask(ob, z);
        // |o| (2^31 for INT32_MIN, as `unsigned_abs`); from 2^15 up its 15 leading bits,
        // rounded: (|o| + 2^(s-1)) >> s with s = 17 - leading_zeros32(|o|) (no u32 wrap: |o| <=
        // 2^31, s <= 17).
        let abs = _mm512_abs_epi64(ob);
        let big = _mm512_cmpge_epu64_mask(abs, k32768);
        let s = _mm512_sub_epi64(_mm512_set1_epi64(17 + 32), _mm512_lzcnt_epi64(abs));
        let shift = _mm512_maskz_mov_epi64(big, s);
        let half = _mm512_srli_epi64::<1>(_mm512_sllv_epi64(one, shift));
        let msb = _mm512_srlv_epi64(_mm512_add_epi64(abs, half), shift);
        // DIV_LOOKUP[msb + 32768] * t * sign (exact in int64: both factors are i32).
        let at = _mm512_add_epi64(msb, k32768);
        // SAFETY: for the lanes in `nonzero`, msb <= 2^15, so at <= 65536, inside the
        // 65537-entry table; masked-off lanes are not read; gathers need no alignment.
        let div = unsafe {
            _mm512_mask_i64gather_epi32::<4>(
                _mm256_setzero_si256(),
                nonzero,
                at,
                DIV_LOOKUP.as_ptr(),
            )
        };
        let num = _mm512_mul_epi32(_mm512_cvtepi32_epi64(div), tb);
        let num = _mm512_mask_sub_epi64(num, negative, z, num);
        // The rounding 1 << (14 + shift) as a C `int` (INT32_MIN at shift 17), widened.
        let round = _mm512_sllv_epi64(one, _mm512_add_epi64(shift, _mm512_set1_epi64(14)));
        let round = _mm512_srai_epi64::<32>(_mm512_slli_epi64::<32>(round));
        let q = _mm512_srav_epi64(
            _mm512_add_epi64(num, round),
            _mm512_add_epi64(shift, _mm512_set1_epi64(15)),
        );
        let q = _mm512_min_epi64(_mm512_max_epi64(q, z), k32768);
        let k = _mm512_mask_mov_epi64(k32768, nonzero, q);
        // r = (int32)((k * o + 16384) >> 15), which fits 32 bits (k <= 2^15).
        let r = _mm512_srai_epi64::<15>(_mm512_add_epi64(
            _mm512_mul_epi32(k, ob),
            _mm512_set1_epi64(16384),
        ));
        // The gain limit where the angles agree and the restoration has a sign.
        let kpos = _mm512_cmpgt_epi64_mask(k, z);
        let pos = kpos & _mm512_cmpgt_epi64_mask(ob, z);
        let apply = flag & lanes & (pos | (kpos & negative));
        let r = if apply != 0 {
            let g = _mm512_mul_pd(_mm512_cvtepi64_pd(r), c.egl);
            let tt = _mm512_cvtepi64_pd(tb);
            let lim_pos = _mm512_cvtepi32_epi64(_mm512_cvttpd_epi32(_mm512_min_pd(g, tt)));
            let lim_neg = _mm512_cvtepi32_epi64(_mm512_cvttpd_epi32(_mm512_max_pd(g, tt)));
            let lim = _mm512_mask_mov_epi64(lim_neg, pos, lim_pos);
            _mm512_mask_mov_epi64(r, apply, lim)
        } else {
            r
        };
        // a = t - r, wrapping in 32 bits (the low halves of the 64-bit difference).
        let a = _mm512_sub_epi64(tb, r);
        store_i64x8_i32(out[b], p, n, r);
        store_i64x8_i32(out[3 + b], p, n, a);
    }
}
