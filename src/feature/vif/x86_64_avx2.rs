//! AVX2 peers of the [`scalar`] VIF kernels, equal to them bit for bit: the same integer widths,
//! wrapping and rounding, 8 columns per step (32-bit lanes; 64-bit sums as even/odd lane pairs),
//! the columns left over handled by the scalar `*_cols` kernels. Only the order of the integer
//! sums differs, which is exact.
//!
//! The kernels are `#[target_feature(enable = "avx2")]` functions reached only through
//! [`install`], which checks that the CPU has AVX2; that check is what every `unsafe` call of
//! them relies on.

use core::arch::x86_64::*;

use super::scalar::{self, StatLine, StatShifts, VifSums, WideAcc};
use super::tables::{EPS, FILTER_S0, LOG2_TABLE_LEN, PAD, SIGMA_NSQ};
use super::Kernels;

/// Replaces the entries of `k` that have an AVX2 kernel, if this CPU has AVX2.
pub(super) fn install(k: &mut Kernels) {
    if !is_x86_feature_detected!("avx2") {
        return;
    }
    k.stat_vertical_u8 = stat_vertical_u8;
    k.stat_vertical_u16 = stat_vertical_u16;
    k.stat_horizontal = stat_horizontal;
    k.subsample_vertical_u8 = subsample_vertical_u8;
    k.subsample_vertical_u16 = subsample_vertical_u16;
    k.subsample_horizontal = subsample_horizontal;
}

// ---------------------------------------------------------------------------------------------
// Safe entry points (only installed after the AVX2 check)
// ---------------------------------------------------------------------------------------------

fn stat_vertical_u8(r: &[&[u8]], d: &[&[u8]], w: usize, line: &mut StatLine) {
    // SAFETY: only reachable through `install`, which checked that the CPU has AVX2.
    unsafe { stat_vertical_u8_avx2(r, d, w, line) }
}

fn stat_vertical_u16(
    r: &[&[u16]],
    d: &[&[u16]],
    filt: &[u16],
    sh: StatShifts,
    w: usize,
    line: &mut StatLine,
    acc: &mut WideAcc,
) {
    // SAFETY: only reachable through `install`, which checked that the CPU has AVX2.
    unsafe { stat_vertical_u16_avx2(r, d, filt, sh, w, line, acc) }
}

fn stat_horizontal(
    line: &StatLine,
    filt: &[u16],
    w: usize,
    gain_limit: f64,
    log2: &[u16; LOG2_TABLE_LEN],
    acc: &mut WideAcc,
    sums: &mut VifSums,
) {
    // SAFETY: only reachable through `install`, which checked that the CPU has AVX2.
    unsafe { stat_horizontal_avx2(line, filt, w, gain_limit, log2, acc, sums) }
}

#[allow(clippy::too_many_arguments)]
fn subsample_vertical_u8(
    r: &[&[u8]],
    d: &[&[u8]],
    filt: &[u16],
    round: u32,
    shift: u32,
    w: usize,
    out_r: &mut [u32],
    out_d: &mut [u32],
) {
    // SAFETY: only reachable through `install`, which checked that the CPU has AVX2.
    unsafe { subsample_vertical_u8_avx2(r, d, filt, round, shift, w, out_r, out_d) }
}

#[allow(clippy::too_many_arguments)]
fn subsample_vertical_u16(
    r: &[&[u16]],
    d: &[&[u16]],
    filt: &[u16],
    round: u32,
    shift: u32,
    w: usize,
    out_r: &mut [u32],
    out_d: &mut [u32],
) {
    // SAFETY: only reachable through `install`, which checked that the CPU has AVX2.
    unsafe { subsample_vertical_u16_avx2(r, d, filt, round, shift, w, out_r, out_d) }
}

