//! Which stream runs each CUDA plan: the pure part of the scorer's fork/join streams, kept out
//! of the `cuda` feature so the ordinary test run checks it.
// Without the `cuda` feature only the tests use it.
#![cfg_attr(not(feature = "cuda"), allow(dead_code))]

use crate::{Error, Result};

/// Streams a frame's kernels may spread over when `VMAF_RS_CUDA_STREAMS` does not say.
pub(crate) const DEFAULT_STREAMS: usize = 4;
/// The most streams `VMAF_RS_CUDA_STREAMS` may ask for.
pub(crate) const MAX_STREAMS: usize = 8;

/// The number of streams `VMAF_RS_CUDA_STREAMS` asks for (`None`: unset, the default).
pub(crate) fn parse_streams(v: Option<&str>) -> Result<usize> {
    let Some(v) = v else {
        return Ok(DEFAULT_STREAMS);
    };
    v.trim()
        .parse::<usize>()
        .ok()
        .filter(|n| (1..=MAX_STREAMS).contains(n))
        .ok_or_else(|| {
            Error::InvalidOption(format!(
                "VMAF_RS_CUDA_STREAMS={v}: expected a number of streams from 1 to {MAX_STREAMS}"
            ))
        })
}

/// Which stream runs each plan (0: the main one, `n`: side stream `n - 1`). Plan kinds are dealt
/// round-robin over up to `most` streams so that independent kinds' kernels (VIF, ADM, motion,
/// …) overlap on the GPU and a frame holds it for less time: what lets other processes' work in
/// between when the GPU time-slices between CUDA contexts. A kind's instances share its
/// scratch, so they all stay on one stream, in order; no two kinds share writable memory but
/// the result block, where each writes its own slots. The values cannot change: every kernel
/// runs as before, only beside other kinds'.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct StreamPlan {
    of_plan: Vec<usize>,
}

impl StreamPlan {
    /// Deals the plans, given by their kinds' names in plan order, over up to `most` streams.
    pub(crate) fn deal<'a>(kinds: impl IntoIterator<Item = &'a str>, most: usize) -> Self {
        let most = most.max(1);
        let mut seen: Vec<&str> = Vec::new();
        let of_plan = kinds
            .into_iter()
            .map(|name| {
                let k = seen.iter().position(|&n| n == name).unwrap_or_else(|| {
                    seen.push(name);
                    seen.len() - 1
                });
                k % most
            })
            .collect();
        StreamPlan { of_plan }
    }

    /// The stream of plan `i`.
    pub(crate) fn of(&self, i: usize) -> usize {
        self.of_plan[i]
    }

    /// Streams used (the main one included).
    pub(crate) fn count(&self) -> usize {
        // Kinds are dealt in order, so the streams used are 0 ..= the highest.
        self.of_plan.iter().max().map_or(1, |&m| m + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_are_dealt_round_robin_and_instances_stay_together() {
        let p = StreamPlan::deal(
            ["adm", "motion", "adm", "vif", "psnr", "cambi", "motion"],
            4,
        );
        assert_eq!(p.of_plan, vec![0, 1, 0, 2, 3, 0, 1]);
        assert_eq!(p.count(), 4);
        // Fewer kinds than streams: only as many streams as kinds.
        let p = StreamPlan::deal(["vif", "adm", "vif"], 4);
        assert_eq!((p.of_plan.clone(), p.count()), (vec![0, 1, 0], 2));
        // One stream: everything on the main one, as before the side streams.
        let p = StreamPlan::deal(["vif", "adm", "motion"], 1);
        assert_eq!((p.of_plan.clone(), p.count()), (vec![0, 0, 0], 1));
        // No plan (every feature on the CPU fallback): the main stream only.
        assert_eq!(StreamPlan::deal([], 4).count(), 1);
    }

    #[test]
    fn the_stream_count_is_checked() {
        assert_eq!(parse_streams(None).unwrap(), DEFAULT_STREAMS);
        assert_eq!(parse_streams(Some(" 1 ")).unwrap(), 1);
        assert_eq!(parse_streams(Some("8")).unwrap(), 8);
        for bad in ["0", "9", "-1", "four", ""] {
            let e = parse_streams(Some(bad)).unwrap_err().to_string();
            assert!(e.contains("VMAF_RS_CUDA_STREAMS"), "{bad}: {e}");
        }
    }
}
