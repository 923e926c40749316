//! Host fidelity: which of libvmaf's host-dependent result variants to reproduce.
//!
//! libvmaf picks its kernels at run time from the CPU it runs on (C, AVX2 or AVX-512 on x86), and
//! a few of those kernels do not agree with its C code (`docs/FIDELITY.md` lists every known
//! case). vmaf_rs computes every variant on every host and every backend; a
//! [`LibvmafIsaMode`] (option `libvmaf_isa`) says which, and `auto` resolves — once, when an
//! engine is configured — to the kernels libvmaf itself would take on this host. Resolution never depends on vmaf_rs's
//! own kernel level (`VMAF_RS_CPU`), only on what libvmaf's dispatch would see.
#![forbid(unsafe_code)]

use crate::error::{Error, Result};
use std::fmt;
use std::str::FromStr;

/// The requested libvmaf kernel family (`libvmaf_isa=auto|c|avx2|avx512`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum LibvmafIsaMode {
    /// The kernels libvmaf takes on the host this runs on ([`libvmaf_host`]).
    #[default]
    Auto,
    /// A fixed family, on any host.
    Fixed(LibvmafIsa),
}

/// A libvmaf kernel family whose results vmaf_rs reproduces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum LibvmafIsa {
    /// libvmaf's C code (hosts without AVX2, and non-x86 hosts for every known difference).
    C,
    /// libvmaf's x86 AVX2 kernels (AVX2 hosts without AVX-512).
    Avx2,
    /// libvmaf's x86 AVX-512 kernels (AVX-512 F/CD/DQ/BW/VL hosts).
    Avx512,
}

impl LibvmafIsa {
    /// Every family, lowest first.
    pub const ALL: [LibvmafIsa; 3] = [LibvmafIsa::C, LibvmafIsa::Avx2, LibvmafIsa::Avx512];

    /// The option value naming this family.
    pub fn as_str(self) -> &'static str {
        match self {
            LibvmafIsa::C => "c",
            LibvmafIsa::Avx2 => "avx2",
            LibvmafIsa::Avx512 => "avx512",
        }
    }

    /// A short description of the hosts where libvmaf takes these kernels.
    pub fn hosts(self) -> &'static str {
        match self {
            LibvmafIsa::C => "no AVX2, or not x86",
            LibvmafIsa::Avx2 => "x86-64 with AVX2, no AVX-512",
            LibvmafIsa::Avx512 => "x86-64 with AVX-512 F/CD/DQ/BW/VL",
        }
    }
}

impl LibvmafIsaMode {
    /// The family this mode computes on this host.
    pub fn resolve(self) -> LibvmafIsa {
        match self {
            LibvmafIsaMode::Auto => libvmaf_host(),
            LibvmafIsaMode::Fixed(isa) => isa,
        }
    }

    /// The option value naming this mode.
    pub fn as_str(self) -> &'static str {
        match self {
            LibvmafIsaMode::Auto => "auto",
            LibvmafIsaMode::Fixed(isa) => isa.as_str(),
        }
    }
}

impl FromStr for LibvmafIsaMode {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        if s == "auto" {
            return Ok(LibvmafIsaMode::Auto);
        }
        LibvmafIsa::ALL
            .into_iter()
            .find(|m| m.as_str() == s)
            .map(LibvmafIsaMode::Fixed)
            .ok_or_else(|| {
                Error::InvalidOption(format!(
                    "libvmaf_isa='{s}': expected auto (what libvmaf computes on this host), c, \
                     avx2 or avx512 (libvmaf's C, AVX2 or AVX-512 kernels, on any host)"
                ))
            })
    }
}

impl fmt::Display for LibvmafIsaMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Display for LibvmafIsa {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The kernel family libvmaf's x86 CPU detection (`vmaf_get_cpu_flags_x86` in
/// `libvmaf/src/x86/cpu.c`) selects here, for a libvmaf built with AVX-512 support (its build's
/// default, and the oracle's). Its AVX2 flag needs AVX2, BMI1 and BMI2 with the OS saving YMM
/// state; its AVX-512 flag additionally needs AVX-512 F, CD, DQ, BW and VL with the OS saving
/// opmask and ZMM state. `is_x86_feature_detected!` includes those OS (XCR0) checks. On other
/// architectures no known result differs from the C code's. Detected once.
pub fn libvmaf_host() -> LibvmafIsa {
    static HOST: std::sync::OnceLock<LibvmafIsa> = std::sync::OnceLock::new();
    *HOST.get_or_init(detect)
}

#[cfg(target_arch = "x86_64")]
fn detect() -> LibvmafIsa {
    let avx2 = is_x86_feature_detected!("avx2")
        && is_x86_feature_detected!("bmi1")
        && is_x86_feature_detected!("bmi2");
    let avx512 = avx2
        && is_x86_feature_detected!("avx512f")
        && is_x86_feature_detected!("avx512cd")
        && is_x86_feature_detected!("avx512dq")
        && is_x86_feature_detected!("avx512bw")
        && is_x86_feature_detected!("avx512vl");
    match (avx2, avx512) {
        (_, true) => LibvmafIsa::Avx512,
        (true, false) => LibvmafIsa::Avx2,
        _ => LibvmafIsa::C,
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn detect() -> LibvmafIsa {
    LibvmafIsa::C
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_parse_and_resolve() {
        for isa in LibvmafIsa::ALL {
            let m = isa.as_str().parse::<LibvmafIsaMode>().unwrap();
            assert_eq!(m, LibvmafIsaMode::Fixed(isa));
            assert_eq!(m.resolve(), isa);
            assert_eq!(m.to_string(), isa.as_str());
        }
        let e = "sse4".parse::<LibvmafIsaMode>().unwrap_err().to_string();
        assert!(
            e.contains("libvmaf_isa='sse4'") && e.contains("avx2"),
            "{e}"
        );
        assert_eq!(
            "auto".parse::<LibvmafIsaMode>().unwrap().resolve(),
            libvmaf_host()
        );
    }

    /// `auto` follows the host as /proc/cpuinfo describes it (an independent reading of the same
    /// CPU and OS state), not vmaf_rs's own kernel level.
    #[test]
    #[cfg(all(target_arch = "x86_64", target_os = "linux"))]
    fn auto_matches_proc_cpuinfo() {
        let info = std::fs::read_to_string("/proc/cpuinfo").expect("read /proc/cpuinfo");
        let flags: Vec<&str> = info
            .lines()
            .find(|l| l.starts_with("flags"))
            .expect("a flags line")
            .split_whitespace()
            .collect();
        let has = |f: &str| flags.contains(&f);
        let avx2 = has("avx2") && has("bmi1") && has("bmi2");
        let avx512 = avx2
            && ["avx512f", "avx512cd", "avx512dq", "avx512bw", "avx512vl"]
                .iter()
                .all(|f| has(f));
        let want = if avx512 {
            LibvmafIsa::Avx512
        } else if avx2 {
            LibvmafIsa::Avx2
        } else {
            LibvmafIsa::C
        };
        assert_eq!(libvmaf_host(), want, "{flags:?}");
        println!(
            "libvmaf on this host takes its {want} kernels ({})",
            want.hosts()
        );
    }
}
