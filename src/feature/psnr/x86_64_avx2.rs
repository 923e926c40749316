//! AVX2 peers of the [`scalar`] PSNR kernel. The sums are of integers, so only their order
//! differs from the scalar one, which is exact: 8-bit rows 32 samples per step (squares paired
//! into `u32` lanes by `_mm256_madd_epi16`, widened to `u64` before they could overflow), 16-bit
//! rows 16 samples per step (64-bit squares); the samples left over at a row's end go through
//! [`scalar::row`].
//!
//! The kernels are `#[target_feature(enable = "avx2")]` functions reached only through
//! [`install`], which checks that the CPU has AVX2; that check is what every `unsafe` call of
//! them relies on.

use core::arch::x86_64::*;

use super::scalar;
use super::Kernels;

/// Replaces the entries of `k` that have an AVX2 kernel, if this CPU has AVX2.
pub(super) fn install(k: &mut Kernels) {
    if !is_x86_feature_detected!("avx2") {
        return;
    }
    k.sse_u8 = sse_u8;
    k.sse_u16 = sse_u16;
}

fn sse_u8(r: &[u8], rs: usize, d: &[u8], ds: usize, w: usize, h: usize) -> u64 {
    let mut total = 0u64;
    for y in 0..h {
        let (rr, dr) = (&r[y * rs..y * rs + w], &d[y * ds..y * ds + w]);
        // SAFETY: only reachable through `install`, which checked that the CPU has AVX2.
        total = total.wrapping_add(unsafe { row_u8(rr, dr) });
    }
    total
}

fn sse_u16(r: &[u16], rs: usize, d: &[u16], ds: usize, w: usize, h: usize) -> u64 {
    let mut total = 0u64;
    for y in 0..h {
        let (rr, dr) = (&r[y * rs..y * rs + w], &d[y * ds..y * ds + w]);
        // SAFETY: only reachable through `install`, which checked that the CPU has AVX2.
        total = total.wrapping_add(unsafe { row_u16(rr, dr) });
    }
    total
}

/// The sum of the four `u64` lanes.
#[inline]
#[target_feature(enable = "avx2")]
fn sum_u64x4(v: __m256i) -> u64 {
    let s = _mm_add_epi64(_mm256_castsi256_si128(v), _mm256_extracti128_si256::<1>(v));
    (_mm_cvtsi128_si64(s) as u64).wrapping_add(_mm_extract_epi64::<1>(s) as u64)
}

/// Steps of 32 samples whose `u32` lane sums stay exact: each step adds at most
/// `4 * 255^2 = 260100` to a lane, and `16384 * 260100 < 2^32`.
const U8_STEPS_PER_FLUSH: usize = 16384;

/// One 8-bit row: `|a - b|` by saturating subtractions, zero-extended to 16 bits, squared and
/// paired by `_mm256_madd_epi16` (at most `2 * 255^2`, positive in `i32`).
#[target_feature(enable = "avx2")]
fn row_u8(r: &[u8], d: &[u8]) -> u64 {
    let n = r.len().min(d.len());
    let (r, d) = (&r[..n], &d[..n]);
    let zero = _mm256_setzero_si256();
    let mut wide = zero;
    let mut rc = r.chunks_exact(32);
    let mut dc = d.chunks_exact(32);
    loop {
        let mut acc = zero;
        let mut steps = 0;
        for (a, b) in (&mut rc).zip(&mut dc) {
            // SAFETY: `a` and `b` are 32-byte chunks; the loads are unaligned.
            let (a, b) = unsafe {
                (
                    _mm256_loadu_si256(a.as_ptr().cast()),
                    _mm256_loadu_si256(b.as_ptr().cast()),
                )
            };
            let e = _mm256_or_si256(_mm256_subs_epu8(a, b), _mm256_subs_epu8(b, a));
            let lo = _mm256_unpacklo_epi8(e, zero);
            let hi = _mm256_unpackhi_epi8(e, zero);
            acc = _mm256_add_epi32(acc, _mm256_madd_epi16(lo, lo));
            acc = _mm256_add_epi32(acc, _mm256_madd_epi16(hi, hi));
            steps += 1;
            if steps == U8_STEPS_PER_FLUSH {
                break;
            }
        }
        // The lanes are unsigned 32-bit sums: zero-extend them to 64 bits.
        wide = _mm256_add_epi64(wide, _mm256_unpacklo_epi32(acc, zero));
        wide = _mm256_add_epi64(wide, _mm256_unpackhi_epi32(acc, zero));
        if steps < U8_STEPS_PER_FLUSH {
            break;
        }
    }
    sum_u64x4(wide).wrapping_add(scalar::row(rc.remainder(), dc.remainder()))
}

/// One 16-bit row: `|a - b|` as `max - min` in 16 bits, zero-extended to 32, squared into 64-bit
/// lanes (`_mm256_mul_epu32` on the even and the odd lanes; a square can take all 32 bits).
#[target_feature(enable = "avx2")]
fn row_u16(r: &[u16], d: &[u16]) -> u64 {
    let n = r.len().min(d.len());
    let (r, d) = (&r[..n], &d[..n]);
    let zero = _mm256_setzero_si256();
    let mut acc = zero;
    let mut rc = r.chunks_exact(16);
    let mut dc = d.chunks_exact(16);
    for (a, b) in (&mut rc).zip(&mut dc) {
        // SAFETY: `a` and `b` are chunks of 16 `u16` (32 bytes); the loads are unaligned.
        let (a, b) = unsafe {
            (
                _mm256_loadu_si256(a.as_ptr().cast()),
                _mm256_loadu_si256(b.as_ptr().cast()),
            )
        };
        let e = _mm256_sub_epi16(_mm256_max_epu16(a, b), _mm256_min_epu16(a, b));
        for v in [
            _mm256_unpacklo_epi16(e, zero),
            _mm256_unpackhi_epi16(e, zero),
        ] {
            acc = _mm256_add_epi64(acc, _mm256_mul_epu32(v, v));
            let odd = _mm256_srli_epi64::<32>(v);
            acc = _mm256_add_epi64(acc, _mm256_mul_epu32(odd, odd));
        }
    }
    sum_u64x4(acc).wrapping_add(scalar::row(rc.remainder(), dc.remainder()))
}
