//! AVX2 peers of the [`scalar`] IQA kernels, equal to them bit for bit. Each vector lane is one
//! output pixel, computed with the scalar kernel's operations in the scalar order: `f32`
//! products (`_mm256_mul_ps`, never fused with the add), widened to `f64` and added tap by tap
//! in the kernel's order, rounded to `f32` at the end; the SSIM terms with the scalar's mix of
//! `f32` and `f64` operations, IEEE-exact `sqrt` and divisions. The sums over the SSIM map keep
//! their pixel order (one `f64` lane per sum, one pixel after the other). Pixels a full vector
//! does not cover (row ends, mirrored borders) go through the scalar code itself.
//!
//! The kernels are `#[target_feature(enable = "avx2")]` functions reached only through
//! [`install`], which checks that the CPU has AVX2; that check is what every `unsafe` call of
//! them relies on.

use core::arch::x86_64::*;

use super::scalar::{self, Constants, GAUSSIAN};
use super::{Kernels, WINDOW};

/// Replaces the entries of `k` that have an AVX2 kernel, if this CPU has AVX2.
pub(super) fn install(k: &mut Kernels) {
    if !is_x86_feature_detected!("avx2") {
        return;
    }
    k.decimate_row = decimate_row;
    k.convolve_rows = convolve_rows;
    k.convolve_cols = convolve_cols;
    k.squares = squares;
    k.ssim_sums = ssim_sums;
}

// ---------------------------------------------------------------------------------------------
// Safe entry points (only installed after the AVX2 check)
// ---------------------------------------------------------------------------------------------

#[allow(clippy::too_many_arguments)]
fn decimate_row(
    src: &[f32],
    w: usize,
    h: usize,
    factor: usize,
    k: &[f32],
    kw: usize,
    y: usize,
    out: &mut [f32],
) {
    // SAFETY: only reachable through `install`, which checked that the CPU has AVX2.
    unsafe { decimate_row_avx2(src, w, h, factor, k, kw, y, out) }
}

fn convolve_rows(img: &[f32], w: usize, h: usize, cache: &mut [f32]) {
    // SAFETY: only reachable through `install`, which checked that the CPU has AVX2.
    unsafe { convolve_rows_avx2(img, w, h, cache) }
}

fn convolve_cols(cache: &[f32], w: usize, h: usize, dst: &mut [f32]) {
    // SAFETY: only reachable through `install`, which checked that the CPU has AVX2.
    unsafe { convolve_cols_avx2(cache, w, h, dst) }
}

fn squares(r: &[f32], d: &[f32], rr: &mut [f32], dd: &mut [f32], rd: &mut [f32]) {
    // SAFETY: only reachable through `install`, which checked that the CPU has AVX2.
    unsafe { squares_avx2(r, d, rr, dd, rd) }
}

fn ssim_sums(mu_r: &[f32], mu_d: &[f32], rr: &[f32], dd: &[f32], rd: &[f32]) -> [f64; 4] {
    // SAFETY: only reachable through `install`, which checked that the CPU has AVX2.
    unsafe { ssim_sums_avx2(mu_r, mu_d, rr, dd, rd) }
}

// ---------------------------------------------------------------------------------------------
// Loads, stores and the widened sums
// ---------------------------------------------------------------------------------------------

/// 8 `f32`.
///
/// # Safety
/// `p` must be valid for reading 8 `f32`.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn load8(p: *const f32) -> __m256 {
    // SAFETY: the caller guarantees 32 readable bytes; the load is unaligned.
    unsafe { _mm256_loadu_ps(p) }
}

/// The first 8 `f32` of `s` (bounds-checked: used where the loop does not prove the length).
#[inline]
#[target_feature(enable = "avx2")]
fn load8_at(s: &[f32]) -> __m256 {
    let s = &s[..8];
    // SAFETY: `s` holds 8 `f32` (32 bytes); the load is unaligned.
    unsafe { load8(s.as_ptr()) }
}

/// Stores 8 `f32` to the start of `d` (bounds-checked: used once per output vector).
#[inline]
#[target_feature(enable = "avx2")]
fn store8(d: &mut [f32], v: __m256) {
    let d = &mut d[..8];
    // SAFETY: `d` holds 8 `f32` (32 bytes); the store is unaligned.
    unsafe { _mm256_storeu_ps(d.as_mut_ptr(), v) }
}

/// Lanes 0-3 and 4-7 of `v` widened to `f64`.
#[inline]
#[target_feature(enable = "avx2")]
fn widen(v: __m256) -> [__m256d; 2] {
    [
        _mm256_cvtps_pd(_mm256_castps256_ps128(v)),
        _mm256_cvtps_pd(_mm256_extractf128_ps::<1>(v)),
    ]
}

