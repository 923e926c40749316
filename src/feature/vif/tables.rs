//! Constants of libvmaf's integer VIF: the per-scale Gaussian taps, the neural-noise variance, the
//! epsilon of the gain division and the fixed-point `log2` look-up table.

use std::sync::OnceLock;

/// Number of scales VIF is computed at.
pub const SCALES: usize = 4;

/// Scale-0 taps (Q16, sum 65536); libvmaf `vif_filter1d_table[0]` (integer_vif.h).
pub const FILTER_S0: [u16; 17] = [
    489, 935, 1640, 2640, 3896, 5274, 6547, 7455, 7784, 7455, 6547, 5274, 3896, 2640, 1640, 935,
    489,
];
/// Scale-1 taps (Q16, sum 65536); libvmaf `vif_filter1d_table[1]` (integer_vif.h).
pub const FILTER_S1: [u16; 9] = [1244, 3663, 7925, 12590, 14692, 12590, 7925, 3663, 1244];
/// Scale-2 taps (Q16, sum 65536); libvmaf `vif_filter1d_table[2]` (integer_vif.h).
pub const FILTER_S2: [u16; 5] = [3571, 16004, 26386, 16004, 3571];
/// Scale-3 taps (Q16, sum 65536); libvmaf `vif_filter1d_table[3]` (integer_vif.h).
pub const FILTER_S3: [u16; 3] = [10904, 43728, 10904];

/// The taps of each scale, indexed by scale; widths 17, 9, 5, 3 as libvmaf's
/// `vif_filter1d_width`. Scale `s` uses `FILTERS[s]` for its statistic, and the downsampling into
/// scale `s` uses `FILTERS[s]` too.
pub static FILTERS: [&[u16]; SCALES] = [&FILTER_S0, &FILTER_S1, &FILTER_S2, &FILTER_S3];

/// Widest half filter width (scale 0: 17 / 2): the mirror padding the line buffers carry per side.
pub const PAD: usize = 8;

/// Most taps of any filter (scale 0).
pub const MAX_TAPS: usize = 17;

/// Neural-noise variance 2.0 in Q16; libvmaf `sigma_nsq = 65536 << 1` (integer_vif.c).
pub const SIGMA_NSQ: i32 = 65536 << 1;

/// Epsilon added to `sigma1_sq` before the gain division; libvmaf `65536 * 1.0e-10`
/// (integer_vif.c).
pub const EPS: f64 = 65536.0 * 1.0e-10;

/// Default (and maximum) enhancement gain limit; libvmaf `DEFAULT_VIF_ENHN_GAIN_LIMIT`
/// (integer_vif.h).
pub const DEFAULT_ENHN_GAIN_LIMIT: f64 = 100.0;

/// Entries of the log2 table that are ever read (`log2_32`/`log2_64` normalise to 16 bits).
pub const LOG2_TABLE_LEN: usize = 65536;

/// libvmaf's `log2_table` (integer_vif.c `log_generate`): entry `i` for `32767 <= i < 65536` is
/// `round(log2f(i) * 2048)` (half away from zero), all other entries are 0. Computed once per
/// process.
pub fn log2_table() -> &'static [u16; LOG2_TABLE_LEN] {
    static TABLE: OnceLock<Box<[u16; LOG2_TABLE_LEN]>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut t = Box::new([0u16; LOG2_TABLE_LEN]);
        for (i, e) in t.iter_mut().enumerate().skip(32767) {
            *e = log2_entry(i as u32);
        }
        t
    })
}

/// Length of [`log2_compact`]: one entry per 8 indices of `[2^15, 2^16)` and a leading pad.
pub const LOG2_COMPACT_LEN: usize = 1 + (1 << 15) / 8;

/// Smallest entry of [`log2_table`] at `[2^15, 2^16)` (`log2(2^15) * 2048`), the base of
/// [`log2_compact`]'s offsets.
pub const LOG2_COMPACT_BASE: u16 = 15 * 2048;

/// [`log2_table`]'s entries at `[2^15, 2^16)` (the only ones `log2_32`/`log2_64` read) in 8 KiB
/// instead of 64, so a SIMD kernel's gathers stay in the L1 cache. The entries grow by less than
/// 0.1 per index (`2048 / (i ln 2)`), so each aligned run of 8 (`8t .. 8t + 8`) has one value
/// `b` or two, `b` then `b + 1` from position `s`: entry `1 + t - 2^12` holds
/// `(s << 12) | (b - LOG2_COMPACT_BASE)` (`s = 8` when the run is flat); entry 0 is a pad (0) so a
/// 32-bit gather at `t - 2^12` reads in bounds and finds the run in its high half. A unit test
/// checks every index against the table.
pub fn log2_compact() -> &'static [u16; LOG2_COMPACT_LEN] {
    static TABLE: OnceLock<Box<[u16; LOG2_COMPACT_LEN]>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let full = log2_table();
        let mut t = Box::new([0u16; LOG2_COMPACT_LEN]);
        for (run, e) in t.iter_mut().skip(1).enumerate() {
            let at = (1 << 15) + 8 * run;
            let b = full[at];
            let s = (1..8).find(|&r| full[at + r] != b).unwrap_or(8);
            *e = (s << 12) as u16 | (b - LOG2_COMPACT_BASE);
        }
        t
    })
}

