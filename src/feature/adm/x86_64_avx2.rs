//! AVX2 peer of [`scalar::cm_s0_interior`] (the scale-0 contrast masking, libvmaf `adm_cm`),
//! equal to it bit for bit: 8 samples per step in 32-bit lanes, the 64-bit square and cube as
//! even/odd lane pairs (`_mm256_mul_epu32` / `_mm256_mul_epi32`), the arithmetic 64-bit shift
//! emulated with the sign mask; leftover columns by the scalar kernel.
//!
//! The kernel is a `#[target_feature(enable = "avx2")]` function reached only through
//! [`cm_s0_interior`], which checks that the CPU has AVX2.

use core::arch::x86_64::*;
use std::ops::Range;

use super::scalar::{self, half_pow2_u32, CmS0Interior};
use super::tables::ONE_BY_15;

/// The AVX2 kernel, if this CPU has AVX2.
pub(super) fn cm_s0_interior() -> Option<CmS0Interior> {
    is_x86_feature_detected!("avx2").then_some(cm_s0_interior_entry as CmS0Interior)
}

fn cm_s0_interior_entry(
    x_hvd: [&[i16]; 3],
    csf_hvd: [&[i16]; 3],
    flt_hvd: [&[i16]; 3],
    rows: (usize, usize, usize),
    cols: Range<usize>,
    i_rfactor: [u16; 3],
    cub: [u32; 3],
) -> [i64; 3] {
    // SAFETY: only reachable through `cm_s0_interior`, which checked that the CPU has AVX2.
    unsafe { cm_s0_interior_avx2(x_hvd, csf_hvd, flt_hvd, rows, cols, i_rfactor, cub) }
}

/// 8 `i16` sign-extended to `i32` lanes.
///
/// # Safety
/// `p` must be valid for reading 8 `i16`.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn load8(p: *const i16) -> __m256i {
    // SAFETY: the caller guarantees 16 readable bytes; the load is unaligned.
    _mm256_cvtepi16_epi32(unsafe { _mm_loadu_si128(p.cast()) })
}

/// Arithmetic right shift of 64-bit lanes by `s` (< 64).
#[inline]
#[target_feature(enable = "avx2")]
fn sra_epi64(v: __m256i, s: __m128i) -> __m256i {
    let sign = _mm256_cmpgt_epi64(_mm256_setzero_si256(), v);
    _mm256_xor_si256(_mm256_srl_epi64(_mm256_xor_si256(v, sign), s), sign)
}

#[target_feature(enable = "avx2")]
fn cm_s0_interior_avx2(
    x_hvd: [&[i16]; 3],
    csf_hvd: [&[i16]; 3],
    flt_hvd: [&[i16]; 3],
    rows: (usize, usize, usize),
    cols: Range<usize>,
    i_rfactor: [u16; 3],
    cub: [u32; 3],
) -> [i64; 3] {
    const SUB: [i32; 3] = [10, 10, 12];
    const SQ_SHIFT: [i32; 3] = [29, 29, 30];
    const SQ_ADD: [i64; 3] = [1 << 28, 1 << 28, 1 << 29];
    let n = cols.end.saturating_sub(cols.start);
    let n8 = n / 8 * 8;
    let (j0, jv) = (cols.start, cols.start + n8);
    if n8 > 0 {
        // The vector loop reads columns j0 - 1 ..= jv of the three rows.
        assert!(j0 >= 1);
        let top = rows.0.max(rows.1).max(rows.2) + jv + 1;
        assert!(x_hvd
            .iter()
            .chain(&csf_hvd)
            .chain(&flt_hvd)
            .all(|b| b.len() >= top));
    }
    let z = _mm256_setzero_si256();
    let k15 = _mm256_set1_epi32(ONE_BY_15);
    let r2048 = _mm256_set1_epi32(2048);
    let rf = i_rfactor.map(|r| _mm256_set1_epi32(r as i32));
    let sub = SUB.map(|s| _mm_cvtsi32_si128(s));
    let sq_add = SQ_ADD.map(|a| _mm256_set1_epi64x(a));
    let sq_shift = SQ_SHIFT.map(|s| _mm_cvtsi32_si128(s));
    let cub_add = cub.map(|s| _mm256_set1_epi64x(half_pow2_u32(s) as i64));
    let cub_shift = cub.map(|s| _mm_cvtsi32_si128((s & 63) as i32));
    let mut acc = [z; 3];
    for j in (j0..jv).step_by(8) {
        let (u, c, d) = (rows.0 + j, rows.1 + j, rows.2 + j);
        let mut thr = z;
        for b in 0..3 {
            let f = flt_hvd[b].as_ptr();
            // SAFETY: every offset below is at least (row + j0 - 1) >= 0 and at most
            // (row + jv - 8 + 1), reading 8 values up to row + jv + 1 <= top <= length (checked).
            let (nb, cs) = unsafe {
                let s = [
                    load8(f.add(u - 1)),
                    load8(f.add(u)),
                    load8(f.add(u + 1)),
                    load8(f.add(c - 1)),
                    load8(f.add(c + 1)),
                    load8(f.add(d - 1)),
                    load8(f.add(d)),
                    load8(f.add(d + 1)),
                ];
                let nb = s.iter().fold(z, |a, &v| _mm256_add_epi32(a, v));
                (nb, load8(csf_hvd[b].as_ptr().add(c)))
            };
            // ((ONE_BY_15 * |csf| + 2048) >> 12) as i16, sign-extended back.
            let cc = _mm256_srai_epi32::<12>(_mm256_add_epi32(
                _mm256_mullo_epi32(k15, _mm256_abs_epi32(cs)),
                r2048,
            ));
            let cc = _mm256_srai_epi32::<16>(_mm256_slli_epi32::<16>(cc));
            thr = _mm256_add_epi32(thr, _mm256_add_epi32(nb, cc));
        }
        for b in 0..3 {
            // SAFETY: as above (c + 8 <= top).
            let xv = unsafe { load8(x_hvd[b].as_ptr().add(c)) };
            let x = _mm256_mullo_epi32(xv, rf[b]);
            let x = _mm256_sub_epi32(_mm256_abs_epi32(x), _mm256_sll_epi32(thr, sub[b]));
            let x = _mm256_max_epi32(x, z);
            for x in [x, _mm256_srli_epi64::<32>(x)] {
                // x in [0, 2^31): the square in u64, its low 32 bits taken as i32 (C's cast).
                let sq = _mm256_srl_epi64(
                    _mm256_add_epi64(_mm256_mul_epu32(x, x), sq_add[b]),
                    sq_shift[b],
                );
                let t = _mm256_add_epi64(_mm256_mul_epi32(sq, x), cub_add[b]);
                acc[b] = _mm256_add_epi64(acc[b], sra_epi64(t, cub_shift[b]));
            }
        }
    }
    let mut inner = acc.map(|a| {
        let mut l = [0i64; 4];
        // SAFETY: `l` holds 4 `i64` (32 bytes); the store is unaligned.
        unsafe { _mm256_storeu_si256(l.as_mut_ptr().cast(), a) };
        l.iter().fold(0i64, |s, &v| s.wrapping_add(v))
    });
    let tail = scalar::cm_s0_interior(
        x_hvd,
        csf_hvd,
        flt_hvd,
        rows,
        jv.max(j0)..cols.end,
        i_rfactor,
        cub,
    );
    for b in 0..3 {
        inner[b] = inner[b].wrapping_add(tail[b]);
    }
    inner
}