fn subsample_horizontal(
    lr: &[u32],
    ld: &[u32],
    filt: &[u16],
    w: usize,
    out_r: &mut [u16],
    out_d: &mut [u16],
) {
    // SAFETY: only reachable through `install`, which checked that the CPU has AVX2.
    unsafe { subsample_horizontal_avx2(lr, ld, filt, w, out_r, out_d) }
}

// ---------------------------------------------------------------------------------------------
// Loads and stores: the only raw-pointer accesses. The kernels check their slices' lengths once
// up front and then address them by pointer, keeping bounds checks out of the inner loops.
// ---------------------------------------------------------------------------------------------

/// 8 `u8` widened to `u32` lanes.
///
/// # Safety
/// `p` must be valid for reading 8 `u8`.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn load_u8x8(p: *const u8) -> __m256i {
    // SAFETY: the caller guarantees 8 readable bytes; the load is unaligned.
    _mm256_cvtepu8_epi32(unsafe { _mm_loadl_epi64(p.cast()) })
}

/// 8 `u16` widened to `u32` lanes.
///
/// # Safety
/// `p` must be valid for reading 8 `u16`.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn load_u16x8(p: *const u16) -> __m256i {
    // SAFETY: the caller guarantees 16 readable bytes; the load is unaligned.
    _mm256_cvtepu16_epi32(unsafe { _mm_loadu_si128(p.cast()) })
}

/// 8 `u32`.
///
/// # Safety
/// `p` must be valid for reading 8 `u32`.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn load_u32x8(p: *const u32) -> __m256i {
    // SAFETY: the caller guarantees 32 readable bytes; the load is unaligned.
    unsafe { _mm256_loadu_si256(p.cast()) }
}

/// Stores 8 `u32` to the start of `d` (bounds-checked: used once per output vector).
#[inline]
#[target_feature(enable = "avx2")]
fn store_u32x8(d: &mut [u32], v: __m256i) {
    let d = &mut d[..8];
    // SAFETY: `d` holds 8 `u32` (32 bytes); the store is unaligned.
    unsafe { _mm256_storeu_si256(d.as_mut_ptr().cast(), v) }
}

/// Stores 8 `u16` to the start of `d` (bounds-checked: used once per output vector).
#[inline]
#[target_feature(enable = "avx2")]
fn store_u16x8(d: &mut [u16], v: __m128i) {
    let d = &mut d[..8];
    // SAFETY: `d` holds 8 `u16` (16 bytes); the store is unaligned.
    unsafe { _mm_storeu_si128(d.as_mut_ptr().cast(), v) }
}

/// Interleaves the low 32 bits of the 64-bit lanes of `even` (lanes 0, 2, 4, 6) and `odd`
/// (lanes 1, 3, 5, 7) back into 8 `u32` lanes.
#[inline]
#[target_feature(enable = "avx2")]
fn merge_even_odd(even: __m256i, odd: __m256i) -> __m256i {
    _mm256_blend_epi32::<0b1010_1010>(even, _mm256_slli_epi64::<32>(odd))
}

/// Even/odd 64-bit products `a * b` of the `u32` lanes: `(lanes 0,2,4,6, lanes 1,3,5,7)`.
#[inline]
#[target_feature(enable = "avx2")]
fn mul_wide(a: __m256i, b: __m256i) -> (__m256i, __m256i) {
    (
        _mm256_mul_epu32(a, b),
        _mm256_mul_epu32(_mm256_srli_epi64::<32>(a), _mm256_srli_epi64::<32>(b)),
    )
}

/// Adds a pair of even/odd 64-bit products to a pair of accumulators.
#[inline]
#[target_feature(enable = "avx2")]
fn add_wide(acc: &mut (__m256i, __m256i), p: (__m256i, __m256i)) {
    acc.0 = _mm256_add_epi64(acc.0, p.0);
    acc.1 = _mm256_add_epi64(acc.1, p.1);
}

// ---------------------------------------------------------------------------------------------
// Statistic
// ---------------------------------------------------------------------------------------------