/// Two `f64` halves rounded to 8 `f32` (round to nearest, as Rust's `as f32`).
#[inline]
#[target_feature(enable = "avx2")]
fn narrow(v: [__m256d; 2]) -> __m256 {
    _mm256_set_m128(_mm256_cvtpd_ps(v[1]), _mm256_cvtpd_ps(v[0]))
}

/// `acc += p as f64` lane by lane: one tap of a filter sum.
#[inline]
#[target_feature(enable = "avx2")]
fn add_widened(acc: &mut [__m256d; 2], p: __m256) {
    let [lo, hi] = widen(p);
    acc[0] = _mm256_add_pd(acc[0], lo);
    acc[1] = _mm256_add_pd(acc[1], hi);
}

// ---------------------------------------------------------------------------------------------
// Gaussian convolution
// ---------------------------------------------------------------------------------------------

/// The horizontal pass, 8 output columns per step: tap `k` of the 8 windows is one unaligned
/// load at `x + k`.
#[target_feature(enable = "avx2")]
fn convolve_rows_avx2(img: &[f32], w: usize, h: usize, cache: &mut [f32]) {
    assert!(w >= WINDOW && img.len() >= w * h && cache.len() >= w * h);
    let c = WINDOW / 2;
    let dw = w + 1 - WINDOW;
    let g: [__m256; WINDOW] = std::array::from_fn(|k| _mm256_set1_ps(GAUSSIAN[k]));
    for y in 0..h {
        let row = &img[y * w..(y + 1) * w];
        let out = &mut cache[y * w + c..y * w + c + dw];
        let mut x = 0;
        while x + 8 <= dw {
            let mut acc = [_mm256_setzero_pd(); 2];
            for (k, gk) in g.iter().enumerate() {
                // SAFETY: x + 8 <= dw and k < WINDOW, so x + k + 8 <= dw + WINDOW - 1 = w, the
                // length of `row`.
                let p = unsafe { load8(row.as_ptr().add(x + k)) };
                add_widened(&mut acc, _mm256_mul_ps(p, *gk));
            }
            store8(&mut out[x..], narrow(acc));
            x += 8;
        }
        for (x, o) in out.iter_mut().enumerate().skip(x) {
            *o = scalar::gaussian_dot(row[x..x + WINDOW].iter());
        }
    }
}

