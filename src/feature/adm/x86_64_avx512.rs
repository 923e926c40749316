//! AVX-512 peers of the scalar ADM kernels, equal to them bit for bit, installed into the kernel
//! table by [`install`] over the AVX2 ones (a kernel without an AVX-512 peer keeps its AVX2 one):
//!
//! * the scale-0 DWT row kernels ([`super::scalar::dwt_s0_vertical_both`],
//!   [`super::scalar::dwt_s0_horizontal`]);
//! * the scale-1..3 DWT row kernels ([`super::scalar::dwt_s123_vertical`],
//!   [`super::scalar::dwt_s123_horizontal`]);
//! * [`super::scalar::csf_s0`] / [`super::scalar::csf_s123`]: see [`csf_s0`] / [`csf_s123`];
//! * [`super::scalar::csf_den_s0`] / [`super::scalar::csf_den_s123`] (the denominators' integer
//!   reductions): see [`csf_den_s0`] / [`csf_den_s123`];
//! * [`super::scalar::cm_s0_interior`]: see [`cm_s0_interior`];
//! * [`super::scalar::cm_s123_interior`]: see [`cm_s123_interior`];
//! * [`super::scalar::decouple_s0`]: see [`decouple_s0`];
//! * [`super::scalar::decouple_s123`]: see [`decouple_s123`].
//!
//! Beyond AVX-512 F and BW ([`crate::cpu::CpuLevel::Avx512`]) the kernels use CD (`vplzcnt`) and
//! DQ (`int64` to `float`/`double` conversions, `vpmullq`), which every AVX-512 CPU with BW also
//! has. They
//! are `#[target_feature]` functions reached only through safe entry points that [`install`]
//! puts into the table after checking all four; that check is what every `unsafe` call of them
//! relies on.

use core::arch::x86_64::*;
use std::ops::Range;

use super::scalar::{
    self, half_pow2_u32, Region, DWT_S123_HORIZONTAL_ROUND, DWT_S123_VERTICAL_ROUND,
};
use super::tables::{
    COS_1DEG_SQ, DB2_HI, DB2_HI_SUM, DB2_LO, DB2_LO_SUM, DIV_LOOKUP, FIX_ONE_BY_30,
    I4_FIX_ONE_BY_30, I4_ONE_BY_15, ONE_BY_15,
};
use super::Kernels;
use std::array::from_fn;

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
    k.dwt_s0_vertical_u8 = dwt_s0_vertical_u8;
    k.dwt_s0_vertical_u16 = dwt_s0_vertical_u16;
    k.dwt_s0_horizontal = dwt_s0_horizontal;
    k.dwt_s123_vertical_i16 = dwt_s123_vertical_i16;
    k.dwt_s123_vertical_i32 = dwt_s123_vertical_i32;
    k.dwt_s123_horizontal = dwt_s123_horizontal;
    k.csf_s0 = csf_s0;
    k.csf_s123 = csf_s123;
    k.csf_den_s0 = csf_den_s0;
    k.csf_den_s123 = csf_den_s123;
    k.cm_s0_interior = cm_s0_interior;
    k.cm_s123_interior = cm_s123_interior;
    k.decouple_s0 = decouple_s0;
    k.decouple_s123 = decouple_s123;
}

// ---------------------------------------------------------------------------------------------
// Scale-0 contrast masking
// ---------------------------------------------------------------------------------------------

/// The AVX-512 [`CmS0Interior`](super::CmS0Interior), the AVX2 peer's method 16 samples per step
/// in 32-bit lanes: the 64-bit square and cube as even/odd lane pairs (`_mm512_mul_epu32` /
/// `_mm512_mul_epi32`) and the arithmetic 64-bit shift `vpsraq`; the row's last, partial step
/// with masked loads, its missing lanes left out of the sums.
#[allow(clippy::too_many_arguments)]
fn cm_s0_interior(
    x_hvd: [&[i16]; 3],
    flt: &[i32],
    centre: &[i32],
    rows: (usize, usize, usize),
    cols: Range<usize>,
    i_rfactor: [u16; 3],
    cub: [u32; 3],
    cub_add: [i64; 3],
) -> [i64; 3] {
    // SAFETY: only reachable through `install`, which checked that the CPU has AVX-512 F, BW,
    // CD and DQ.
    unsafe { cm_s0_interior_avx512(x_hvd, flt, centre, rows, cols, i_rfactor, cub, cub_add) }
}

/// The masking threshold of the `n <= 16` samples from offset `m` (missing lanes 0) from the
/// masker's sums (`scalar::csf_s0`): `flt` over the eight neighbours plus `centre`, wrapping;
/// `u`, `m`, `d` are the samples' offsets in the rows above, at and below. A macro: as a
/// function LLVM left it out of line, its nine loads each testing `n`.
macro_rules! thr16 {
    ($flt:expr, $centre:expr, $umd:expr, $n:expr) => {{
        let (flt, centre, (u, m, d), n): (&[i32], &[i32], (usize, usize, usize), usize) =
            ($flt, $centre, $umd, $n);
        let l = |at: usize| load_i32x16(flt, at, n);
        let nb = _mm512_add_epi32(
            _mm512_add_epi32(
                _mm512_add_epi32(l(u - 1), l(u)),
                _mm512_add_epi32(l(u + 1), l(m - 1)),
            ),
            _mm512_add_epi32(
                _mm512_add_epi32(l(m + 1), l(d - 1)),
                _mm512_add_epi32(l(d), l(d + 1)),
            ),
        );
        _mm512_add_epi32(nb, load_i32x16(centre, m, n))
    }};
}

/// The AVX2 peer's `scale_q28` for 16 lanes: `((x * rfactor + 2^27) >> 28) as i32`, the
/// 64-bit products as even/odd lane pairs (`rf` the unsigned weight as a signed lane, plus `x <<
/// 32` where it is 2^31 or more), `>> 28` logical.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
fn scale_q28(x: __m512i, rf: __m512i, rfactor: u32) -> __m512i {
    let r27 = _mm512_set1_epi64(1 << 27);
    let scaled = |xs: __m512i| {
        let mut p = _mm512_mul_epi32(xs, rf);
        if rfactor >= 1 << 31 {
            p = _mm512_add_epi64(p, _mm512_slli_epi64::<32>(xs));
        }
        _mm512_srli_epi64::<28>(_mm512_add_epi64(p, r27))
    };
    _mm512_mask_blend_epi32(
        0xaaaa,
        scaled(x),
        _mm512_slli_epi64::<32>(scaled(_mm512_srli_epi64::<32>(x))),
    )
}

/// The constants of [`cm_s0_step`].
struct CmS0Consts {
    rf: [__m512i; 3],
    sub: [__m128i; 3],
    sq_add: [__m512i; 3],
    sq_shift: [__m128i; 3],
    cub_add: [__m512i; 3],
    cub_shift: [__m128i; 3],
}

#[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
#[allow(clippy::too_many_arguments)]
fn cm_s0_interior_avx512(
    x_hvd: [&[i16]; 3],
    flt: &[i32],
    centre: &[i32],
    rows: (usize, usize, usize),
    cols: Range<usize>,
    i_rfactor: [u16; 3],
    cub: [u32; 3],
    cub_add: [i64; 3],
) -> [i64; 3] {
    const SUB: [i32; 3] = [10, 10, 12];
    const SQ_SHIFT: [i32; 3] = [29, 29, 30];
    const SQ_ADD: [i64; 3] = [1 << 28, 1 << 28, 1 << 29];
    if cols.end <= cols.start {
        return [0; 3];
    }
    // Column j reads columns j - 1 ..= j + 1 of the three rows (as the scalar kernel does).
    assert!(cols.start >= 1);
    let top = rows.0.max(rows.1).max(rows.2) + cols.end + 1;
    assert!(x_hvd.iter().all(|b| b.len() >= top));
    assert!(flt.len() >= top && centre.len() >= top);
    let c = CmS0Consts {
        rf: [0, 1, 2].map(|b| _mm512_set1_epi32(i_rfactor[b] as i32)),
        sub: SUB.map(|s| _mm_cvtsi32_si128(s)),
        sq_add: SQ_ADD.map(|a| _mm512_set1_epi64(a)),
        sq_shift: SQ_SHIFT.map(|s| _mm_cvtsi32_si128(s)),
        cub_add: cub_add.map(|a| _mm512_set1_epi64(a)),
        cub_shift: cub.map(|s| _mm_cvtsi32_si128((s & 63) as i32)),
    };
    let mut acc = [_mm512_setzero_si512(); 3];
    let n = cols.end - cols.start;
    let n16 = cols.start + n / 16 * 16;
    for j in (cols.start..n16).step_by(16) {
        cm_s0_step::<false>(x_hvd, flt, centre, rows, j, 16, &c, &mut acc);
    }
    if n16 < cols.end {
        cm_s0_step::<true>(x_hvd, flt, centre, rows, n16, cols.end - n16, &c, &mut acc);
    }
    [
        _mm512_reduce_add_epi64(acc[0]),
        _mm512_reduce_add_epi64(acc[1]),
        _mm512_reduce_add_epi64(acc[2]),
    ]
}