#[target_feature(enable = "avx2")]
fn stat_vertical_u8_avx2(r: &[&[u8]], d: &[&[u8]], w: usize, line: &mut StatLine) {
    assert!(r.len() == FILTER_S0.len() && d.len() == FILTER_S0.len());
    assert!(r.iter().chain(d).all(|row| row.len() >= w));
    let w8 = w / 8 * 8;
    let round = _mm256_set1_epi32(128);
    for j in (0..w8).step_by(8) {
        let z = _mm256_setzero_si256();
        let (mut mu1, mut mu2, mut xx, mut yy, mut xy) = (z, z, z, z, z);
        for ((&f, r), d) in FILTER_S0.iter().zip(r).zip(d) {
            let f = _mm256_set1_epi32(f as i32);
            // SAFETY: j + 8 <= w8 <= w <= every row's length (checked above).
            let (x, y) = unsafe { (load_u8x8(r.as_ptr().add(j)), load_u8x8(d.as_ptr().add(j))) };
            let fx = _mm256_mullo_epi32(f, x);
            let fy = _mm256_mullo_epi32(f, y);
            mu1 = _mm256_add_epi32(mu1, fx);
            mu2 = _mm256_add_epi32(mu2, fy);
            xx = _mm256_add_epi32(xx, _mm256_mullo_epi32(fx, x));
            yy = _mm256_add_epi32(yy, _mm256_mullo_epi32(fy, y));
            xy = _mm256_add_epi32(xy, _mm256_mullo_epi32(fx, y));
        }
        let o = PAD + j;
        store_u32x8(
            &mut line.mu1[o..],
            _mm256_srli_epi32::<8>(_mm256_add_epi32(mu1, round)),
        );
        store_u32x8(
            &mut line.mu2[o..],
            _mm256_srli_epi32::<8>(_mm256_add_epi32(mu2, round)),
        );
        store_u32x8(&mut line.xx[o..], xx);
        store_u32x8(&mut line.yy[o..], yy);
        store_u32x8(&mut line.xy[o..], xy);
    }
    scalar::stat_vertical_u8_cols(r, d, w8..w, line);
}

#[target_feature(enable = "avx2")]
fn stat_vertical_u16_avx2(
    r: &[&[u16]],
    d: &[&[u16]],
    filt: &[u16],
    sh: StatShifts,
    w: usize,
    line: &mut StatLine,
    acc: &mut WideAcc,
) {
    assert!(r.len() == filt.len() && d.len() == filt.len());
    assert!(r.iter().chain(d).all(|row| row.len() >= w));
    let w8 = w / 8 * 8;
    let mu_round = _mm256_set1_epi32(sh.mu_round as i32);
    let mu_shift = _mm_cvtsi32_si128(sh.mu_shift as i32);
    let sq_round = _mm256_set1_epi64x(sh.sq_round as i64);
    let sq_shift = _mm_cvtsi32_si128(sh.sq_shift as i32);
    let low16 = _mm256_set1_epi32(0xffff);
    let mu = |v: __m256i| {
        _mm256_and_si256(
            _mm256_srl_epi32(_mm256_add_epi32(v, mu_round), mu_shift),
            low16,
        )
    };
    let sq = |(e, o): (__m256i, __m256i)| {
        merge_even_odd(
            _mm256_srl_epi64(_mm256_add_epi64(e, sq_round), sq_shift),
            _mm256_srl_epi64(_mm256_add_epi64(o, sq_round), sq_shift),
        )
    };
    for j in (0..w8).step_by(8) {
        let z = _mm256_setzero_si256();
        let (mut mu1, mut mu2) = (z, z);
        let (mut xx, mut yy, mut xy) = ((z, z), (z, z), (z, z));
        for ((&f, r), d) in filt.iter().zip(r).zip(d) {
            let f = _mm256_set1_epi32(f as i32);
            // SAFETY: j + 8 <= w8 <= w <= every row's length (checked above).
            let (x, y) = unsafe { (load_u16x8(r.as_ptr().add(j)), load_u16x8(d.as_ptr().add(j))) };
            // f * x < 2^32: the products are exact in 32 bits, as in the scalar kernel.
            let fx = _mm256_mullo_epi32(f, x);
            let fy = _mm256_mullo_epi32(f, y);
            mu1 = _mm256_add_epi32(mu1, fx);
            mu2 = _mm256_add_epi32(mu2, fy);
            add_wide(&mut xx, mul_wide(fx, x));
            add_wide(&mut yy, mul_wide(fy, y));
            add_wide(&mut xy, mul_wide(fx, y));
        }
        let o = PAD + j;
        store_u32x8(&mut line.mu1[o..], mu(mu1));
        store_u32x8(&mut line.mu2[o..], mu(mu2));
        store_u32x8(&mut line.xx[o..], sq(xx));
        store_u32x8(&mut line.yy[o..], sq(yy));
        store_u32x8(&mut line.xy[o..], sq(xy));
    }
    scalar::stat_vertical_u16_cols(r, d, filt, sh, w8..w, line, acc);
}

