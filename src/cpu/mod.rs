//! CPU feature level detection, ordered so SIMD kernels can be added as peers of the scalar ones.
//!
//! `VMAF_RS_CPU=scalar|avx2|avx2vnni|avx512|avx512vnni` may only lower the detected level
//! (never raise it), so a user can force the scalar specification kernels for comparison.

use std::sync::OnceLock;

/// Ordered CPU capability levels; a kernel table entry missing for a level falls back to the best
/// lower one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum CpuLevel {
    /// Portable Rust: the specification every other level must equal bit for bit.
    Scalar,
    /// x86-64 AVX2.
    Avx2,
    /// x86-64 AVX2 with AVX-VNNI (the VEX-encoded 256-bit `vpdpwssd`: Alder Lake and later
    /// clients, Sapphire Rapids and later servers, Zen 5): the AVX2 kernels compiled with it
    /// too (build.rs makes the copies), where the CPU has it. CPUs with AVX-512 may lack it
    /// (Ice Lake, Zen 4); their levels above still hold, the copies' `install` checks it.
    Avx2Vnni,
    /// x86-64 AVX-512 (F + BW).
    Avx512,
    /// x86-64 AVX-512 with VNNI: the AVX-512 kernels compiled with VNNI enabled too (each
    /// 16-bit `madd` and the add of its products fuse into one `vpdpwssd`; build.rs makes the
    /// copies), where the CPU has it.
    Avx512Vnni,
}

impl CpuLevel {
    /// Every level, lowest first.
    pub const ALL: [CpuLevel; 5] = [
        CpuLevel::Scalar,
        CpuLevel::Avx2,
        CpuLevel::Avx2Vnni,
        CpuLevel::Avx512,
        CpuLevel::Avx512Vnni,
    ];

    /// Parses a level name as accepted by `VMAF_RS_CPU`.
    pub fn parse(s: &str) -> Option<Self> {
        match s.to_ascii_lowercase().as_str() {
            "scalar" | "none" => Some(CpuLevel::Scalar),
            "avx2" => Some(CpuLevel::Avx2),
            "avx2vnni" => Some(CpuLevel::Avx2Vnni),
            "avx512" => Some(CpuLevel::Avx512),
            "avx512vnni" => Some(CpuLevel::Avx512Vnni),
            _ => None,
        }
    }

    /// The level's name as `VMAF_RS_CPU` takes it.
    pub fn name(self) -> &'static str {
        match self {
            CpuLevel::Scalar => "scalar",
            CpuLevel::Avx2 => "avx2",
            CpuLevel::Avx2Vnni => "avx2vnni",
            CpuLevel::Avx512 => "avx512",
            CpuLevel::Avx512Vnni => "avx512vnni",
        }
    }

    fn detect_hw() -> Self {
        #[cfg(target_arch = "x86_64")]
        {
            if is_x86_feature_detected!("avx512f") && is_x86_feature_detected!("avx512bw") {
                return if is_x86_feature_detected!("avx512vnni") {
                    CpuLevel::Avx512Vnni
                } else {
                    CpuLevel::Avx512
                };
            }
            if is_x86_feature_detected!("avx2") {
                return if is_x86_feature_detected!("avxvnni") {
                    CpuLevel::Avx2Vnni
                } else {
                    CpuLevel::Avx2
                };
            }
        }
        CpuLevel::Scalar
    }

    /// Whether this CPU runs the level's own kernels. Every level up to the detected one does
    /// but `Avx2Vnni`, which CPUs with AVX-512 may lack (Ice Lake, Zen 4).
    fn available(self) -> bool {
        match self {
            #[cfg(target_arch = "x86_64")]
            CpuLevel::Avx2Vnni => is_x86_feature_detected!("avxvnni"),
            _ => true,
        }
    }
}

/// The level in use: hardware capability, lowered by `VMAF_RS_CPU` if set (to the best level at
/// or below the request that this CPU runs). Detected once.
pub fn cpu_level() -> CpuLevel {
    static LEVEL: OnceLock<CpuLevel> = OnceLock::new();
    *LEVEL.get_or_init(|| {
        let hw = CpuLevel::detect_hw();
        let req = std::env::var("VMAF_RS_CPU")
            .ok()
            .and_then(|v| CpuLevel::parse(&v))
            .map_or(hw, |req| req.min(hw));
        CpuLevel::ALL
            .into_iter()
            .rev()
            .find(|&l| l <= req && l.available())
            .unwrap_or(CpuLevel::Scalar)
    })
}

/// Whether `VMAF_RS_CPU` lowered [`cpu_level`] below what this CPU runs.
pub fn cpu_level_lowered() -> bool {
    cpu_level() < CpuLevel::detect_hw()
}

/// The levels this process may run (every level up to [`cpu_level`] that this CPU runs), lowest
/// first: what SIMD tests sweep against the scalar kernels.
pub fn supported_levels() -> impl Iterator<Item = CpuLevel> {
    CpuLevel::ALL
        .into_iter()
        .filter(|&l| l <= cpu_level() && l.available())
}

/// The levels a SIMD sweep test compares with the scalar kernels: [`supported_levels`]. When
/// that is the scalar level alone (a host without AVX2, or `VMAF_RS_CPU=scalar`), the sweep has
/// nothing to compare and says so on stderr, once per `site` (e.g. the test's name).
pub fn sweep_levels(site: &'static str) -> impl Iterator<Item = CpuLevel> {
    if cpu_level() == CpuLevel::Scalar {
        static SAID: std::sync::Mutex<Vec<&'static str>> = std::sync::Mutex::new(Vec::new());
        let mut said = SAID.lock().unwrap_or_else(|e| e.into_inner());
        if !said.contains(&site) {
            said.push(site);
            eprintln!(
                "{site}: no SIMD level to sweep on this host (CPU level {:?}{}): only the \
                 scalar kernels ran",
                CpuLevel::detect_hw(),
                if std::env::var_os("VMAF_RS_CPU").is_some() {
                    ", lowered by VMAF_RS_CPU"
                } else {
                    ""
                }
            );
        }
    }
    supported_levels()
}

/// Asks the cache hierarchy for the lines of `s` ahead of their use (a hint: no effect on
/// results, none at all off x86-64).
#[inline]
pub fn prefetch<T>(s: &[T]) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let (p, n) = (s.as_ptr().cast::<i8>(), std::mem::size_of_val(s));
        for off in (0..n).step_by(64) {
            // SAFETY: a prefetch is a hint that never faults nor changes memory; `off < n`
            // keeps the address inside `s` anyway.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(p.add(off)) };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = s;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_are_ordered_and_parse() {
        assert!(CpuLevel::Scalar < CpuLevel::Avx2 && CpuLevel::Avx2 < CpuLevel::Avx2Vnni);
        assert!(CpuLevel::Avx2Vnni < CpuLevel::Avx512);
        assert!(CpuLevel::Avx512 < CpuLevel::Avx512Vnni);
        assert_eq!(CpuLevel::parse("avx512vnni"), Some(CpuLevel::Avx512Vnni));
        assert_eq!(CpuLevel::parse("AVX2"), Some(CpuLevel::Avx2));
        assert_eq!(CpuLevel::parse("avx2vnni"), Some(CpuLevel::Avx2Vnni));
        assert_eq!(CpuLevel::parse("bogus"), None);
        for l in CpuLevel::ALL {
            assert_eq!(CpuLevel::parse(l.name()), Some(l));
        }
        assert!(cpu_level() <= CpuLevel::detect_hw());
    }
}