/// Segments of the AVX-512 kernels' arithmetic `log2` ([`log2_fast_consts`]): the top five
/// bits below the leading one of an index in `[2^15, 2^16)`.
pub const LOG2_FAST_SEGMENTS: usize = 32;

/// The SIMD kernels' arithmetic `log2` (the table entry `round(y)`, `y = 2048 * log2(i) -
/// 15 * 2048` of an index `i` in `[2^15, 2^16)`): where `y` lies within `BELOW` units of 2^-12
/// below a half-integer, or `ABOVE` units above one, the index is left to the table. 2^-12 is
/// the resolution of the kernels' sums (see [`log2_fast_consts`]). Below a tie the guard also
/// covers the table's own quirk: its `log2f` rounded to `f32` (steps of 2^-9 in `y`) lifts
/// values up to 2^-10 below a tie onto it, which then rounds up. The exhaustive unit tests
/// `fast_log2_every_index` (one per SIMD level) check every index the arithmetic keeps, and fix
/// the guards: with `BELOW` at 4 and `ABOVE` at 0 every other index already holds its entry at
/// both segmentations; `ABOVE` at 1 keeps one unit of room.
pub const LOG2_FAST_GUARD_BELOW_UNITS: u32 = 4;
/// See [`LOG2_FAST_GUARD_BELOW_UNITS`].
pub const LOG2_FAST_GUARD_ABOVE_UNITS: u32 = 1;

/// What the SIMD kernels' arithmetic `log2` adds to each entry: the `f32` bit pattern of 2048
/// shifted right by 12 (see [`log2_fast_consts`]); the terms fold it into their constants.
pub const LOG2_FAST_BIAS: i32 = (2048f32.to_bits() >> 12) as i32;

/// Coefficients of `2048 * log2(1 + r)` for `0 <= r < 1/32` (the AVX-512 kernels' segments),
/// highest degree first, a cubic with no constant term: a least-squares fit on Chebyshev nodes
/// reweighted toward the minimax one (error below 8e-6 of a unit with the coefficients in `f32`;
/// a unit test checks it). A cubic is enough on segments this short, one multiply-add fewer than
/// the degree-4 Taylor series; the exhaustive test of the AVX-512 kernels
/// (`fast_log2_every_index`) checks every index the arithmetic keeps.
pub const LOG2_FAST_POLY3: [f32; 3] = [942.0829, -1476.5547, 2954.6355];

/// Per segment `j` of [`LOG2_FAST_SEGMENTS`] (32 segments of 2^10 indices), in `f32`:
/// `inv = 1 / (2^15 + 2^10 j)`, and `base = 2048 * log2(1 + j / 32) + 2048 + 1/2` plus
/// [`LOG2_FAST_GUARD_BELOW_UNITS`] units of 2^-12. An index `i` of segment `j` has
/// `y = L[j] + 2048 * log2(1 + r)` with `r = i * inv - 1`, which the SIMD kernels evaluate in
/// `f32` instead of reading the table, except near a rounding boundary. Their last multiply-add
/// adds the base, so the sum `z` lies in `[2048, 4096)`, where an `f32` has 12 fraction bits:
/// its bit pattern is `0x4500_0000 + round(2^12 (z - 2048))`, which shifted right by 12 is the
/// entry (rounded half up, with the guard) plus [`LOG2_FAST_BIAS`], and whose low 12 bits say how
/// near a tie `y` lies (below the sum of the guards: near). (`z` reaches 4096 only above the
/// last tie, where the shift still gives the entry and the low bits flag it.)
pub fn log2_fast_consts() -> &'static ([f32; LOG2_FAST_SEGMENTS], [f32; LOG2_FAST_SEGMENTS]) {
    static CONSTS: OnceLock<([f32; LOG2_FAST_SEGMENTS], [f32; LOG2_FAST_SEGMENTS])> =
        OnceLock::new();
    CONSTS.get_or_init(segment_consts)
}