#[target_feature(enable = "avx2")]
fn stat_horizontal_avx2(
    line: &StatLine,
    filt: &[u16],
    w: usize,
    gain_limit: f64,
    log2: &[u16; LOG2_TABLE_LEN],
    acc: &mut WideAcc,
    sums: &mut VifSums,
) {
    let w8 = w / 8 * 8;
    let start = PAD - filt.len() / 2;
    // The vector loop reads `start + k + j .. + 8` for k < taps, j + 8 <= w8.
    let end = start + filt.len() - 1 + w8;
    let bufs = [&line.mu1, &line.mu2, &line.xx, &line.yy, &line.xy];
    assert!(filt.len() <= 2 * PAD + 1 && bufs.iter().all(|b| b.len() >= end));
    let [p_mu1, p_mu2, p_xx, p_yy, p_xy] = bufs.map(|b| b.as_ptr());
    let round32 = _mm256_set1_epi64x(1 << 31);
    let round16 = _mm256_set1_epi64x(1 << 15);
    let nsq = _mm256_set1_epi32(SIGMA_NSQ);
    let z = _mm256_setzero_si256();
    // Per-lane sums of the non-log terms (64-bit lanes).
    let mut non_log = z;
    let mut non_log_count = 0i64;
    // Per-lane sums of the log terms (64-bit lanes), and whether the vector log path is exact
    // for this gain limit (see `LogTerms`).
    let (mut den_log, mut num_log) = (z, z);
    let vector_log = (0.0..=LogTerms::MAX_GAIN_LIMIT).contains(&gain_limit);
    // `(a * b + 2^31) >> 32` of the u32 lanes.
    let rsh32 = |a: __m256i, b: __m256i| {
        let (e, o) = mul_wide(a, b);
        merge_even_odd(
            _mm256_srli_epi64::<32>(_mm256_add_epi64(e, round32)),
            _mm256_srli_epi64::<32>(_mm256_add_epi64(o, round32)),
        )
    };
    // `(acc + 2^15) >> 16` of 64-bit sums, kept to 32 bits.
    let rsh16 = |(e, o): (__m256i, __m256i)| {
        merge_even_odd(
            _mm256_srli_epi64::<16>(_mm256_add_epi64(e, round16)),
            _mm256_srli_epi64::<16>(_mm256_add_epi64(o, round16)),
        )
    };
    for j in (0..w8).step_by(8) {
        let (mut mu1, mut mu2) = (z, z);
        let (mut xx, mut yy, mut xy) = ((z, z), (z, z), (z, z));
        for (k, &f) in filt.iter().enumerate() {
            let at = start + k + j;
            let f = _mm256_set1_epi32(f as i32);
            // SAFETY: at + 8 <= end <= every buffer's length (checked above).
            let (m1, m2, vxx, vyy, vxy) = unsafe {
                (
                    load_u32x8(p_mu1.add(at)),
                    load_u32x8(p_mu2.add(at)),
                    load_u32x8(p_xx.add(at)),
                    load_u32x8(p_yy.add(at)),
                    load_u32x8(p_xy.add(at)),
                )
            };
            mu1 = _mm256_add_epi32(mu1, _mm256_mullo_epi32(f, m1));
            mu2 = _mm256_add_epi32(mu2, _mm256_mullo_epi32(f, m2));
            add_wide(&mut xx, mul_wide(vxx, f));
            add_wide(&mut yy, mul_wide(vyy, f));
            add_wide(&mut xy, mul_wide(vxy, f));
        }
        let sigma1_sq = _mm256_sub_epi32(rsh16(xx), rsh32(mu1, mu1));
        let sigma2_sq = _mm256_sub_epi32(rsh16(yy), rsh32(mu2, mu2));
        let sigma12 = _mm256_sub_epi32(rsh16(xy), rsh32(mu1, mu2));
        // Below the noise floor: add max(sigma2_sq, 0) and count (vif_term's linear branch).
        let lin = _mm256_cmpgt_epi32(nsq, sigma1_sq);
        let add = _mm256_and_si256(lin, _mm256_max_epi32(sigma2_sq, z));
        non_log = _mm256_add_epi64(
            non_log,
            _mm256_add_epi64(
                _mm256_cvtepi32_epi64(_mm256_castsi256_si128(add)),
                _mm256_cvtepi32_epi64(_mm256_extracti128_si256::<1>(add)),
            ),
        );
        let lin_mask = _mm256_movemask_ps(_mm256_castsi256_ps(lin)) as u32;
        non_log_count += lin_mask.count_ones() as i64;
        // The log branch: 4 lanes at a time in double, or lane by lane where the gain limit
        // is outside the range the vector conversion handles exactly.
        let log_lanes = !lin_mask & 0xff;
        if log_lanes != 0 {
            if vector_log {
                let t = LogTerms {
                    log2,
                    gain_limit: _mm256_set1_pd(gain_limit),
                };
                let log = _mm256_xor_si256(lin, _mm256_cmpeq_epi32(z, z));
                let s2 = _mm256_max_epi32(sigma2_sq, z);
                let cond = _mm256_and_si256(
                    log,
                    _mm256_and_si256(_mm256_cmpgt_epi32(sigma12, z), _mm256_cmpgt_epi32(s2, z)),
                );
                let half = |v: __m256i, hi: bool| {
                    if hi {
                        _mm256_extracti128_si256::<1>(v)
                    } else {
                        _mm256_castsi256_si128(v)
                    }
                };
                for hi in [false, true] {
                    let (d, n) = t.terms(
                        half(sigma1_sq, hi),
                        half(s2, hi),
                        half(sigma12, hi),
                        half(log, hi),
                        half(cond, hi),
                    );
                    den_log = _mm256_add_epi64(den_log, d);
                    num_log = _mm256_add_epi64(num_log, n);
                }
            } else {
                let (mut s1, mut s2, mut s12) = ([0u32; 8], [0u32; 8], [0u32; 8]);
                store_u32x8(&mut s1, sigma1_sq);
                store_u32x8(&mut s2, sigma2_sq);
                store_u32x8(&mut s12, sigma12);
                let mut log_lanes = log_lanes;
                while log_lanes != 0 {
                    let l = log_lanes.trailing_zeros() as usize;
                    log_lanes &= log_lanes - 1;
                    scalar::vif_term(
                        s1[l] as i32,
                        s2[l] as i32,
                        s12[l] as i32,
                        gain_limit,
                        log2,
                        sums,
                    );
                }
            }
        }
    }
    sums.den_log += sum_i64x4(den_log);
    sums.num_log += sum_i64x4(num_log);
    let mut lanes = [0u32; 8];
    store_u32x8(&mut lanes, non_log);
    let non_log_sum: i64 = (0..4)
        .map(|i| (lanes[2 * i] as u64 | (lanes[2 * i + 1] as u64) << 32) as i64)
        .sum();
    sums.num_non_log += non_log_sum;
    sums.den_non_log += non_log_count;
    scalar::stat_horizontal_cols(line, filt, w8..w, gain_limit, log2, acc, sums);
}

