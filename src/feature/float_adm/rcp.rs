//! This CPU's RCPSS as a table, for the CUDA kernels of float ADM: the decoupling divides with
//! RCPSS ([`super::scalar::divs`]), whose bits are the CPU model's, so the GPU cannot compute
//! them itself; it looks them up in this table, measured on the host at run time.
//!
//! The model: for a normal input `(-1)^s 1.m 2^e`, RCPSS gives `(-1)^s T[m >> 11] 2^-e` where
//! `T[i]` is RCPSS of `1.(i << 11)` (the 12 leading mantissa bits decide the result, AMD Zen 4
//! and, per Intel's documented tiny-result bound, Intel too); a result below the normal range is
//! flushed to a signed zero; zero and subnormal inputs give a signed infinity, infinity a signed
//! zero and NaN its quiet NaN. [`RcpModel::measure`] checks the model against the instruction on
//! a sample of inputs and gives `None` when it does not hold, and the CUDA plan then leaves
//! float_adm on the CPU. The tests check it for every mantissa at the edge exponents and for
//! every float (ignored: slow).

use super::x86_64::rcpss;
use std::sync::OnceLock;

/// Entries of the table: one per value of the 12 leading mantissa bits.
pub const ENTRIES: usize = 1 << 12;
/// Mantissa bits below the table index.
const LOW_BITS: u32 = 23 - 12;

/// The measured table (see the module doc).
#[derive(Debug)]
pub struct RcpModel {
    /// `T[i]`: the bits of RCPSS of `1.(i << 11)`.
    pub table: [u32; ENTRIES],
}

impl RcpModel {
    /// Measures the table on this CPU and checks the model on a sample of inputs; `None` if the
    /// CPU's RCPSS does not follow it.
    pub fn measure() -> Option<RcpModel> {
        let mut table = [0u32; ENTRIES];
        for (i, t) in table.iter_mut().enumerate() {
            *t = rcpss(f32::from_bits(0x3f80_0000 | ((i as u32) << LOW_BITS))).to_bits();
        }
        let m = RcpModel { table };
        let lows = [0u32, 1, 0x400, 0x5a5, 0x7ff];
        let exps = [0u32, 1, 2, 64, 126, 127, 128, 200, 252, 253, 254, 255];
        for i in 0..ENTRIES as u32 {
            for low in lows {
                for e in exps {
                    for s in [0, 0x8000_0000u32] {
                        let x = s | (e << 23) | (i << LOW_BITS) | low;
                        if m.rcp_bits(x) != rcpss(f32::from_bits(x)).to_bits() {
                            return None;
                        }
                    }
                }
            }
        }
        Some(m)
    }

    /// The model's RCPSS of the float with bits `x` (what the kernel computes).
    pub fn rcp_bits(&self, x: u32) -> u32 {
        let s = x & 0x8000_0000;
        let e = (x >> 23) & 0xff;
        let m = x & 0x7f_ffff;
        match e {
            0 => s | 0x7f80_0000,
            255 if m != 0 => x | 0x40_0000,
            255 => s,
            _ => {
                let t = self.table[(m >> LOW_BITS) as usize];
                let te = ((t >> 23) & 0xff) as i32 - (e as i32 - 127);
                if te <= 0 {
                    s
                } else {
                    s | ((te as u32) << 23) | (t & 0x7f_ffff)
                }
            }
        }
    }

    /// [`super::scalar::divs`] with the model's reciprocal (the kernel's division).
    pub fn divs(&self, n: f32, d: f32) -> f32 {
        let xi = f32::from_bits(self.rcp_bits(d.to_bits()));
        n * (xi + xi * (1.0 - d * xi))
    }
}

/// This CPU's table, measured once per process; `None` if its RCPSS does not follow the model.
pub fn model() -> Option<&'static RcpModel> {
    static MODEL: OnceLock<Option<RcpModel>> = OnceLock::new();
    MODEL.get_or_init(RcpModel::measure).as_ref()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(m: &RcpModel, x: u32) {
        let want = rcpss(f32::from_bits(x)).to_bits();
        assert_eq!(m.rcp_bits(x), want, "RCPSS of {x:#010x}");
    }

    /// Every mantissa at the exponents where the model has edges (and a few between).
    #[test]
    fn model_matches_rcpss_for_every_mantissa() {
        let m = model().expect("this CPU's RCPSS follows the table model");
        for e in [
            0u32, 1, 2, 3, 100, 126, 127, 128, 200, 251, 252, 253, 254, 255,
        ] {
            for s in [0, 0x8000_0000u32] {
                for mant in 0..1u32 << 23 {
                    check(m, s | (e << 23) | mant);
                }
            }
        }
    }

    /// Every float (4 billion; about a minute).
    #[test]
    #[ignore]
    fn model_matches_rcpss_for_every_float() {
        let m = model().expect("this CPU's RCPSS follows the table model");
        for x in 0..=u32::MAX {
            check(m, x);
        }
    }

    /// The kernel's division equals the CPU's `divs` over the values the decoupling divides:
    /// DWT coefficients (plus 1e-30) from tiny to large, both signs.
    #[test]
    fn model_divs_equals_divs() {
        let m = model().expect("this CPU's RCPSS follows the table model");
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let eps = 1e-30f64 as f32;
        for _ in 0..4_000_000 {
            let r = next();
            let n =
                f32::from_bits((r as u32 & 0x807f_ffff) | (((r >> 32) as u32 % 60 + 100) << 23));
            let d = f32::from_bits(
                ((r >> 40) as u32 & 0x807f_ffff) | (((r >> 33) as u32 % 60 + 100) << 23),
            ) + eps;
            assert_eq!(
                m.divs(n, d).to_bits(),
                super::super::scalar::divs(n, d).to_bits(),
                "{n} / {d}"
            );
            assert_eq!(
                m.divs(n, eps).to_bits(),
                super::super::scalar::divs(n, eps).to_bits()
            );
        }
    }
}