/// 16 `i16` at `b[at..]` sign-extended to `i32` lanes (with `TAIL`, the first `n < 16` only;
/// the others 0).
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
fn load_i16x16<const TAIL: bool>(b: &[i16], at: usize, n: usize) -> __m512i {
    let v = if TAIL {
        let b = &b[at..at + n];
        // SAFETY: the mask enables the first n lanes, which `b` holds; masked-off lanes are not
        // accessed.
        _mm512_castsi512_si256(unsafe { _mm512_maskz_loadu_epi16((1u32 << n) - 1, b.as_ptr()) })
    } else {
        let b = &b[at..at + 16];
        // SAFETY: `b` holds 16 `i16` (32 bytes); the load is unaligned.
        unsafe { _mm256_loadu_si256(b.as_ptr().cast()) }
    };
    _mm512_cvtepi16_epi32(v)
}

/// Columns `j .. j + n` (`n <= 16`, `n < 16` only with `TAIL`) of [`cm_s0_interior_avx512`],
/// added to `acc` (per band, 64-bit lanes).
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
#[allow(clippy::too_many_arguments)]
fn cm_s0_step<const TAIL: bool>(
    x_hvd: [&[i16]; 3],
    flt: &[i32],
    centre: &[i32],
    rows: (usize, usize, usize),
    j: usize,
    n: usize,
    c: &CmS0Consts,
    acc: &mut [__m512i; 3],
) {
    let z = _mm512_setzero_si512();
    let (u, m, d) = (rows.0 + j, rows.1 + j, rows.2 + j);
    let thr = thr16!(flt, centre, (u, m, d), n);
    // The 64-bit lanes of the even (lane 2l) and odd (2l + 1) samples in the step.
    let (even, odd): (__mmask8, __mmask8) = if TAIL {
        (
            ((1u32 << n.div_ceil(2)) - 1) as u8,
            ((1u32 << (n / 2)) - 1) as u8,
        )
    } else {
        (u8::MAX, u8::MAX)
    };
    for b in 0..3 {
        let xv = load_i16x16::<TAIL>(x_hvd[b], m, n);
        let x = _mm512_mullo_epi32(xv, c.rf[b]);
        let x = _mm512_sub_epi32(_mm512_abs_epi32(x), _mm512_sll_epi32(thr, c.sub[b]));
        let x = _mm512_max_epi32(x, z);
        for (x, lanes) in [(x, even), (_mm512_srli_epi64::<32>(x), odd)] {
            // x in [0, 2^31): the square in u64, its low 32 bits taken as i32 (C's cast).
            let sq = _mm512_srl_epi64(
                _mm512_add_epi64(_mm512_mul_epu32(x, x), c.sq_add[b]),
                c.sq_shift[b],
            );
            let t = _mm512_add_epi64(_mm512_mul_epi32(sq, x), c.cub_add[b]);
            let t = _mm512_sra_epi64(t, c.cub_shift[b]);
            acc[b] = _mm512_mask_add_epi64(acc[b], lanes, acc[b], t);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Scale-0 decoupling
// ---------------------------------------------------------------------------------------------

/// The AVX-512 [`DecoupleS0`](super::DecoupleS0), 16 samples per step in 32-bit lanes: the angle
/// test's dot products exact in `int32` (`vpmaddwd`, the one wrapping value told apart) rounded
/// to `float`, compared in `double` 8 lanes at a time; the reciprocal `DIV_LOOKUP` entry by a
/// `float` division ([`div_q30_i32`]) and its 64-bit product with `t` as even/odd lane pairs, the gain
/// limit in `double` with `minpd`/`maxpd` (which return the second operand unless the first is
/// smaller/greater, as the scalar's comparisons) and `cvttpd2dq` (C's truncation, `INT32_MIN`
/// out of range). A row's last, partial step is masked.
fn decouple_s0(
    ref_hvd: [&[i16]; 3],
    dis_hvd: [&[i16]; 3],
    r_hvd: [&mut [i16]; 3],
    a_hvd: [&mut [i16]; 3],
    stride: usize,
    reg: Region,
    egl: f64,
) {
    // SAFETY: only reachable through `install`, which checked that the CPU has AVX-512 F, BW,
    // CD and DQ.
    unsafe { decouple_s0_avx512(ref_hvd, dis_hvd, r_hvd, a_hvd, stride, reg, egl) }
}

#[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
fn decouple_s0_avx512(
    ref_hvd: [&[i16]; 3],
    dis_hvd: [&[i16]; 3],
    r_hvd: [&mut [i16]; 3],
    a_hvd: [&mut [i16]; 3],
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
    let c = DecoupleConsts::new(egl);
    let small = div_q30_small();
    for i in reg.top..reg.bottom {
        for j in (reg.left..reg.right).step_by(16) {
            let n = (reg.right - j).min(16);
            decouple_s0_step(ref_hvd, dis_hvd, &mut out, i * stride + j, n, &c, &small);
        }
    }
}

/// The 16 `i16` at `b[p..]` (only the first `n <= 16` read; the others 0), sign-extended to
/// 32-bit lanes.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
fn load_i16x16_i32(b: &[i16], p: usize, n: usize) -> __m512i {
    let b = &b[p..p + n];
    let v = if n == 16 {
        // SAFETY: `b` holds 16 `i16` (32 bytes); the load is unaligned.
        unsafe { _mm256_loadu_si256(b.as_ptr().cast()) }
    } else {
        // SAFETY: the mask enables the first n lanes, which `b` holds; masked-off lanes are not
        // accessed.
        _mm512_castsi512_si256(unsafe { _mm512_maskz_loadu_epi16((1u32 << n) - 1, b.as_ptr()) })
    };
    _mm512_cvtepi16_epi32(v)
}

/// Stores the low 16 bits of the first `n <= 16` 32-bit lanes of `v` to `b[p..p + n]` (C's
/// narrowing cast).
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
fn store_i32x16_i16(b: &mut [i16], p: usize, n: usize, v: __m512i) {
    let b = &mut b[p..p + n];
    let v = _mm512_cvtepi32_epi16(v);
    if n == 16 {
        // SAFETY: `b` holds 16 `i16` (32 bytes); the store is unaligned.
        unsafe { _mm256_storeu_si256(b.as_mut_ptr().cast(), v) }
    } else {
        // SAFETY: the mask enables the first n lanes, which `b` holds; masked-off lanes are not
        // written.
        unsafe {
            _mm512_mask_storeu_epi16(b.as_mut_ptr(), (1u32 << n) - 1, _mm512_castsi256_si512(v))
        }
    }
}

/// The low (`hi` false) or high 8 `i32` lanes of `v` as `double`s.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
fn half_pd(v: __m512i, hi: bool) -> __m512d {
    _mm512_cvtepi32_pd(if hi {
        _mm512_extracti64x4_epi64::<1>(v)
    } else {
        _mm512_castsi512_si256(v)
    })
}

/// Two halves of 8 `i32` as 16 lanes (`lo` the low ones).
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
fn join_i32(lo: __m256i, hi: __m256i) -> __m512i {
    _mm512_inserti64x4::<1>(_mm512_castsi256_si512(lo), hi)
}

/// Samples `p .. p + n` (`n <= 16`) of [`decouple_s0_avx512`]; `out` is `[r_h, r_v, r_d, a_h,
/// a_v, a_d]`.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
fn decouple_s0_step(
    ref_hvd: [&[i16]; 3],
    dis_hvd: [&[i16]; 3],
    out: &mut [&mut [i16]; 6],
    p: usize,
    n: usize,
    c: &DecoupleConsts,
    small: &[__m512i; 4],
) {
    let o = [
        load_i16x16_i32(ref_hvd[0], p, n),
        load_i16x16_i32(ref_hvd[1], p, n),
        load_i16x16_i32(ref_hvd[2], p, n),
    ];
    let t = [
        load_i16x16_i32(dis_hvd[0], p, n),
        load_i16x16_i32(dis_hvd[1], p, n),
        load_i16x16_i32(dis_hvd[2], p, n),
    ];
    // The angle flag. The dot products in `int32` by `madd` of the (h, v) pairs, exact but for
    // 2^31 (both products 2^30), which wraps to INT32_MIN, a value no exact sum takes (the least
    // is -2^31 + 2^16); `(float)` of them as `vcvtdq2ps` (correctly rounded, as C's of the
    // `int64`). The comparisons in `double`, 8 lanes per half, without the scalar's `/ 4096` of
    // each operand: those scale both sides by 2^-24 exactly (no value comes near the ends of the
    // `double` range), which changes no rounding and so no comparison.
    let pair = |a: __m512i, b: __m512i| {
        _mm512_mask_blend_epi16(0xaaaa_aaaa, a, _mm512_slli_epi32::<16>(b))
    };
    let (op, tp) = (pair(o[0], o[1]), pair(t[0], t[1]));
    let to_f32 = |d: __m512i| {
        let wrapped = _mm512_cmpeq_epi32_mask(d, _mm512_set1_epi32(i32::MIN));
        _mm512_mask_mov_ps(
            _mm512_cvtepi32_ps(d),
            wrapped,
            _mm512_set1_ps(2_147_483_648.0),
        )
    };
    let ot = to_f32(_mm512_madd_epi16(op, tp));
    let om = to_f32(_mm512_madd_epi16(op, op));
    let tm = to_f32(_mm512_madd_epi16(tp, tp));
    let flag_half = |hi: bool| {
        let half = |v: __m512| {
            _mm512_cvtps_pd(if hi {
                _mm512_extractf32x8_ps::<1>(v)
            } else {
                _mm512_castps512_ps256(v)
            })
        };
        let (ot, om, tm) = (half(ot), half(om), half(tm));
        let rhs = _mm512_mul_pd(_mm512_mul_pd(c.cos, om), tm);
        _mm512_cmp_pd_mask::<_CMP_GE_OQ>(ot, _mm512_setzero_pd())
            & _mm512_cmp_pd_mask::<_CMP_GE_OQ>(_mm512_mul_pd(ot, ot), rhs)
    };
    // In `float` first, 16 lanes (the AVX2 peer's test, whose bounds hold here): a step with a
    // pair within 2^-20 of the edge takes the `double` test.
    let lhs = _mm512_mul_ps(ot, ot);
    let rhs = _mm512_mul_ps(_mm512_mul_ps(c.cos_ps, om), tm);
    let above = _mm512_cmp_ps_mask::<_CMP_GE_OQ>(lhs, _mm512_mul_ps(rhs, c.margin_up));
    let below = _mm512_cmp_ps_mask::<_CMP_LT_OQ>(lhs, _mm512_mul_ps(rhs, c.margin_down));
    let ot_pos = _mm512_cmp_ps_mask::<_CMP_GE_OQ>(ot, _mm512_setzero_ps());
    let flag = if ot_pos & !(above | below) == 0 {
        ot_pos & above
    } else {
        flag_half(false) as u16 | (flag_half(true) as u16) << 8
    };
    let z = _mm512_setzero_si512();
    let k32768 = _mm512_set1_epi32(32768);
    let r16384 = _mm512_set1_epi32(16384);
    let r16384x = _mm512_set1_epi64(16384);
    // C's (int16_t) of an int32 lane.
    let to_i16 = |v: __m512i| _mm512_srai_epi32::<16>(_mm512_slli_epi32::<16>(v));
    for b in 0..3 {
        let (ob, tb) = (o[b], t[b]);
        // k = clamp((DIV_LOOKUP[o + 32768] * t + 16384) >> 15, 0, 32768), 32768 for o = 0.
        // (Lanes with o = 0 get garbage, replaced by k = 32768 below.)
        let dv = div_q30_i32(ob, small);
        // The 64-bit products' bits 15..47, the same low 32 bits under a logical shift as under
        // the scalar's arithmetic one.
        let q = |d: __m512i, tt: __m512i| {
            _mm512_srli_epi64::<15>(_mm512_add_epi64(_mm512_mul_epi32(d, tt), r16384x))
        };
        let qe = q(dv, tb);
        let qo = q(_mm512_srli_epi64::<32>(dv), _mm512_srli_epi64::<32>(tb));
        let q = _mm512_mask_blend_epi32(0xaaaa, qe, _mm512_slli_epi64::<32>(qo));
        let q = _mm512_max_epi32(_mm512_min_epi32(q, k32768), z);
        let nonzero = _mm512_cmpneq_epi32_mask(ob, z);
        let k = _mm512_mask_mov_epi32(k32768, nonzero, q);
        // r = (i16)((k * o + 16384) >> 15): already in the `i16` range (|k * o| <= 2^30, and
        // 32767 * 32768 + 16384 rounds down to 32767), so the cast changes nothing.
        let mut r = _mm512_srai_epi32::<15>(_mm512_add_epi32(_mm512_mullo_epi32(k, ob), r16384));
        // The gain limit where the angles agree and the restoration has a sign.
        let kpos = _mm512_cmpgt_epi32_mask(k, z);
        let pos = kpos & _mm512_cmpgt_epi32_mask(ob, z);
        let neg = kpos & _mm512_cmplt_epi32_mask(ob, z);
        let apply = flag & (pos | neg);
        if apply != 0 {
            let (lp, ln) = if let Some(egl_s) = c.egl_ps {
                // All 16 lanes in `float`: the same exact values (`scalar::f32_exact_gain`).
                let g = _mm512_mul_ps(_mm512_cvtepi32_ps(r), egl_s);
                let tt = _mm512_cvtepi32_ps(tb);
                (
                    _mm512_cvttps_epi32(_mm512_min_ps(g, tt)),
                    _mm512_cvttps_epi32(_mm512_max_ps(g, tt)),
                )
            } else {
                let limit = |hi: bool| {
                    let g = _mm512_mul_pd(half_pd(r, hi), c.egl);
                    let tt = half_pd(tb, hi);
                    (
                        _mm512_cvttpd_epi32(_mm512_min_pd(g, tt)),
                        _mm512_cvttpd_epi32(_mm512_max_pd(g, tt)),
                    )
                };
                let ((p0, n0), (p1, n1)) = (limit(false), limit(true));
                (join_i32(p0, p1), join_i32(n0, n1))
            };
            let lim = _mm512_mask_mov_epi32(ln, pos, lp);
            r = _mm512_mask_mov_epi32(r, apply, to_i16(lim));
        }
        let a = _mm512_sub_epi32(tb, r);
        store_i32x16_i16(out[b], p, n, r);
        store_i32x16_i16(out[3 + b], p, n, a);
    }
}

// ---------------------------------------------------------------------------------------------
// Scale-1..3 decoupling
// ---------------------------------------------------------------------------------------------

/// The AVX-512 [`DecoupleS123`](super::DecoupleS123): 8 samples per step in 64-bit lanes, so
/// every `int64` of the scalar kernel is a lane: the angle test's dot products exact
/// (`_mm512_mul_epi32`) and rounded to `float` as C's `(float)` of an `int64` (`vcvtqq2ps`);
/// the 15 leading bits of `|o|` from `vplzcnt`, their `DIV_LOOKUP` reciprocal by [`div_q30`],
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
    let c = DecoupleConsts::new(egl);
    for i in reg.top..reg.bottom {
        for j in (reg.left..reg.right).step_by(8) {
            let n = (reg.right - j).min(8);
            decouple_s123_step(ref_hvd, dis_hvd, &mut out, i * stride + j, n, &c);
        }
    }
}

/// The constants of [`decouple_s0_step`] and [`decouple_s123_step`].
struct DecoupleConsts {
    inv4096: __m512d,
    cos: __m512d,
    egl: __m512d,
    /// The scale-0 angle test's `float` pass: `cos^2(1°)` and the factors `1 ± 2^-20` of its
    /// margin.
    cos_ps: __m512,
    margin_up: __m512,
    margin_down: __m512,
    /// The gain limit in `float` where that is exact (`scalar::f32_exact_gain`).
    egl_ps: Option<__m512>,
}

impl DecoupleConsts {
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
    fn new(egl: f64) -> Self {
        let margin = 1.0 / (1 << 20) as f32;
        DecoupleConsts {
            inv4096: _mm512_set1_pd(1.0 / 4096.0),
            cos: _mm512_set1_pd(COS_1DEG_SQ as f64),
            egl: _mm512_set1_pd(egl),
            cos_ps: _mm512_set1_ps(COS_1DEG_SQ),
            margin_up: _mm512_set1_ps(1.0 + margin),
            margin_down: _mm512_set1_ps(1.0 - margin),
            egl_ps: scalar::f32_exact_gain(egl).map(|e| _mm512_set1_ps(e)),
        }
    }
}

/// `DIV_LOOKUP[32768 + v]` for `v` in `0..64` (entry 0 unused), 16 per vector.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
fn div_q30_small() -> [__m512i; 4] {
    from_fn(|q| {
        let e: [i32; 16] = from_fn(|l| DIV_LOOKUP[32768 + 16 * q + l]);
        // SAFETY: `e` holds 16 `i32` (64 bytes); the load is unaligned.
        unsafe { _mm512_loadu_si512(e.as_ptr().cast()) }
    })
}

/// `DIV_LOOKUP[32768 + v]` (libvmaf's reciprocal table, `2^30 / v` in C's truncating integer
/// division, negated for negative `v`) for 16 `i32` lanes of nonzero `v`, `|v| <= 2^15`; lanes
/// with `v = 0` get garbage. For `|v| >= 64` the `float` quotient `2^30 / |v|` (below 2^24, so
/// within one of the integer quotient) truncated and corrected by the sign of the remainder
/// `2^30 - q |v|` (exact in `i32`); below 64 from `small` ([`div_q30_small`]) by permutes. One
/// `float` division for 16 lanes instead of two `double` ones for 8 each (a `double` division
/// occupies Intel's divider 16 cycles a vector; the unit test `div_q30_is_the_table` checks
/// every `v`).
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
fn div_q30_i32(v: __m512i, small: &[__m512i; 4]) -> __m512i {
    let z = _mm512_setzero_si512();
    let one = _mm512_set1_epi32(1);
    let a = _mm512_abs_epi32(v);
    let q = _mm512_cvttps_epi32(_mm512_div_ps(
        _mm512_set1_ps((1u32 << 30) as f32),
        _mm512_cvtepi32_ps(a),
    ));
    let r = _mm512_sub_epi32(_mm512_set1_epi32(1 << 30), _mm512_mullo_epi32(q, a));
    let q = _mm512_mask_sub_epi32(q, _mm512_cmplt_epi32_mask(r, z), q, one);
    let q = _mm512_mask_add_epi32(q, _mm512_cmpge_epi32_mask(r, a), q, one);
    let lt = _mm512_cmplt_epi32_mask(a, _mm512_set1_epi32(64));
    let q = if lt != 0 {
        let lo = _mm512_permutex2var_epi32(small[0], a, small[1]);
        let hi = _mm512_permutex2var_epi32(small[2], a, small[3]);
        let upper = _mm512_test_epi32_mask(a, _mm512_set1_epi32(32));
        _mm512_mask_mov_epi32(q, lt, _mm512_mask_mov_epi32(lo, upper, hi))
    } else {
        q
    };
    _mm512_mask_sub_epi32(q, _mm512_cmplt_epi32_mask(v, z), z, q)
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
    let v = _mm512_cvtepi64_epi32(v);
    if n == 8 {
        // SAFETY: `b` holds 8 `i32` (32 bytes); the store is unaligned.
        unsafe { _mm256_storeu_si256(b.as_mut_ptr().cast(), v) }
    } else {
        // SAFETY: the mask enables the first n lanes, which `b` holds; masked-off lanes are not
        // written.
        unsafe {
            _mm512_mask_storeu_epi32(b.as_mut_ptr(), (1u16 << n) - 1, _mm512_castsi256_si512(v))
        }
    }
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
        // DIV_LOOKUP[msb + 32768] * t * sign (exact in int64: both factors are i32); lanes
        // outside `nonzero` (msb = 0) get garbage, replaced by k = 32768 below.
        let div = div_q30(_mm512_cvtepi64_pd(msb));
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

// ---------------------------------------------------------------------------------------------
// Scale-0 DWT
// ---------------------------------------------------------------------------------------------

// The AVX-512 scale-0 DWT row kernels. The vertical pass, 32 columns per step in 16-bit lanes,
// interleaves the samples of rows 0 and 1 (2 and 3) as the halves of 32-bit lanes
// (`vpunpck[lh]wd`, within 128-bit lanes) and filters each pair with one `_mm512_madd_epi16`,
// half the multiplies of `int32` products (the AVX2 peer does the same in 16-column steps):
// 8-bit samples fit `i16` as they are, 9..16-bit ones as `s - 2^15` (the top bit flipped), the
// `2^15 * sum(taps)` that takes off folded into the rounding constant; no pair sum overflows
// (`2^15 * (|c0| + |c1|) < 2^31` for every tap pair), so the sums equal the scalar's wrapping
// `int32` ones modulo 2^32. The rounded values fit `i16` (|value| <= 27411: the filter's
// positive or negative tap sum less the centring, over 2^bpc), so the saturating `vpackssdw`,
// which also undoes the interleave's order, is C's cast. The horizontal pass, 16 outputs per
// step, uses `_mm512_madd_epi16` on tap pairs as the AVX2 peer does (the taps fit `i16` and no
// product pair overflows), `vpmovdw` narrowing as C's cast does. A row's last, partial step is
// masked; only the mirrored edge outputs of the horizontal pass go to the scalar kernel.

/// The 32 `u8` at `b[p..]` (only the first `n <= 32` read; the others 0), zero-extended to
/// 16-bit lanes.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
fn load_u8x32_u16(b: &[u8], p: usize, n: usize) -> __m512i {
    let b = &b[p..p + n];
    let v = if n == 32 {
        // SAFETY: `b` holds 32 `u8`; the load is unaligned.
        unsafe { _mm256_loadu_si256(b.as_ptr().cast()) }
    } else {
        // SAFETY: the mask enables the first n lanes, which `b` holds; masked-off lanes are not
        // accessed.
        _mm512_castsi512_si256(unsafe {
            _mm512_maskz_loadu_epi8((1u64 << n) - 1, b.as_ptr().cast())
        })
    };
    _mm512_cvtepu8_epi16(v)
}

/// The 32 16-bit values at `b[p..]` (only the first `n <= 32` read; the others 0).
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
fn load_16x32<T: Copy>(b: &[T], p: usize, n: usize) -> __m512i {
    const { assert!(std::mem::size_of::<T>() == 2) };
    let b = &b[p..p + n];
    if n == 32 {
        // SAFETY: `T` is 2 bytes (checked at compile time), so `b` holds 64 bytes; the load is
        // unaligned.
        unsafe { _mm512_loadu_si512(b.as_ptr().cast()) }
    } else {
        // SAFETY: `T` is 2 bytes (checked at compile time); the mask enables the first n lanes,
        // which `b` holds; masked-off lanes are not accessed.
        unsafe { _mm512_maskz_loadu_epi16(((1u64 << n) - 1) as u32, b.as_ptr().cast()) }
    }
}

/// Stores the first `n <= 32` 16-bit lanes of `v` to `b[p..p + n]`.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
fn store_i16x32(b: &mut [i16], p: usize, n: usize, v: __m512i) {
    let b = &mut b[p..p + n];
    if n == 32 {
        // SAFETY: `b` holds 32 `i16` (64 bytes); the store is unaligned.
        unsafe { _mm512_storeu_si512(b.as_mut_ptr().cast(), v) }
    } else {
        // SAFETY: the mask enables the first n lanes, which `b` holds; masked-off lanes are not
        // written.
        unsafe { _mm512_mask_storeu_epi16(b.as_mut_ptr(), ((1u64 << n) - 1) as u32, v) }
    }
}

/// The taps `c[k]`, `c[k + 1]` as the low and high `i16` of each 32-bit lane.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
fn tap_pair(c: &[i32; 4], k: usize) -> __m512i {
    _mm512_set1_epi32((c[k + 1] << 16) | (c[k] & 0xffff))
}

/// The vertical pass for one sample type; `$flip` says whether the samples may not fit `i16`
/// (and go into the filter as `s - 2^15`).
macro_rules! dwt_s0_vertical_avx512 {
    ($entry:ident, $kernel:ident, $t:ty, $load:ident, $flip:expr) => {
        fn $entry(rows: [&[$t]; 4], bpc: u32, lo: &mut [i16], hi: &mut [i16]) {
            // SAFETY: only reachable through `install`, which checked that the CPU has AVX-512
            // F, BW, CD and DQ.
            unsafe { $kernel(rows, bpc, lo, hi) }
        }

        #[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
        fn $kernel(rows: [&[$t]; 4], bpc: u32, lo: &mut [i16], hi: &mut [i16]) {
            const FLIP: bool = $flip;
            let w = lo.len();
            assert!(hi.len() == w && (8..=16).contains(&bpc));
            let add = 1i32 << (bpc - 1);
            // (fir - off + add) >> bpc, the wrapping `- off + add` folded into one constant with
            // the 2^15 * sum(taps) the flipped samples leave out.
            let rnd = |sum: i32| {
                let unflip = if FLIP { sum.wrapping_mul(1 << 15) } else { 0 };
                _mm512_set1_epi32(add.wrapping_sub(sum.wrapping_mul(add)).wrapping_add(unflip))
            };
            let (rnd_lo, rnd_hi) = (rnd(DB2_LO_SUM), rnd(DB2_HI_SUM));
            let flip = _mm512_set1_epi16(if FLIP { i16::MIN } else { 0 });
            let sh = _mm_cvtsi32_si128(bpc as i32);
            let (lo01, lo23) = (tap_pair(&DB2_LO, 0), tap_pair(&DB2_LO, 2));
            let (hi01, hi23) = (tap_pair(&DB2_HI, 0), tap_pair(&DB2_HI, 2));
            for j in (0..w).step_by(32) {
                let n = (w - j).min(32);
                let s = rows.map(|r| _mm512_xor_si512($load(r, j, n), flip));
                // Per 128-bit lane, columns 0..4 of its 8 (`l`) and 4..8 (`h`).
                let (l01, h01) = (
                    _mm512_unpacklo_epi16(s[0], s[1]),
                    _mm512_unpackhi_epi16(s[0], s[1]),
                );
                let (l23, h23) = (
                    _mm512_unpacklo_epi16(s[2], s[3]),
                    _mm512_unpackhi_epi16(s[2], s[3]),
                );
                let fir = |c01: __m512i, c23: __m512i, rnd: __m512i| {
                    let f = |p01: __m512i, p23: __m512i| {
                        let acc = _mm512_add_epi32(
                            _mm512_madd_epi16(p01, c01),
                            _mm512_madd_epi16(p23, c23),
                        );
                        _mm512_sra_epi32(_mm512_add_epi32(acc, rnd), sh)
                    };
                    _mm512_packs_epi32(f(l01, l23), f(h01, h23))
                };
                store_i16x32(lo, j, n, fir(lo01, lo23, rnd_lo));
                store_i16x32(hi, j, n, fir(hi01, hi23, rnd_hi));
            }
        }
    };
}

dwt_s0_vertical_avx512!(
    dwt_s0_vertical_u8,
    dwt_s0_vertical_u8_avx512,
    u8,
    load_u8x32_u16,
    false
);
dwt_s0_vertical_avx512!(
    dwt_s0_vertical_u16,
    dwt_s0_vertical_u16_avx512,
    u16,
    load_16x32,
    true
);

fn dwt_s0_horizontal(tmp: &[i16], ind_x: &[[usize; 4]], lo: &mut [i16], hi: &mut [i16]) {
    // SAFETY: only reachable through `install`, which checked that the CPU has AVX-512 F, BW,
    // CD and DQ.
    unsafe { dwt_s0_horizontal_avx512(tmp, ind_x, lo, hi) }
}

/// The horizontal pass. `ind_x` must come from [`super::scalar::dwt_indices`] for `tmp.len()`:
/// its interior outputs `j` (`1 <= j`, `2j + 2 < w`) have the unmirrored taps `2j - 1 ..= 2j +
/// 2`, which the vector loop reads directly.
#[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
fn dwt_s0_horizontal_avx512(tmp: &[i16], ind_x: &[[usize; 4]], lo: &mut [i16], hi: &mut [i16]) {
    let (w, n) = (tmp.len(), ind_x.len());
    let (lo, hi) = (&mut lo[..n], &mut hi[..n]);
    // Interior outputs: 1 <= j < jend, with 2 * (jend - 1) + 2 <= w - 1.
    let jend = if w >= 3 { ((w - 3) / 2 + 1).min(n) } else { 0 };
    let (lo01, lo23) = (tap_pair(&DB2_LO, 0), tap_pair(&DB2_LO, 2));
    let (hi01, hi23) = (tap_pair(&DB2_HI, 0), tap_pair(&DB2_HI, 2));
    let rnd = _mm512_set1_epi32(32768);
    let mut j = 1;
    while j < jend {
        let m = (jend - j).min(16);
        // Outputs j .. j + m take taps (2j - 1 + 2k, 2j + 2k) from `a` and (2j + 1 + 2k,
        // 2j + 2 + 2k) from `b`; the highest, 2(j + m - 1) + 2 <= 2(jend - 1) + 2, is in the row.
        let a = load_16x32(tmp, 2 * j - 1, 2 * m);
        let b = load_16x32(tmp, 2 * j + 1, 2 * m);
        let fir = |c01: __m512i, c23: __m512i| {
            let acc = _mm512_add_epi32(_mm512_madd_epi16(a, c01), _mm512_madd_epi16(b, c23));
            _mm512_srai_epi32::<16>(_mm512_add_epi32(acc, rnd))
        };
        store_i32x16_i16(lo, j, m, fir(lo01, lo23));
        store_i32x16_i16(hi, j, m, fir(hi01, hi23));
        j += m;
    }
    let first = n.min(1);
    scalar::dwt_s0_horizontal(tmp, &ind_x[..first], &mut lo[..first], &mut hi[..first]);
    let j = j.max(first);
    scalar::dwt_s0_horizontal(tmp, &ind_x[j..], &mut lo[j..], &mut hi[j..]);
}

// ---------------------------------------------------------------------------------------------
// Scale-1..3 DWT
// ---------------------------------------------------------------------------------------------

// The AVX-512 scale-1..3 DWT row kernels of `i32` samples, the AVX2 peers' method (the `i16` one
// is [`dwt_s123_vertical_i16_avx512`]): every `int64` four-tap sum as even/odd lane pairs of `_mm512_mul_epi32` products (exact: `i32` samples times `i16` taps), the
// rounding shift (at most 16) logical, which keeps the same low 32 bits as the scalar's
// arithmetic one; vertical 16 columns per step, horizontal 8 outputs per step from two loads of
// the tap run. A row's last, partial step is masked; only the mirrored edge outputs of the
// horizontal pass go to the scalar kernel.

/// `sum_k c[k] * x[k]` of the low 32-bit halves of the 64-bit lanes, in 64 bits.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
fn fir4_epi64(c: &[__m512i; 4], x: &[__m512i; 4]) -> __m512i {
    _mm512_add_epi64(
        _mm512_add_epi64(_mm512_mul_epi32(x[0], c[0]), _mm512_mul_epi32(x[1], c[1])),
        _mm512_add_epi64(_mm512_mul_epi32(x[2], c[2]), _mm512_mul_epi32(x[3], c[3])),
    )
}

/// The 16 `i32` at `b[p..]` (only the first `n <= 16` read; the others 0).
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
fn load_i32x16(b: &[i32], p: usize, n: usize) -> __m512i {
    let b = &b[p..p + n];
    if n == 16 {
        // SAFETY: `b` holds 16 `i32` (64 bytes); the load is unaligned.
        unsafe { _mm512_loadu_si512(b.as_ptr().cast()) }
    } else {
        // SAFETY: the mask enables the first n lanes, which `b` holds; masked-off lanes are not
        // accessed.
        unsafe { _mm512_maskz_loadu_epi32(((1u32 << n) - 1) as u16, b.as_ptr()) }
    }
}

/// Stores the first `n <= 16` 32-bit lanes of `v` to `b[p..p + n]`.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
fn store_i32x16(b: &mut [i32], p: usize, n: usize, v: __m512i) {
    let b = &mut b[p..p + n];
    if n == 16 {
        // SAFETY: `b` holds 16 `i32` (64 bytes); the store is unaligned.
        unsafe { _mm512_storeu_si512(b.as_mut_ptr().cast(), v) }
    } else {
        // SAFETY: the mask enables the first n lanes, which `b` holds; masked-off lanes are not
        // written.
        unsafe { _mm512_mask_storeu_epi32(b.as_mut_ptr(), ((1u32 << n) - 1) as u16, v) }
    }
}

/// The scale-1..3 vertical pass for one sample type.
macro_rules! dwt_s123_vertical_avx512 {
    ($entry:ident, $kernel:ident, $t:ty, $load:ident) => {
        fn $entry(rows: [&[$t]; 4], scale: usize, lo: &mut [i32], hi: &mut [i32]) {
            // SAFETY: only reachable through `install`, which checked that the CPU has AVX-512
            // F, BW, CD and DQ.
            unsafe { $kernel(rows, scale, lo, hi) }
        }

        #[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
        fn $kernel(rows: [&[$t]; 4], scale: usize, lo: &mut [i32], hi: &mut [i32]) {
            let w = lo.len();
            assert!(hi.len() == w);
            let (add, shift) = DWT_S123_VERTICAL_ROUND[scale - 1];
            let add = _mm512_set1_epi64(add);
            let sh = _mm_cvtsi32_si128(shift as i32);
            let clo = DB2_LO.map(|c| _mm512_set1_epi32(c));
            let chi = DB2_HI.map(|c| _mm512_set1_epi32(c));
            for j in (0..w).step_by(16) {
                let n = (w - j).min(16);
                let e = rows.map(|r| $load(r, j, n));
                let o = e.map(|v| _mm512_srli_epi64::<32>(v));
                let round = |c: &[__m512i; 4]| {
                    let f = |x: &[__m512i; 4]| {
                        _mm512_srl_epi64(_mm512_add_epi64(fir4_epi64(c, x), add), sh)
                    };
                    _mm512_mask_blend_epi32(0xaaaa, f(&e), _mm512_slli_epi64::<32>(f(&o)))
                };
                store_i32x16(lo, j, n, round(&clo));
                store_i32x16(hi, j, n, round(&chi));
            }
        }
    };
}

/// The 16 16-bit values at `b[p..]` (only the first `n <= 16` read; the others 0), their bits
/// zero-extended to 32-bit lanes.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
fn load_16x16_u32<T: Copy>(b: &[T], p: usize, n: usize) -> __m512i {
    _mm512_cvtepu16_epi32(_mm512_castsi512_si256(load_16x32(b, p, n)))
}

/// The low 16 bits of the lanes of `a` (zero-extended 16-bit values) and of `b` side by side
/// as the low and high halves of 32-bit lanes, for `_mm512_madd_epi16`.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
fn pair16(a: __m512i, b: __m512i) -> __m512i {
    _mm512_or_si512(a, _mm512_slli_epi32::<16>(b))
}

fn dwt_s123_vertical_i16(rows: [&[i16]; 4], scale: usize, lo: &mut [i32], hi: &mut [i32]) {
    // SAFETY: only reachable through `install`, which checked that the CPU has AVX-512 F, BW, CD
    // and DQ.
    unsafe { dwt_s123_vertical_i16_avx512(rows, scale, lo, hi) }
}

/// The scale-1..3 vertical pass of `i16` samples (the scale-0 approximation band), 16 columns
/// per step in `int32`: rows 0 and 1 (2 and 3) side by side as the halves of 32-bit lanes, each
/// pair filtered by one `_mm512_madd_epi16`. The scalar's `int64` sum fits `int32` here
/// (`|sum| <= 2^15 * sum(|taps|) = 2^15 * 54822 < 2^31 - 2^15`, rounding term included), so the
/// `int32` sum and arithmetic shift are the scalar's exactly.
#[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
fn dwt_s123_vertical_i16_avx512(rows: [&[i16]; 4], scale: usize, lo: &mut [i32], hi: &mut [i32]) {
    let w = lo.len();
    assert!(hi.len() == w);
    let (add, shift) = DWT_S123_VERTICAL_ROUND[scale - 1];
    let add = _mm512_set1_epi32(add as i32);
    let sh = _mm_cvtsi32_si128(shift as i32);
    let (lo01, lo23) = (tap_pair(&DB2_LO, 0), tap_pair(&DB2_LO, 2));
    let (hi01, hi23) = (tap_pair(&DB2_HI, 0), tap_pair(&DB2_HI, 2));
    for j in (0..w).step_by(16) {
        let n = (w - j).min(16);
        let s = rows.map(|r| load_16x16_u32(r, j, n));
        let (p01, p23) = (pair16(s[0], s[1]), pair16(s[2], s[3]));
        let fir = |c01: __m512i, c23: __m512i| {
            let acc = _mm512_add_epi32(_mm512_madd_epi16(p01, c01), _mm512_madd_epi16(p23, c23));
            _mm512_sra_epi32(_mm512_add_epi32(acc, add), sh)
        };
        store_i32x16(lo, j, n, fir(lo01, lo23));
        store_i32x16(hi, j, n, fir(hi01, hi23));
    }
}

dwt_s123_vertical_avx512!(
    dwt_s123_vertical_i32,
    dwt_s123_vertical_i32_avx512,
    i32,
    load_i32x16
);

fn dwt_s123_horizontal(
    tmp: &[i32],
    ind_x: &[[usize; 4]],
    scale: usize,
    lo: &mut [i32],
    hi: &mut [i32],
) {
    // SAFETY: only reachable through `install`, which checked that the CPU has AVX-512 F, BW,
    // CD and DQ.
    unsafe { dwt_s123_horizontal_avx512(tmp, ind_x, scale, lo, hi) }
}

/// The scale-1..3 horizontal pass. `ind_x` must come from [`super::scalar::dwt_indices`] for
/// `tmp.len()`: its interior outputs `j` (`1 <= j`, `2j + 2 < w`) have the unmirrored taps
/// `2j - 1 ..= 2j + 2`, which the vector loop reads directly.
#[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
fn dwt_s123_horizontal_avx512(
    tmp: &[i32],
    ind_x: &[[usize; 4]],
    scale: usize,
    lo: &mut [i32],
    hi: &mut [i32],
) {
    let (w, n) = (tmp.len(), ind_x.len());
    let (lo, hi) = (&mut lo[..n], &mut hi[..n]);
    let jend = if w >= 3 { ((w - 3) / 2 + 1).min(n) } else { 0 };
    let (add, shift) = DWT_S123_HORIZONTAL_ROUND[scale - 1];
    let add = _mm512_set1_epi64(add);
    let sh = _mm_cvtsi32_si128(shift as i32);
    let clo = DB2_LO.map(|c| _mm512_set1_epi32(c));
    let chi = DB2_HI.map(|c| _mm512_set1_epi32(c));
    let mut j = 1;
    while j < jend {
        let m = (jend - j).min(8);
        // Outputs j .. j + m: taps 0 and 1 are the even and odd lanes of the run from 2j - 1,
        // taps 2 and 3 those of the run from 2j + 1; the highest, 2(j + m - 1) + 2 <=
        // 2(jend - 1) + 2, is in the row.
        let a = load_i32x16(tmp, 2 * j - 1, 2 * m);
        let b = load_i32x16(tmp, 2 * j + 1, 2 * m);
        let taps = [a, _mm512_srli_epi64::<32>(a), b, _mm512_srli_epi64::<32>(b)];
        let round =
            |c: &[__m512i; 4]| _mm512_srl_epi64(_mm512_add_epi64(fir4_epi64(c, &taps), add), sh);
        store_i64x8_i32(lo, j, m, round(&clo));
        store_i64x8_i32(hi, j, m, round(&chi));
        j += m;
    }
    let first = n.min(1);
    scalar::dwt_s123_horizontal(
        tmp,
        &ind_x[..first],
        scale,
        &mut lo[..first],
        &mut hi[..first],
    );
    let j = j.max(first);
    scalar::dwt_s123_horizontal(tmp, &ind_x[j..], scale, &mut lo[j..], &mut hi[j..]);
}

// ---------------------------------------------------------------------------------------------
// CSF
// ---------------------------------------------------------------------------------------------

/// The AVX-512 [`CsfS0`](super::CsfS0), 32 samples per step: `csf` in the AVX2 peer's `int32`
/// arithmetic (the products wrap as the scalar's `int32` ones) on the even and odd samples of a
/// 16-bit vector sign-extended in place to 32-bit lanes, put back together from their low 16
/// bits (C's narrowing cast); then in 16-bit lanes, whose wrapping is the scalar's narrowing of
/// the filter and centre values ([`csf_s0_parts`]); the band sums in 32-bit lanes. A row's last,
/// partial step is masked.
fn csf_s0(
    src: [&[i16]; 3],
    flt: &mut [i32],
    centre: &mut [i32],
    stride: usize,
    reg: Region,
    i_rfactor: [u16; 3],
) {
    // SAFETY: only reachable through `install`, which checked that the CPU has AVX-512 F, BW,
    // CD and DQ.
    unsafe { csf_s0_avx512(src, flt, centre, stride, reg, i_rfactor) }
}

/// The scale-0 filter and centre values `((k * a + 2048) >> 12) as i16` (`k` = 1/30 and 1/15 in
/// Q17 over Q12) of the 32 `a = |csf|` (`u16`, at most 2^15) in 16-bit lanes, without the 32-bit
/// product: `(4369 a + 2048) >> 12 = a + ((2184 a + 2^14) >> 15)` and `(8738 a + 2048) >> 12 =
/// 2a + ((4368 a + 2^14) >> 15)` (times 16 over 2^16, the whole multiple of `a` split off),
/// each rounding shift a `vpmulhrsw`, the additions wrapping to the narrowed value. `a = 2^15`
/// is `-2^15` to `vpmulhrsw`, whose result then only has the wrong sign: the absolute value of
/// each product (never negative otherwise) is right for every lane.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
fn csf_s0_parts(a: __m512i) -> (__m512i, __m512i) {
    const { assert!(FIX_ONE_BY_30 == 4369 && ONE_BY_15 == 2 * FIX_ONE_BY_30) };
    let k30 = _mm512_abs_epi16(_mm512_mulhrs_epi16(a, _mm512_set1_epi16(2184)));
    let k15 = _mm512_abs_epi16(_mm512_mulhrs_epi16(a, _mm512_set1_epi16(4368)));
    (
        _mm512_add_epi16(a, k30),
        _mm512_add_epi16(_mm512_add_epi16(a, a), k15),
    )
}

#[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
fn csf_s0_avx512(
    src_hvd: [&[i16]; 3],
    flt: &mut [i32],
    centre: &mut [i32],
    stride: usize,
    reg: Region,
    i_rfactor: [u16; 3],
) {
    const SHIFT: [i32; 3] = [15, 15, 17];
    const ADD: [i32; 3] = [16384, 16384, 65535];
    let rf = i_rfactor.map(|r| _mm512_set1_epi32(r as i32));
    let add = ADD.map(|a| _mm512_set1_epi32(a));
    let sh = SHIFT.map(|s| _mm_cvtsi32_si128(s));
    // The odd 16-bit lanes' low 16 bits over the even ones'.
    let join = |even: __m512i, odd: __m512i| {
        _mm512_mask_blend_epi16(0xaaaa_aaaa, even, _mm512_slli_epi32::<16>(odd))
    };
    // The 32 `i16` lanes of `v` sign-extended, as two vectors of 16 `i32` in order.
    let widen = |v: __m512i| {
        (
            _mm512_cvtepi16_epi32(_mm512_castsi512_si256(v)),
            _mm512_cvtepi16_epi32(_mm512_extracti64x4_epi64::<1>(v)),
        )
    };
    for i in reg.top..reg.bottom {
        for j in (reg.left..reg.right).step_by(32) {
            let (p, n) = (i * stride + j, (reg.right - j).min(32));
            let z = _mm512_setzero_si512();
            let (mut f0, mut f1, mut c0, mut c1) = (z, z, z, z);
            for b in 0..3 {
                let s = load_16x32(src_hvd[b], p, n);
                let csf = |x: __m512i| {
                    _mm512_sra_epi32(
                        _mm512_add_epi32(_mm512_mullo_epi32(rf[b], x), add[b]),
                        sh[b],
                    )
                };
                let even = csf(_mm512_srai_epi32::<16>(_mm512_slli_epi32::<16>(s)));
                let odd = csf(_mm512_srai_epi32::<16>(s));
                let (f, c) = csf_s0_parts(_mm512_abs_epi16(join(even, odd)));
                let ((fl, fh), (cl, ch)) = (widen(f), widen(c));
                f0 = _mm512_add_epi32(f0, fl);
                f1 = _mm512_add_epi32(f1, fh);
                c0 = _mm512_add_epi32(c0, cl);
                c1 = _mm512_add_epi32(c1, ch);
            }
            store_i32x16(flt, p, n.min(16), f0);
            store_i32x16(centre, p, n.min(16), c0);
            if n > 16 {
                store_i32x16(flt, p + 16, n - 16, f1);
                store_i32x16(centre, p + 16, n - 16, c1);
            }
        }
    }
}

/// The AVX-512 [`CsfS123`](super::CsfS123), the AVX2 peer's method 16 samples per step: the
/// 64-bit products as even/odd lane pairs (the unsigned Q32 weight as a signed product plus
/// `x << 32`; `>> 28` logical, `>> 32` as the high halves); a row's last, partial step is masked.
fn csf_s123(
    src: [&[i32]; 3],
    flt: &mut [i32],
    centre: &mut [i32],
    stride: usize,
    reg: Region,
    i_rfactor: [u32; 3],
) {
    // SAFETY: only reachable through `install`, which checked that the CPU has AVX-512 F, BW,
    // CD and DQ.
    unsafe { csf_s123_avx512(src, flt, centre, stride, reg, i_rfactor) }
}

#[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
fn csf_s123_avx512(
    src_hvd: [&[i32]; 3],
    flt: &mut [i32],
    centre: &mut [i32],
    stride: usize,
    reg: Region,
    i_rfactor: [u32; 3],
) {
    // Both Q32 weights are below 2^31: valid signed 32-bit multipliers.
    let k30 = _mm512_set1_epi32(I4_FIX_ONE_BY_30 as i32);
    let k15 = _mm512_set1_epi32(I4_ONE_BY_15 as i32);
    let add32 = _mm512_set1_epi64(i32::MIN as i64);
    let rf = i_rfactor.map(|r| _mm512_set1_epi32(r as i32));
    // (k * |c| - 2^31) >> 32 as i32 of the lanes of `a = |c|`: the high halves.
    let q32 = |a: __m512i, k: __m512i| {
        let e = _mm512_add_epi64(_mm512_mul_epi32(a, k), add32);
        let o = _mm512_add_epi64(_mm512_mul_epi32(_mm512_srli_epi64::<32>(a), k), add32);
        _mm512_mask_blend_epi32(0xaaaa, _mm512_srli_epi64::<32>(e), o)
    };
    for i in reg.top..reg.bottom {
        for j in (reg.left..reg.right).step_by(16) {
            let (p, n) = (i * stride + j, (reg.right - j).min(16));
            let (mut fs, mut cs) = (_mm512_setzero_si512(), _mm512_setzero_si512());
            for b in 0..3 {
                let c = scale_q28(load_i32x16(src_hvd[b], p, n), rf[b], i_rfactor[b]);
                let a = _mm512_abs_epi32(c);
                fs = _mm512_add_epi32(fs, q32(a, k30));
                cs = _mm512_add_epi32(cs, q32(a, k15));
            }
            store_i32x16(flt, p, n, fs);
            store_i32x16(centre, p, n, cs);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Scale-1..3 contrast masking
// ---------------------------------------------------------------------------------------------

/// The AVX-512 [`CmS123Interior`](super::CmS123Interior), the AVX2 peer's method 16 samples per
/// step in 32-bit lanes: every 64-bit product as even/odd lane pairs, `x * rfactor` with the
/// unsigned `rfactor` as a signed product plus `x << 32` where `rfactor >= 2^31` (equal modulo
/// 2^64, all the scalar's wrapping product keeps), `>> 32` as the high halves, `>> 28` logical
/// (the low 32 bits kept are the arithmetic shift's), the cube's arithmetic shift `vpsraq`; the
/// row's last, partial step with masked loads, its missing lanes left out of the sums.
fn cm_s123_interior(
    x_hvd: [&[i32]; 3],
    flt: &[i32],
    centre: &[i32],
    rows: (usize, usize, usize),
    cols: Range<usize>,
    rfactor: [u32; 3],
    shift_cub: u32,
) -> [i64; 3] {
    // SAFETY: only reachable through `install`, which checked that the CPU has AVX-512 F, BW,
    // CD and DQ.
    unsafe { cm_s123_interior_avx512(x_hvd, flt, centre, rows, cols, rfactor, shift_cub) }
}

/// The constants of [`cm_s123_step`].
struct CmS123Consts {
    rf: [__m512i; 3],
    rfactor: [u32; 3],
    cub_add: __m512i,
    cub_shift: __m128i,
}

#[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
fn cm_s123_interior_avx512(
    x_hvd: [&[i32]; 3],
    flt: &[i32],
    centre: &[i32],
    rows: (usize, usize, usize),
    cols: Range<usize>,
    rfactor: [u32; 3],
    shift_cub: u32,
) -> [i64; 3] {
    if cols.end <= cols.start {
        return [0; 3];
    }
    // Column j reads columns j - 1 ..= j + 1 of the three rows (as the scalar kernel does).
    assert!(cols.start >= 1);
    let top = rows.0.max(rows.1).max(rows.2) + cols.end + 1;
    assert!(x_hvd.iter().all(|b| b.len() >= top));
    assert!(flt.len() >= top && centre.len() >= top);
    let c = CmS123Consts {
        rf: rfactor.map(|r| _mm512_set1_epi32(r as i32)),
        rfactor,
        cub_add: _mm512_set1_epi64(half_pow2_u32(shift_cub) as i64),
        cub_shift: _mm_cvtsi32_si128((shift_cub & 63) as i32),
    };
    let mut acc = [_mm512_setzero_si512(); 3];
    for j in (cols.start..cols.end).step_by(16) {
        let n = (cols.end - j).min(16);
        cm_s123_step(x_hvd, flt, centre, rows, j, n, &c, &mut acc);
    }
    [
        _mm512_reduce_add_epi64(acc[0]),
        _mm512_reduce_add_epi64(acc[1]),
        _mm512_reduce_add_epi64(acc[2]),
    ]
}

/// Columns `j .. j + n` (`n <= 16`) of [`cm_s123_interior_avx512`], added to `acc` (per band,
/// 64-bit lanes).
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
#[allow(clippy::too_many_arguments)]
fn cm_s123_step(
    x_hvd: [&[i32]; 3],
    flt: &[i32],
    centre: &[i32],
    rows: (usize, usize, usize),
    j: usize,
    n: usize,
    c: &CmS123Consts,
    acc: &mut [__m512i; 3],
) {
    let z = _mm512_setzero_si512();
    let sq_add = _mm512_set1_epi64(1 << 29);
    let (u, m, d) = (rows.0 + j, rows.1 + j, rows.2 + j);
    let thr = thr16!(flt, centre, (u, m, d), n);
    // The 64-bit lanes of the even (lane 2l) and odd (2l + 1) samples in the step.
    let even = ((1u32 << n.div_ceil(2)) - 1) as u8;
    let odd = ((1u32 << (n / 2)) - 1) as u8;
    for b in 0..3 {
        let xv = load_i32x16(x_hvd[b], m, n);
        let x = scale_q28(xv, c.rf[b], c.rfactor[b]);
        let x = _mm512_max_epi32(_mm512_sub_epi32(_mm512_abs_epi32(x), thr), z);
        for (x, lanes) in [(x, even), (_mm512_srli_epi64::<32>(x), odd)] {
            // x in [0, 2^31): the square in u64, its low 32 bits taken as i32 (C's cast).
            let sq = _mm512_srli_epi64::<30>(_mm512_add_epi64(_mm512_mul_epu32(x, x), sq_add));
            let t = _mm512_add_epi64(_mm512_mul_epi32(sq, x), c.cub_add);
            let t = _mm512_sra_epi64(t, c.cub_shift);
            acc[b] = _mm512_mask_add_epi64(acc[b], lanes, acc[b], t);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Denominators
// ---------------------------------------------------------------------------------------------

/// The AVX-512 [`CsfDenS0`](super::CsfDenS0): 16 samples per step, `|x|` (2^15 for
/// `i16::MIN`, as the scalar's `unsigned_abs`) squared in 32 bits (at most 2^30) and cubed in
/// 64 as even/odd lane pairs (`_mm512_mul_epu32`), summed with the scalar's wrapping `u64`
/// additions (the order of wrapping additions does not change their sum); each row's sum
/// rounded as the scalar does. A row's last, partial step is masked (its missing lanes are 0,
/// whose cube adds nothing).
fn csf_den_s0(ref_hvd: [&[i16]; 3], stride: usize, reg: Region, shift: u32) -> [u64; 3] {
    // SAFETY: only reachable through `install`, which checked that the CPU has AVX-512 F, BW,
    // CD and DQ.
    unsafe { csf_den_s0_avx512(ref_hvd, stride, reg, shift) }
}

#[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
fn csf_den_s0_avx512(ref_hvd: [&[i16]; 3], stride: usize, reg: Region, shift: u32) -> [u64; 3] {
    let add: u64 = if shift > 0 { 1 << (shift - 1) } else { 0 };
    let mut accum = [0u64; 3];
    for (b, src) in ref_hvd.into_iter().enumerate() {
        for i in reg.top..reg.bottom {
            let (mut even, mut odd) = (_mm512_setzero_si512(), _mm512_setzero_si512());
            for j in (reg.left..reg.right).step_by(16) {
                let (p, n) = (i * stride + j, (reg.right - j).min(16));
                let x = _mm512_abs_epi32(load_i16x16_i32(src, p, n));
                let sq = _mm512_mullo_epi32(x, x);
                even = _mm512_add_epi64(even, _mm512_mul_epu32(sq, x));
                let (sq, x) = (_mm512_srli_epi64::<32>(sq), _mm512_srli_epi64::<32>(x));
                odd = _mm512_add_epi64(odd, _mm512_mul_epu32(sq, x));
            }
            let inner = _mm512_reduce_add_epi64(_mm512_add_epi64(even, odd)) as u64;
            accum[b] = accum[b].wrapping_add(inner.wrapping_add(add) >> shift);
        }
    }
    accum
}

/// The AVX-512 [`CsfDenS123`](super::CsfDenS123): 8 samples per step in 64-bit lanes, so every
/// `u64` of the scalar kernel is a lane: `|x|` (2^31 for `i32::MIN`, as the scalar's
/// `wrapping_abs() as u32`), its square exact (`_mm512_mul_epu32`), the product with the rounded
/// square `vpmullq` (the low 64 bits, the scalar's wrapping product), the scalar's wrapping sums;
/// each row's sum rounded as the scalar does. A row's last, partial step is masked, its missing
/// lanes left out of the sums.
fn csf_den_s123(
    ref_hvd: [&[i32]; 3],
    stride: usize,
    reg: Region,
    scale: usize,
    shift_cub: u32,
    shift_accum: u32,
) -> [u64; 3] {
    // SAFETY: only reachable through `install`, which checked that the CPU has AVX-512 F, BW,
    // CD and DQ.
    unsafe { csf_den_s123_avx512(ref_hvd, stride, reg, scale, shift_cub, shift_accum) }
}

#[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
fn csf_den_s123_avx512(
    ref_hvd: [&[i32]; 3],
    stride: usize,
    reg: Region,
    scale: usize,
    shift_cub: u32,
    shift_accum: u32,
) -> [u64; 3] {
    const SHIFT_SQ: [u32; 3] = [31, 30, 31];
    let shift_sq = SHIFT_SQ[scale - 1];
    let add_sq = _mm512_set1_epi64(1i64 << shift_sq);
    let sh_sq = _mm_cvtsi32_si128(shift_sq as i32);
    let add_cub = _mm512_set1_epi64(half_pow2_u32(shift_cub) as i64);
    let sh_cub = _mm_cvtsi32_si128((shift_cub & 63) as i32);
    let add_accum = half_pow2_u32(shift_accum) as u64;
    let sa = shift_accum & 63;
    let mut accum = [0u64; 3];
    for (b, src) in ref_hvd.into_iter().enumerate() {
        for i in reg.top..reg.bottom {
            let mut acc = _mm512_setzero_si512();
            for j in (reg.left..reg.right).step_by(8) {
                let (p, n) = (i * stride + j, (reg.right - j).min(8));
                let x = _mm512_abs_epi64(load_i32x8_i64(src, p, n));
                let sq = _mm512_srl_epi64(_mm512_add_epi64(_mm512_mul_epu32(x, x), add_sq), sh_sq);
                let val =
                    _mm512_srl_epi64(_mm512_add_epi64(_mm512_mullo_epi64(sq, x), add_cub), sh_cub);
                acc = _mm512_mask_add_epi64(acc, ((1u32 << n) - 1) as u8, acc, val);
            }
            let inner = _mm512_reduce_add_epi64(acc) as u64;
            accum[b] = accum[b].wrapping_add(inner.wrapping_add(add_accum) >> sa);
        }
    }
    accum
}

/// `DIV_LOOKUP[32768 + v]` (libvmaf's reciprocal table, `2^30 / v` in C's truncating integer
/// division, negated for negative `v`) for 8 lanes holding nonzero integers `v` with
/// `|v| <= 2^15`, by one `double` division instead of a gather from the 256 KiB table: where
/// `2^30 / |v|` is not an integer its fraction lies in `[1/|v|, 1 - 1/|v|]`, at least 2^-15 from
/// an integer, while the division's rounding moves it by at most 2^-23, so truncating the
/// rounded quotient gives the C quotient (the unit test `div_q30_is_the_table` checks every
/// `v`).
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
fn div_q30(v: __m512d) -> __m256i {
    _mm512_cvttpd_epi32(_mm512_div_pd(_mm512_set1_pd((1u32 << 30) as f64), v))
}

#[cfg(test)]
mod div_q30_tests {
    use super::super::tables::DIV_LOOKUP;
    use super::*;

    #[test]
    fn div_q30_is_the_table() {
        // `install` checks this copy's CPU features (the VNNI copy's too).
        let mut k = Kernels::SCALAR;
        install(&mut k);
        if k.decouple_s0 as usize == Kernels::SCALAR.decouple_s0 as usize {
            eprintln!(
                "div_q30_is_the_table: this CPU lacks the module's AVX-512 features: not run"
            );
            return;
        }
        // SAFETY: `install` replaced the kernel, so the CPU has every feature `check` and
        // `check_i32` enable.
        unsafe {
            check();
            check_i32();
        }
    }

    #[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
    fn check_i32() {
        let small = div_q30_small();
        let values: Vec<i32> = (-32768..=32768).filter(|&v| v != 0).collect();
        for chunk in values.chunks(16) {
            let v: [i32; 16] = std::array::from_fn(|l| chunk[l.min(chunk.len() - 1)]);
            // SAFETY: `v` holds 16 `i32`; the load is unaligned.
            let q = div_q30_i32(unsafe { _mm512_loadu_si512(v.as_ptr().cast()) }, &small);
            let mut got = [0i32; 16];
            // SAFETY: `got` holds 16 `i32` (64 bytes); the store is unaligned.
            unsafe { _mm512_storeu_si512(got.as_mut_ptr().cast(), q) };
            for l in 0..16 {
                assert_eq!(
                    got[l],
                    DIV_LOOKUP[(32768 + v[l]) as usize],
                    "2^30 / {}",
                    v[l]
                );
            }
        }
    }

    #[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512dq")]
    fn check() {
        let values: Vec<i32> = (-32768..=32768).filter(|&v| v != 0).collect();
        for chunk in values.chunks(8) {
            let v: [f64; 8] = std::array::from_fn(|l| chunk[l.min(chunk.len() - 1)] as f64);
            // SAFETY: `v` holds 8 `f64`; the load is unaligned.
            let q = div_q30(unsafe { _mm512_loadu_pd(v.as_ptr()) });
            let mut got = [0i32; 8];
            // SAFETY: `got` holds 8 `i32` (32 bytes); the store is unaligned.
            unsafe { _mm256_storeu_si256(got.as_mut_ptr().cast(), q) };
            for l in 0..8 {
                let want = DIV_LOOKUP[(32768 + v[l] as i32) as usize];
                assert_eq!(got[l], want, "2^30 / {}", v[l]);
            }
        }
    }
}
