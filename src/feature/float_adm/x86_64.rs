//! The one x86-64 instruction float ADM needs as such: RCPSS.

use std::arch::x86_64::{_mm_cvtss_f32, _mm_rcp_ss, _mm_set_ss};

/// The CPU's RCPSS approximation of `1 / x` (what libvmaf's `_mm_rcp_ss` gives on this machine).
#[inline]
pub fn rcpss(x: f32) -> f32 {
    // SAFETY: SSE is part of the x86-64 baseline, so these intrinsics run on every x86-64 CPU;
    // they touch no memory.
    unsafe { _mm_cvtss_f32(_mm_rcp_ss(_mm_set_ss(x))) }
}