/// The vertical pass, 8 output columns per step: tap `v` is one unaligned load from row `y + v`.
#[target_feature(enable = "avx2")]
fn convolve_cols_avx2(cache: &[f32], w: usize, h: usize, dst: &mut [f32]) {
    assert!(w >= WINDOW && h >= WINDOW && cache.len() >= w * h);
    let c = WINDOW / 2;
    let (dw, dh) = (w + 1 - WINDOW, h + 1 - WINDOW);
    let g: [__m256; WINDOW] = std::array::from_fn(|k| _mm256_set1_ps(GAUSSIAN[k]));
    for y in 0..dh {
        let out = &mut dst[y * dw..(y + 1) * dw];
        let at = y * w + c;
        let mut x = 0;
        while x + 8 <= dw {
            let mut acc = [_mm256_setzero_pd(); 2];
            for (v, gv) in g.iter().enumerate() {
                // SAFETY: the last lane read is (y + v) * w + c + x + 7 <= (y + WINDOW - 1) * w
                // + c + dw - 1 = (y + WINDOW - 1) * w + w - c - 1 < (dh + WINDOW - 1) * w = h * w,
                // within `cache`.
                let p = unsafe { load8(cache.as_ptr().add(at + v * w + x)) };
                add_widened(&mut acc, _mm256_mul_ps(p, *gv));
            }
            store8(&mut out[x..], narrow(acc));
            x += 8;
        }
        for (x, o) in out.iter_mut().enumerate().skip(x) {
            *o = scalar::convolve_col_pixel(cache, w, x, y);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Decimation
// ---------------------------------------------------------------------------------------------

/// Largest kernel side taken here (libvmaf's are 2 to 10 wide); wider ones run the scalar row.
const MAX_KW: usize = 16;

/// How many outputs from 0 have their window (and `extra` columns after it) inside the row:
/// `x * factor - c + kw - 1 + extra <= w - 1`.
fn inside(w: usize, c: usize, kw: usize, factor: usize, extra: usize) -> usize {
    match (w + c).checked_sub(kw + extra) {
        Some(room) => room / factor + 1,
        None => 0,
    }
}

/// Lanes 0, 2, …, 14 of the 16 `f32` at `p`: one tap of 8 outputs decimated by two.
///
/// # Safety
/// `p` must be valid for reading 16 `f32`.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn even_lanes(p: *const f32) -> __m256 {
    // SAFETY: the caller guarantees 16 readable `f32`.
    let (a, b) = unsafe { (load8(p), load8(p.add(8))) };
    // a0 a2 b0 b2 | a4 a6 b4 b6, then the 64-bit pairs put in order: a0 a2 a4 a6 b0 b2 b4 b6.
    let e = _mm256_shuffle_ps::<0b10_00_10_00>(a, b);
    _mm256_castpd_ps(_mm256_permute4x64_pd::<0b11_01_10_00>(_mm256_castps_pd(e)))
}

/// The 4 taps of a 4-wide window row for 8 outputs decimated by four, from the 32 `f32` at `p`
/// (output `j`'s taps are `p[4 j..4 j + 4]`): a 4x8 transpose whose lanes hold the outputs in
/// the order 0, 2, 4, 6, 1, 3, 5, 7 ([`UNSHUFFLE_BY4`] puts them back).
///
/// # Safety
/// `p` must be valid for reading 32 `f32`.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn taps_by4(p: *const f32) -> [__m256; 4] {
    // SAFETY: the caller guarantees 32 readable `f32`.
    let (a, b, c, d) = unsafe {
        (
            load8(p),
            load8(p.add(8)),
            load8(p.add(16)),
            load8(p.add(24)),
        )
    };
    let t0 = _mm256_castps_pd(_mm256_unpacklo_ps(a, b)); // a0 b0 a1 b1 | a4 b4 a5 b5
    let t1 = _mm256_castps_pd(_mm256_unpackhi_ps(a, b)); // a2 b2 a3 b3 | a6 b6 a7 b7
    let t2 = _mm256_castps_pd(_mm256_unpacklo_ps(c, d)); // c0 d0 c1 d1 | c4 d4 c5 d5
    let t3 = _mm256_castps_pd(_mm256_unpackhi_ps(c, d)); // c2 d2 c3 d3 | c6 d6 c7 d7
    [
        _mm256_castpd_ps(_mm256_unpacklo_pd(t0, t2)), // a0 b0 c0 d0 | a4 b4 c4 d4: tap 0
        _mm256_castpd_ps(_mm256_unpackhi_pd(t0, t2)), // tap 1
        _mm256_castpd_ps(_mm256_unpacklo_pd(t1, t3)), // tap 2
        _mm256_castpd_ps(_mm256_unpackhi_pd(t1, t3)), // tap 3
    ]
}

/// The lane permutation that undoes [`taps_by4`]'s output order.
const UNSHUFFLE_BY4: [i32; 8] = [0, 4, 1, 5, 2, 6, 3, 7];

/// One decimated row, 8 outputs per step where the kernel lies inside the image horizontally,
/// the window's rows mirrored as the scalar's: by two, each tap the even lanes of two loads; a
/// 4x4 window by four, one 4x8 transpose per window row; any other factor, a gather of stride
/// `factor` per tap. Outputs whose window crosses the left or right border go through
/// [`scalar::filter_pixel`].
#[allow(clippy::too_many_arguments)]
#[target_feature(enable = "avx2")]
fn decimate_row_avx2(
    src: &[f32],
    w: usize,
    h: usize,
    factor: usize,
    k: &[f32],
    kw: usize,
    y: usize,
    out: &mut [f32],
) {
    let c = kw / 2;
    if kw == 0 || kw > MAX_KW || factor == 0 || factor > (i32::MAX / 8) as usize {
        return scalar::decimate_row(src, w, h, factor, k, kw, y, out);
    }
    assert!(src.len() >= w * h && k.len() >= kw * kw);
    let taps: Vec<__m256> = k[..kw * kw].iter().map(|&t| _mm256_set1_ps(t)).collect();
    // Rows of the window, mirrored as the scalar `filter_pixel` does, as offsets into `src`.
    let mut rows = [0usize; MAX_KW];
    for (v, r) in rows[..kw].iter_mut().enumerate() {
        *r = scalar::mirror((y * factor + v) as isize - c as isize, h) * w;
    }
    let rows = &rows[..kw];
    // Outputs `lo..hi` have their window inside the row (`x * factor >= c`).
    let lo = c.div_ceil(factor).min(out.len());
    let hi = inside(w, c, kw, factor, 0).clamp(lo, out.len());
    let cy = y * factor;
    for (x, o) in out[..lo].iter_mut().enumerate() {
        *o = scalar::filter_pixel(src, w, h, x * factor, cy, k, kw);
    }
    let mut x = lo;
    if factor == 2 {
        // `even_lanes` reads one column past the last tap: keep a column inside.
        let hi = inside(w, c, kw, 2, 1).clamp(lo, hi);
        while x + 8 <= hi {
            let mut acc = [_mm256_setzero_pd(); 2];
            for (&row, tv) in rows.iter().zip(taps.chunks_exact(kw)) {
                let base = row + 2 * x - c;
                for (u, t) in tv.iter().enumerate() {
                    // SAFETY: the last `f32` read is base + u + 15 <= row + 2 (x + 7) - c +
                    // kw <= row + w - 1 (x + 7 < hi, with its extra column), within `src`
                    // (row <= (h - 1) * w).
                    let p = unsafe { even_lanes(src.as_ptr().add(base + u)) };
                    add_widened(&mut acc, _mm256_mul_ps(p, *t));
                }
            }
            store8(&mut out[x..], narrow(acc));
            x += 8;
        }
    } else if factor == 4 && kw == 4 {
        // SAFETY: reads 32 bytes from an array of 8 `i32`.
        let unshuffle = unsafe { _mm256_loadu_si256(UNSHUFFLE_BY4.as_ptr().cast()) };
        while x + 8 <= hi {
            let mut acc = [_mm256_setzero_pd(); 2];
            for (&row, tv) in rows.iter().zip(taps.chunks_exact(4)) {
                // SAFETY: the 32 `f32` from row + 4 x - 2 end at row + 4 (x + 7) + 1, the last
                // tap of output x + 7 < hi, so at most row + w - 1, within `src`.
                let p = unsafe { taps_by4(src.as_ptr().add(row + 4 * x - c)) };
                for (p, t) in p.into_iter().zip(tv) {
                    add_widened(&mut acc, _mm256_mul_ps(p, *t));
                }
            }
            let v = _mm256_permutevar8x32_ps(narrow(acc), unshuffle);
            store8(&mut out[x..], v);
            x += 8;
        }
    }
    let f = factor as i32;
    let stride = _mm256_setr_epi32(0, f, 2 * f, 3 * f, 4 * f, 5 * f, 6 * f, 7 * f);
    while x + 8 <= hi {
        let mut acc = [_mm256_setzero_pd(); 2];
        for (&row, tv) in rows.iter().zip(taps.chunks_exact(kw)) {
            let base = row + x * factor - c;
            for (u, t) in tv.iter().enumerate() {
                // SAFETY: lane j reads base + u + j * factor; the largest, j = 7 and u = kw - 1,
                // is row + (x + 7) * factor - c + kw - 1 <= row + w - 1 (x + 7 < hi), within
                // `src` (row <= (h - 1) * w).
                let p = unsafe { _mm256_i32gather_ps::<4>(src.as_ptr().add(base + u), stride) };
                add_widened(&mut acc, _mm256_mul_ps(p, *t));
            }
        }
        store8(&mut out[x..], narrow(acc));
        x += 8;
    }
    for (x, o) in out.iter_mut().enumerate().skip(x) {
        *o = scalar::filter_pixel(src, w, h, x * factor, cy, k, kw);
    }
}

// ---------------------------------------------------------------------------------------------
// SSIM map
// ---------------------------------------------------------------------------------------------

/// The second-moment maps, 8 pixels per step.
#[target_feature(enable = "avx2")]
fn squares_avx2(r: &[f32], d: &[f32], rr: &mut [f32], dd: &mut [f32], rd: &mut [f32]) {
    let n = r.len();
    let (d, rr, dd, rd) = (&d[..n], &mut rr[..n], &mut dd[..n], &mut rd[..n]);
    let mut i = 0;
    while i + 8 <= n {
        let (a, b) = (load8_at(&r[i..]), load8_at(&d[i..]));
        store8(&mut rr[i..], _mm256_mul_ps(a, a));
        store8(&mut dd[i..], _mm256_mul_ps(b, b));
        store8(&mut rd[i..], _mm256_mul_ps(a, b));
        i += 8;
    }
    scalar::squares(&r[i..], &d[i..], &mut rr[i..], &mut dd[i..], &mut rd[i..]);
}

/// `MAX(0.0, x)` as libvmaf's: 0 where `0 > x` (an ordered comparison: NaN stays NaN).
#[inline]
#[target_feature(enable = "avx2")]
fn floor0(x: __m256) -> __m256 {
    _mm256_andnot_ps(_mm256_cmp_ps::<_CMP_GT_OQ>(_mm256_setzero_ps(), x), x)
}

/// The map's terms for 8 pixels, then their sums in pixel order: the four sums sit in the four
/// lanes of one `f64` vector, and each pixel's `(l c s, l, c, s)` (a 4x4 transpose of the term
/// vectors) is added to it in turn.
#[target_feature(enable = "avx2")]
fn ssim_sums_avx2(mu_r: &[f32], mu_d: &[f32], rr: &[f32], dd: &[f32], rd: &[f32]) -> [f64; 4] {
    let n = mu_r.len();
    let (mu_d, rr, dd, rd) = (&mu_d[..n], &rr[..n], &dd[..n], &rd[..n]);
    let k = Constants::new();
    let (c1, c2, c3) = (
        _mm256_set1_ps(k.c1),
        _mm256_set1_ps(k.c2),
        _mm256_set1_ps(k.c3),
    );
    let (c1d, c2d) = (_mm256_set1_pd(k.c1 as f64), _mm256_set1_pd(k.c2 as f64));
    let two = _mm256_set1_pd(2.0);
    let zero = _mm256_setzero_ps();
    let mut sums = _mm256_setzero_pd();
    let mut i = 0;
    while i + 8 <= n {
        let mr = load8_at(&mu_r[i..]);
        let md = load8_at(&mu_d[i..]);
        let (mr2, md2) = (_mm256_mul_ps(mr, mr), _mm256_mul_ps(md, md));
        let srr = floor0(_mm256_sub_ps(load8_at(&rr[i..]), mr2));
        let sdd = floor0(_mm256_sub_ps(load8_at(&dd[i..]), md2));
        let srd = _mm256_sub_ps(load8_at(&rd[i..]), _mm256_mul_ps(mr, md));
        let [p0, p1] = widen(_mm256_mul_ps(srr, sdd));
        let sigma = narrow([_mm256_sqrt_pd(p0), _mm256_sqrt_pd(p1)]);
        let lum_den = widen(_mm256_add_ps(_mm256_add_ps(mr2, md2), c1));
        let con_den = widen(_mm256_add_ps(_mm256_add_ps(srr, sdd), c2));
        let flat = _mm256_and_ps(
            _mm256_cmp_ps::<_CMP_LT_OQ>(srd, zero),
            _mm256_cmp_ps::<_CMP_LE_OQ>(sigma, zero),
        );
        let srd = _mm256_andnot_ps(flat, srd);
        let st = widen(_mm256_div_ps(
            _mm256_add_ps(srd, c3),
            _mm256_add_ps(sigma, c3),
        ));
        let (mrd, mdd, sgd) = (widen(mr), widen(md), widen(sigma));
        for half in 0..2 {
            let lum = _mm256_div_pd(
                _mm256_add_pd(_mm256_mul_pd(_mm256_mul_pd(two, mrd[half]), mdd[half]), c1d),
                lum_den[half],
            );
            let con = _mm256_div_pd(
                _mm256_add_pd(_mm256_mul_pd(two, sgd[half]), c2d),
                con_den[half],
            );
            let s = st[half];
            let lcs = _mm256_mul_pd(_mm256_mul_pd(lum, con), s);
            // Transpose (lcs, lum, con, s) of 4 pixels into one vector per pixel.
            let a = _mm256_unpacklo_pd(lcs, lum); // lcs0 l0 | lcs2 l2
            let b = _mm256_unpackhi_pd(lcs, lum); // lcs1 l1 | lcs3 l3
            let cc = _mm256_unpacklo_pd(con, s); // c0 s0 | c2 s2
            let dd = _mm256_unpackhi_pd(con, s); // c1 s1 | c3 s3
            sums = _mm256_add_pd(sums, _mm256_permute2f128_pd::<0x20>(a, cc));
            sums = _mm256_add_pd(sums, _mm256_permute2f128_pd::<0x20>(b, dd));
            sums = _mm256_add_pd(sums, _mm256_permute2f128_pd::<0x31>(a, cc));
            sums = _mm256_add_pd(sums, _mm256_permute2f128_pd::<0x31>(b, dd));
        }
        i += 8;
    }
    let mut out = [0.0f64; 4];
    // SAFETY: `out` holds 4 `f64` (32 bytes); the store is unaligned.
    unsafe { _mm256_storeu_pd(out.as_mut_ptr(), sums) };
    for j in i..n {
        let t = scalar::ssim_terms(mu_r[j], mu_d[j], rr[j], dd[j], rd[j], k);
        scalar::add_terms(&mut out, t);
    }
    out
}