/// Sum of the four `i64` lanes.
#[inline]
#[target_feature(enable = "avx2")]
fn sum_i64x4(v: __m256i) -> i64 {
    let mut l = [0i64; 4];
    // SAFETY: `l` holds 4 `i64` (32 bytes); the store is unaligned.
    unsafe { _mm256_storeu_si256(l.as_mut_ptr().cast(), v) };
    l.iter().fold(0i64, |s, &x| s.wrapping_add(x))
}

/// The log branch of [`scalar::vif_term`] for 4 lanes, in the same `double` operations (division,
/// products and difference in the scalar's order, no fused multiply-add), the same truncations
/// and the same table look-ups.
struct LogTerms<'a> {
    log2: &'a [u16; LOG2_TABLE_LEN],
    gain_limit: __m256d,
}

impl LogTerms<'_> {
    /// Largest gain limit for which `g * g * sigma1_sq` (`sigma1_sq < 2^31`) stays below 2^52,
    /// where [`trunc_u52`] is exact; libvmaf's option allows at most 100.
    const MAX_GAIN_LIMIT: f64 = 1024.0;

    /// `(den_log, num_log)` terms of the 4 lanes as `i64` lanes, zero where the lane is not in
    /// the log branch (`log`) or has no numerator term (`cond`: log, `sigma12 > 0`,
    /// `sigma2_sq > 0`). `s2` is `max(sigma2_sq, 0)`.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn terms(
        &self,
        s1: __m128i,
        s2: __m128i,
        s12: __m128i,
        log: __m128i,
        cond: __m128i,
    ) -> (__m256i, __m256i) {
        let nsq = _mm_set1_epi32(SIGMA_NSQ);
        let (log64, cond64) = (_mm256_cvtepi32_epi64(log), _mm256_cvtepi32_epi64(cond));
        // Any value in the table's domain, for lanes whose results are discarded.
        let safe = _mm256_set1_epi64x(1 << 17);
        // den_log: log2_32((u32)(sigma_nsq + sigma1_sq)) - 2048 * 17.
        let den = _mm256_cvtepu32_epi64(_mm_add_epi32(s1, nsq));
        let den = _mm256_blendv_epi8(safe, den, log64);
        let den_t = _mm256_sub_epi64(self.log2_u52(den), _mm256_set1_epi64x(2048 * 17));
        // g = sigma12 / (sigma1_sq + eps); sv_sq = (int32)(sigma2_sq - g * sigma12), >= 0.
        let (s1d, s2d, s12d) = (
            _mm256_cvtepi32_pd(s1),
            _mm256_cvtepi32_pd(s2),
            _mm256_cvtepi32_pd(s12),
        );
        let g = _mm256_div_pd(s12d, _mm256_add_pd(s1d, _mm256_set1_pd(EPS)));
        let sv = _mm256_sub_pd(s2d, _mm256_mul_pd(g, s12d));
        // cvttpd gives INT32_MIN out of range, like the scalar's saturation (only downwards).
        let sv = _mm_max_epi32(_mm256_cvttpd_epi32(sv), _mm_setzero_si128());
        // g = g < limit ? g : limit (minpd returns its second operand unless first < second).
        let g = _mm256_min_pd(g, self.gain_limit);
        let numer1 = _mm256_cvtepu32_epi64(_mm_add_epi32(sv, nsq));
        let numer1_tmp =
            _mm256_add_epi64(trunc_u52(_mm256_mul_pd(_mm256_mul_pd(g, g), s1d)), numer1);
        let numer1 = _mm256_blendv_epi8(safe, numer1, cond64);
        let numer1_tmp = _mm256_blendv_epi8(safe, numer1_tmp, cond64);
        let num_t = _mm256_sub_epi64(self.log2_u52(numer1_tmp), self.log2_u52(numer1));
        (
            _mm256_and_si256(den_t, log64),
            _mm256_and_si256(num_t, cond64),
        )
    }

    /// libvmaf's `log2_32` / `log2_64` (which agree) of 4 `u64` lanes in `[2^15, 2^52)`:
    /// `table[v >> k] + 2048 * k` with `k = floor(log2(v)) - 15`, the floor taken from the
    /// exponent of the exact `double` of `v`.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn log2_u52(&self, v: __m256i) -> __m256i {
        let two52 = _mm256_set1_pd(4_503_599_627_370_496.0);
        let d = _mm256_sub_pd(
            _mm256_castsi256_pd(_mm256_or_si256(v, _mm256_castpd_si256(two52))),
            two52,
        );
        let k = _mm256_sub_epi64(
            _mm256_srli_epi64::<52>(_mm256_castpd_si256(d)),
            _mm256_set1_epi64x(1023 + 15),
        );
        // v >> k is in [2^15, 2^16): gather the 32 bits at entry idx - 1 and keep the high half
        // (entry idx), so every read stays inside the table.
        let idx = _mm256_sub_epi64(_mm256_srlv_epi64(v, k), _mm256_set1_epi64x(1));
        // SAFETY: 32767 <= idx <= 65534, so each 4-byte read at byte 2 * idx lies inside the
        // 65536-entry (131072-byte) table; gathers need no alignment.
        let pair = unsafe { _mm256_i64gather_epi32::<2>(self.log2.as_ptr().cast(), idx) };
        let entry = _mm256_cvtepu32_epi64(_mm_srli_epi32::<16>(pair));
        _mm256_add_epi64(entry, _mm256_slli_epi64::<11>(k))
    }
}

