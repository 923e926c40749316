//! Scalar ADM kernels: the specification every SIMD/GPU peer must reproduce bit for bit.
//!
//! Each kernel mirrors one stage of libvmaf's integer ADM (`integer_adm.c`) with the same integer
//! widths, rounding constants, shifts and float/double conversion points, one stage per file:
//!
//! * [`dwt2_s0`] / [`dwt2_s0_lo`] (`dwt_s0.rs`): scale-0 DWT of 8–16 bit samples into `i16`
//!   bands;
//! * [`dwt2_s123`] (`dwt_s123.rs`): scale-1..3 DWT of the previous approximation band into `i32`
//!   bands;
//! * [`decouple_s0`] / [`decouple_s123`] (`decouple.rs`): restored (`r`) and additive (`a`)
//!   signal split;
//! * [`csf_s0`] / [`csf_s123`] (`csf.rs`): contrast-sensitivity weighting of the masker, kept
//!   as the masking threshold's two band sums (its 1/30 filter values and 1/15 centre values),
//!   and [`csf_den_s0`] / [`csf_den_s123`], the denominator's integer reduction;
//! * [`cm_s0`] / [`cm_s123`] (`cm.rs`): contrast masking and the numerator's integer reduction;
//! * `pool.rs`: the regions, the data-dependent shifts and the float pooling of both reductions
//!   ([`csf_den_pool_s0`] / [`csf_den_pool_s123`], [`cm_pool_s0`] / [`cm_pool_s123`]).
//!
//! Bands are plain row-major slices sharing one `stride`; `h`, `v`, `d` triples are passed in that
//! order (libvmaf's `theta` 0, 1, 2). Where C relies on implementation-defined or x86-specific
//! behaviour (narrowing casts, float-to-unsigned conversion of out-of-range values, shift counts),
//! the code reproduces what GCC emits on x86-64. Where libvmaf's x86 AVX2 or AVX-512 kernels give
//! other values than `integer_adm.c` (the last column of the scale-0 DWT at some widths, see
//! [`dwt2_s0`]), every variant is specified and a [`LibvmafIsa`](crate::fidelity::LibvmafIsa)
//! picks one.
//!
//! The `*_with` forms take the row kernels a SIMD level may replace as arguments; the ADM
//! kernel table (`adm::Kernels`) passes its entries through them.

mod cm;
mod csf;
mod decouple;
mod dwt_s0;
mod dwt_s123;
mod pool;

pub use cm::*;
pub use csf::*;
pub use decouple::*;
pub use dwt_s0::*;
pub use dwt_s123::*;
pub use pool::*;

/// Columns per call of a DWT's vertical row kernel in [`vertical_prefetched`] (a multiple of
/// every level's vector step, so that only a row's last chunk has a partial vector).
const VERTICAL_CHUNK: usize = 256;

/// Output row `i` of a DWT's vertical pass: `pass` over its input rows `ind_y[i]` of `(src,
/// stride, w)` into `tmp`, in column chunks, each after asking the caches for the same columns
/// of the two input rows output row `i + 1` adds. The pass is column by column, so the chunks give
/// the same values. The DWT's input (the picture at scale 0, the previous approximation band
/// after it) is read once, with little arithmetic per sample, so without the hint its loads
/// wait on memory; a whole row's hints at once would queue behind each other.
pub fn vertical_prefetched<S, T>(
    (src, stride, w): (&[S], usize, usize),
    ind_y: &[[usize; 4]],
    i: usize,
    (tmp_lo, tmp_hi): (&mut [T], &mut [T]),
    mut pass: impl FnMut([&[S]; 4], &mut [T], &mut [T]),
) {
    let rows = ind_y[i].map(|r| &src[r * stride..r * stride + w]);
    let next = ind_y
        .get(i + 1)
        .map(|n| [n[2], n[3]].map(|r| &src[r * stride..r * stride + w]));
    for c in (0..w).step_by(VERTICAL_CHUNK) {
        let e = (c + VERTICAL_CHUNK).min(w);
        for r in next.iter().flatten() {
            crate::cpu::prefetch(&r[c..e]);
        }
        pass(rows.map(|r| &r[c..e]), &mut tmp_lo[c..e], &mut tmp_hi[c..e]);
    }
}

/// A half-open band rectangle `[top, bottom) x [left, right)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Region {
    /// First row.
    pub top: usize,
    /// One past the last row.
    pub bottom: usize,
    /// First column.
    pub left: usize,
    /// One past the last column.
    pub right: usize,
}

impl Region {
    /// Number of samples inside.
    pub fn area(&self) -> usize {
        (self.bottom - self.top) * (self.right - self.left)
    }
}

/// The four mutable bands one DWT level writes.
#[derive(Debug)]
pub struct QuadMut<'a, T> {
    /// Approximation (low-pass V + low-pass H).
    pub a: &'a mut [T],
    /// High-pass V + low-pass H.
    pub h: &'a mut [T],
    /// Low-pass V + high-pass H.
    pub v: &'a mut [T],
    /// High-pass V + high-pass H.
    pub d: &'a mut [T],
}

// ---------------------------------------------------------------------------------------------
// C conversion semantics (GCC, x86-64)
// ---------------------------------------------------------------------------------------------

/// C `(int32_t)` of a double: truncation; NaN or out of range gives `INT32_MIN` (`cvttsd2si`).
#[inline]
pub fn c_f64_to_i32(x: f64) -> i32 {
    if x > -2_147_483_649.0 && x < 2_147_483_648.0 {
        x as i32
    } else {
        i32::MIN
    }
}

/// C `(uint32_t)` of a double as GCC emits it on x86-64: a 64-bit truncating conversion whose
/// low 32 bits are kept; NaN or out of `i64` range gives 0.
#[inline]
pub fn c_f64_to_u32(x: f64) -> u32 {
    if x > -9_223_372_036_854_775_809.0 && x < 9_223_372_036_854_775_808.0 {
        (x as i64) as u32
    } else {
        0
    }
}

/// C `(uint16_t)` / `(int16_t)` of a double: a 32-bit truncating conversion, low 16 bits kept.
#[inline]
pub fn c_f64_to_u16(x: f64) -> u16 {
    c_f64_to_i32(x) as u16
}

/// `(uint32_t)ceil(log2(n))` as libvmaf computes its data-dependent shift counts.
#[inline]
pub fn ceil_log2_u32(n: f64) -> u32 {
    c_f64_to_u32(n.log2().ceil())
}

/// `(uint32_t)pow(2, shift - 1)` with C's unsigned wrap when `shift` is 0 (then the result is 0).
#[inline]
pub fn half_pow2_u32(shift: u32) -> u32 {
    c_f64_to_u32(2f64.powf(shift.wrapping_sub(1) as f64))
}