/// `(inv, base)` of `N` segments of `2^15 / N` indices each (see [`log2_fast_consts`]).
fn segment_consts<const N: usize>() -> ([f32; N], [f32; N]) {
    let width = (1u32 << 15) / N as u32;
    let shift = 2048.5 + LOG2_FAST_GUARD_BELOW_UNITS as f64 / 4096.0;
    let base = |j: usize| 2048.0 * (1.0 + j as f64 / N as f64).log2() + shift;
    (
        std::array::from_fn(|j| (1.0 / ((1u32 << 15) + j as u32 * width) as f64) as f32),
        std::array::from_fn(|j| base(j) as f32),
    )
}

/// Segments of the AVX2 kernels' arithmetic `log2` ([`log2_fast8_consts`]): the top three bits
/// below the leading one, so that each constant table fits one 8-lane register (one `vpermps`
/// picks an entry, where the 32-segment tables would need four and three blends).
pub const LOG2_FAST8_SEGMENTS: usize = 8;

/// Coefficients of `2048 * log2(1 + r)` for `0 <= r < 1/8`, highest degree first, degree 4 with
/// no constant term: a least-squares fit on Chebyshev nodes reweighted toward the minimax one
/// (error below 4e-5 of a unit with the coefficients in `f32`; a unit test checks it). The
/// exhaustive test of the AVX2 kernels (`fast_log2_every_index`) checks every index the
/// arithmetic keeps.
pub const LOG2_FAST8_POLY: [f32; 4] = [-585.50507, 969.7107, -1476.7119, 2954.6318];

/// [`log2_fast_consts`] for the eight segments of 2^12 indices of [`LOG2_FAST8_SEGMENTS`].
pub fn log2_fast8_consts() -> &'static ([f32; LOG2_FAST8_SEGMENTS], [f32; LOG2_FAST8_SEGMENTS]) {
    static CONSTS: OnceLock<([f32; LOG2_FAST8_SEGMENTS], [f32; LOG2_FAST8_SEGMENTS])> =
        OnceLock::new();
    CONSTS.get_or_init(segment_consts)
}

/// One table entry: `(uint16_t)round(log2f((float)i) * 2048)`.
///
/// `log2f` is taken as the correctly rounded single-precision `log2` (the double result rounded
/// to `f32`), which is what glibc's `log2f` returns for every `i` in the table's range (checked by
/// a unit test against the platform `f32::log2`). The product with 2048 is exact in `f32`.
pub fn log2_entry(i: u32) -> u16 {
    let l = (i as f64).log2() as f32;
    ((l * 2048.0) as f64).round() as u16
}

/// libvmaf `log2_32`: `log2(temp) * 2048` from the table, normalising `temp` to 16 significant
/// bits. `temp` must be at least `1 << 15` (VIF only calls it with values of at least `1 << 18`).
#[inline]
pub fn log2_32(table: &[u16; LOG2_TABLE_LEN], temp: u32) -> i32 {
    let k = 16 - temp.leading_zeros() as i32;
    debug_assert!(k >= 0, "log2_32 input {temp} below 2^15");
    table[(temp >> k) as usize] as i32 + 2048 * k
}

/// libvmaf `log2_64`: as [`log2_32`] for 64-bit inputs of at least `0x20000`.
#[inline]
pub fn log2_64(table: &[u16; LOG2_TABLE_LEN], temp: u64) -> i32 {
    let k = 48 - temp.leading_zeros() as i32;
    debug_assert!(k >= 0, "log2_64 input {temp} below 2^15");
    table[(temp >> k) as usize] as i32 + 2048 * k
}

#[cfg(test)]
mod fast8_tests {
    use super::*;

    /// [`LOG2_FAST_POLY3`] is the fit its comment says: within 8e-6 of `2048 * log2(1 + r)` over
    /// a 32-segment's range of `r` (in exact arithmetic).
    #[test]
    fn poly3_fits_log2() {
        let mut worst = 0f64;
        for k in 0..=100_000 {
            let r = k as f64 / 100_000.0 * 1023.0 / 32768.0;
            let p = LOG2_FAST_POLY3
                .iter()
                .fold(0f64, |acc, &c| acc * r + c as f64)
                * r;
            worst = worst.max((p - 2048.0 * (1.0 + r).log2()).abs());
        }
        assert!(worst < 8e-6, "fit error {worst}");
    }

    /// [`LOG2_FAST8_POLY`] is the fit its comment says: within 4e-5 of `2048 * log2(1 + r)` over
    /// a segment (in exact arithmetic), so only the `f32` rounding the exhaustive test covers is
    /// left.
    #[test]
    fn fast8_poly_fits_log2() {
        let mut worst = 0f64;
        for k in 0..=100_000 {
            let r = k as f64 / 100_000.0 / 8.0;
            let p = LOG2_FAST8_POLY
                .iter()
                .fold(0f64, |acc, &c| acc * r + c as f64)
                * r;
            worst = worst.max((p - 2048.0 * (1.0 + r).log2()).abs());
        }
        assert!(worst < 4e-5, "fit error {worst}");
    }
}