/// `(i64)x` for 4 lanes with `0 <= x < 2^52` (truncation toward zero, exact).
#[inline]
#[target_feature(enable = "avx2")]
fn trunc_u52(x: __m256d) -> __m256i {
    let two52 = _mm256_set1_pd(4_503_599_627_370_496.0);
    let t = _mm256_round_pd::<{ _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC }>(x);
    _mm256_sub_epi64(
        _mm256_castpd_si256(_mm256_add_pd(t, two52)),
        _mm256_castpd_si256(two52),
    )
}

// ---------------------------------------------------------------------------------------------
// Downsampling
// ---------------------------------------------------------------------------------------------

/// The vertical downsampling pass, generic over the row loader.
macro_rules! subsample_vertical_avx2 {
    ($name:ident, $t:ty, $load:ident) => {
        #[allow(clippy::too_many_arguments)]
        #[target_feature(enable = "avx2")]
        fn $name(
            r: &[&[$t]],
            d: &[&[$t]],
            filt: &[u16],
            round: u32,
            shift: u32,
            w: usize,
            out_r: &mut [u32],
            out_d: &mut [u32],
        ) {
            assert!(r.len() == filt.len() && d.len() == filt.len());
            assert!(r.iter().chain(d).all(|row| row.len() >= w));
            let w8 = w / 8 * 8;
            let rnd = _mm256_set1_epi32(round as i32);
            let sh = _mm_cvtsi32_si128(shift as i32);
            let low16 = _mm256_set1_epi32(0xffff);
            let fin = |v: __m256i| {
                _mm256_and_si256(_mm256_srl_epi32(_mm256_add_epi32(v, rnd), sh), low16)
            };
            for j in (0..w8).step_by(8) {
                let (mut ar, mut ad) = (_mm256_setzero_si256(), _mm256_setzero_si256());
                for ((&f, r), d) in filt.iter().zip(r).zip(d) {
                    let f = _mm256_set1_epi32(f as i32);
                    // SAFETY: j + 8 <= w8 <= w <= every row's length (checked above).
                    let (x, y) = unsafe { ($load(r.as_ptr().add(j)), $load(d.as_ptr().add(j))) };
                    ar = _mm256_add_epi32(ar, _mm256_mullo_epi32(f, x));
                    ad = _mm256_add_epi32(ad, _mm256_mullo_epi32(f, y));
                }
                store_u32x8(&mut out_r[PAD + j..], fin(ar));
                store_u32x8(&mut out_d[PAD + j..], fin(ad));
            }
            scalar::subsample_vertical_cols(r, d, filt, round, shift, w8..w, out_r, out_d);
        }
    };
}

subsample_vertical_avx2!(subsample_vertical_u8_avx2, u8, load_u8x8);
subsample_vertical_avx2!(subsample_vertical_u16_avx2, u16, load_u16x8);

/// The even-indexed elements of `p[0..16]`: `p[0], p[2], …, p[14]`.
///
/// # Safety
/// `p` must be valid for reading 16 `u32`.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn load_even_u32x8(p: *const u32) -> __m256i {
    // SAFETY: the caller guarantees 16 readable `u32`.
    let (a, b) = unsafe { (load_u32x8(p), load_u32x8(p.add(8))) };
    let (a, b) = (_mm256_castsi256_ps(a), _mm256_castsi256_ps(b));
    // Per 128-bit half: a0 a2 b0 b2 | a4 a6 b4 b6; then reorder the 64-bit pairs.
    let ev = _mm256_castps_si256(_mm256_shuffle_ps::<0b10_00_10_00>(a, b));
    _mm256_permute4x64_epi64::<0b11_01_10_00>(ev)
}

#[target_feature(enable = "avx2")]
fn subsample_horizontal_avx2(
    lr: &[u32],
    ld: &[u32],
    filt: &[u16],
    w: usize,
    out_r: &mut [u16],
    out_d: &mut [u16],
) {
    let taps = filt.len();
    let start = PAD - taps / 2;
    let half = w / 2;
    // The last output a vector step covers reads up to `start + 2 * m + taps - 1 + 16`, which
    // stays inside the padded line only while `2 * m + 16 <= w`.
    let n8 = half / 8 * 8;
    let end = start + 2 * n8 + taps - 1;
    assert!(taps <= 2 * PAD + 1 && lr.len() >= end && ld.len() >= end);
    let round = _mm256_set1_epi32(32768);
    let fin = |v: __m256i| {
        let v = _mm256_srli_epi32::<16>(_mm256_add_epi32(v, round));
        _mm_packus_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256::<1>(v))
    };
    for m in (0..n8).step_by(8) {
        let (mut ar, mut ad) = (_mm256_setzero_si256(), _mm256_setzero_si256());
        for (k, &f) in filt.iter().enumerate() {
            let at = start + 2 * m + k;
            let f = _mm256_set1_epi32(f as i32);
            // SAFETY: at + 16 <= end <= both lines' lengths (checked above).
            let (x, y) = unsafe {
                (
                    load_even_u32x8(lr.as_ptr().add(at)),
                    load_even_u32x8(ld.as_ptr().add(at)),
                )
            };
            ar = _mm256_add_epi32(ar, _mm256_mullo_epi32(f, x));
            ad = _mm256_add_epi32(ad, _mm256_mullo_epi32(f, y));
        }
        store_u16x8(&mut out_r[m..], fin(ar));
        store_u16x8(&mut out_d[m..], fin(ad));
    }
    scalar::subsample_horizontal_cols(lr, ld, filt, n8..half, out_r, out_d);
}
