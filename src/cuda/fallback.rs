//! The per-feature fallback: on CUDA frames, an extractor with no CUDA kernel runs on the CPU,
//! from an asynchronous download (pinned memory, on the scorer's stream, before the frame's
//! event) of just the planes it reads. A model never fails because one of its features lacks a
//! kernel; it costs a device-to-host copy of those planes per frame.

use super::driver::PinnedBytes;
use super::CudaFrame;
use crate::engine::InstanceInfo;
use crate::error::{Error, Result};
use crate::feature::{Extractor, ExtractorConfig, FrameInput};
use crate::picture::{Chroma, ChromaLayout, OwnedPicture, Picture, PictureFormat, Plane};
use cudarc::driver::sys;
use std::ops::Range;

/// One CPU extractor instance fed from downloaded planes.
struct HostFeature {
    /// Index among the engine's instances (for [`crate::Engine::add_totals`]).
    instance: usize,
    name: &'static str,
    columns: Range<usize>,
    /// Runs on frames `n_subsample` skips (libvmaf's temporal flag, or previous frames needed).
    every_frame: bool,
    extractor: Box<dyn Extractor>,
}

/// The extractors of a plan that run on the CPU, their staging layout and normalised pictures.
pub(crate) struct Fallback {
    features: Vec<HostFeature>,
    format: PictureFormat,
    shift: u8,
    chroma: bool,
    bps: usize,
    /// (width in bytes, rows) of the chroma planes as FFmpeg allocates them (rounded up).
    chroma_plane: (usize, usize),
    /// Whether the frames' chroma is one interleaved plane (nv12/p010), as staged.
    interleaved: bool,
    /// Reference pictures of the last three frames by index modulo 3 (the current one and the
    /// two before, for extractors that read previous frames), normalised (LSB-aligned, libvmaf
    /// chroma size); every frame passes through [`Fallback::run`] in order when one needs them.
    refs: [OwnedPicture; 3],
    /// The distorted picture, normalised; by index modulo 3 like `refs` when an extractor reads
    /// previous distorted frames, else one.
    dists: Vec<OwnedPicture>,
}

impl Fallback {
    /// The fallback for the instances without a CUDA kernel (`None` if every one has one).
    pub(crate) fn new(instances: &[InstanceInfo<'_>], shift: u8) -> Result<Option<Self>> {
        let mut features = Vec::new();
        let mut chroma = false;
        let mut dist_history = false;
        let mut format = None;
        for (i, info) in instances.iter().enumerate() {
            if super::plans::find_for(info).is_some() {
                continue;
            }
            chroma |= (info.def.reads_chroma)(info.opts, &info.format);
            dist_history |= info.def.needs_prev_dis;
            format = Some(info.format);
            features.push(HostFeature {
                instance: i,
                name: info.extractor,
                columns: info.columns.clone(),
                every_frame: info.def.every_frame
                    || info.def.needs_prev_ref
                    || info.def.needs_prev_dis,
                extractor: (info.def.create)(&ExtractorConfig {
                    format: info.format,
                    opts: info.opts.clone(),
                    libvmaf_isa: info.libvmaf_isa,
                })?,
            });
        }
        let Some(format) = format else {
            return Ok(None);
        };
        let chroma = chroma && format.layout != ChromaLayout::Gray;
        let bps = if format.bpc > 8 { 2 } else { 1 };
        let (cw, ch) = format.layout.chroma_size(format.width, format.height);
        Ok(Some(Fallback {
            features,
            format,
            shift,
            chroma,
            bps,
            chroma_plane: (cw * bps, ch),
            interleaved: false,
            refs: [0, 1, 2].map(|_| OwnedPicture::new(format, chroma)),
            dists: (0..if dist_history { 3 } else { 1 })
                .map(|_| OwnedPicture::new(format, chroma))
                .collect(),
        }))
    }

    /// Names of the features run on the CPU.
    pub(crate) fn names(&self) -> Vec<&'static str> {
        self.features.iter().map(|f| f.name).collect()
    }

    /// Whether frames with this `scored` flag need a download.
    pub(crate) fn needed(&self, scored: bool) -> bool {
        scored || self.features.iter().any(|f| f.every_frame)
    }

    fn luma_bytes(&self) -> usize {
        self.format.width * self.bps * self.format.height
    }

    fn chroma_bytes(&self) -> usize {
        if self.chroma {
            2 * self.chroma_plane.0 * self.chroma_plane.1
        } else {
            0
        }
    }

    /// Staging bytes per frame pair.
    pub(crate) fn staging_len(&self) -> usize {
        2 * (self.luma_bytes() + self.chroma_bytes())
    }

    /// Queues the downloads of both frames' planes into `staging`.
    pub(crate) fn enqueue(
        &mut self,
        staging: &mut PinnedBytes,
        frames: [&CudaFrame; 2],
        stream: sys::CUstream,
    ) -> Result<()> {
        let (lb, cb) = (self.luma_bytes(), self.chroma_bytes());
        let row = self.format.width * self.bps;
        // One stream has one layout; the C ABI checked both frames agree.
        self.interleaved = frames[0].interleaved;
        for (k, f) in frames.into_iter().enumerate() {
            let at = k * (lb + cb);
            staging.download_2d_async(at, f.luma, f.pitch, row, self.format.height, stream)?;
            if !self.chroma {
                continue;
            }
            let (cw, ch) = self.chroma_plane;
            let planes: &[(u64, usize, usize, usize)] = if f.interleaved {
                &[(f.chroma[0], f.chroma_pitch[0], 2 * cw, at + lb)]
            } else {
                &[
                    (f.chroma[0], f.chroma_pitch[0], cw, at + lb),
                    (f.chroma[1], f.chroma_pitch[1], cw, at + lb + cw * ch),
                ]
            };
            for &(ptr, pitch, width, offset) in planes {
                if ptr == 0 || pitch < width {
                    return Err(Error::InvalidOption(format!(
                        "a feature without a CUDA kernel reads chroma, but a CUDA frame's chroma \
                         plane is missing or its pitch {pitch} is below {width} bytes"
                    )));
                }
                staging.download_2d_async(offset, ptr, pitch, width, ch, stream)?;
            }
        }
        Ok(())
    }

    /// Runs the CPU extractors on a completed download, writing their row columns.
    pub(crate) fn run(
        &mut self,
        staging: &PinnedBytes,
        index: u64,
        scored: bool,
        row: &mut [f64],
    ) -> Result<()> {
        let (lb, cb) = (self.luma_bytes(), self.chroma_bytes());
        let bytes = staging.as_slice();
        let slot = |i: u64| (i % 3) as usize;
        let pic = self.picture(&bytes[..lb + cb])?;
        self.refs[slot(index)].copy_from(&pic)?;
        let pic = self.picture(&bytes[lb + cb..2 * (lb + cb)])?;
        let ndist = self.dists.len() as u64;
        self.dists[(index % ndist) as usize].copy_from(&pic)?;
        let (r, d) = (
            &self.refs[slot(index)],
            &self.dists[(index % ndist) as usize],
        );
        let dist_back = |n: u64| (ndist == 3 && index >= n).then(|| &self.dists[slot(index - n)]);
        let back = |n: u64| (index >= n).then(|| self.refs[slot(index - n)].luma.as_plane());
        let input = FrameInput {
            reference: r.luma.as_plane(),
            distorted: d.luma.as_plane(),
            prev_reference: back(1),
            prev_reference_chroma: (index >= 1)
                .then(|| self.refs[slot(index - 1)].chroma_planes())
                .flatten(),
            prev_prev_reference: back(2),
            reference_chroma: r.chroma_planes(),
            distorted_chroma: d.chroma_planes(),
            prev_distorted: dist_back(1).map(|p| p.luma.as_plane()),
            prev_prev_distorted: dist_back(2).map(|p| p.luma.as_plane()),
            prev_distorted_chroma: dist_back(1).and_then(|p| p.chroma_planes()),
            index,
        };
        for f in &mut self.features {
            if scored || f.every_frame {
                f.extractor.extract(&input, &mut row[f.columns.clone()])?;
            }
        }
        Ok(())
    }

    /// A picture over one frame's staged bytes (luma, then chroma as downloaded).
    fn picture<'a>(&self, frame: &'a [u8]) -> Result<Picture<'a>> {
        let f = self.format;
        let (luma, rest) = frame.split_at(self.luma_bytes());
        let (cwb, ch) = self.chroma_plane;
        let plane = |b: &'a [u8], w_bytes: usize, h: usize| -> Result<Plane<'a>> {
            if self.bps == 1 {
                return Plane::new_u8(b, w_bytes, h, w_bytes);
            }
            // SAFETY: every bit pattern is a valid u16; align_to only reinterprets the aligned
            // middle part, checked to be all of `b` (pinned memory is page-aligned and every
            // offset into it is even).
            let (head, wide, tail) = unsafe { b.align_to::<u16>() };
            if !head.is_empty() || !tail.is_empty() {
                return Err(Error::Internal(
                    "staging buffer is not 2-byte aligned".into(),
                ));
            }
            Plane::new_u16(wide, w_bytes / 2, h, w_bytes / 2)
        };
        let pic = Picture::with_shift(f, plane(luma, f.width * self.bps, f.height)?, self.shift)?;
        if !self.chroma {
            return Ok(pic);
        }
        let chroma = if self.interleaved {
            Chroma::Interleaved(plane(&rest[..2 * cwb * ch], 2 * cwb, ch)?)
        } else {
            let (u, v) = rest.split_at(cwb * ch);
            Chroma::Planar(plane(u, cwb, ch)?, plane(&v[..cwb * ch], cwb, ch)?)
        };
        pic.with_chroma(chroma)
    }

    /// The extractors' totals so far (instance index, totals), for the engine's aggregates at the
    /// end of the stream.
    pub(crate) fn totals(&self) -> Vec<(usize, Vec<u64>)> {
        self.features
            .iter()
            .map(|f| (f.instance, f.extractor.totals().to_vec()))
            .filter(|(_, t)| !t.is_empty())
            .collect()
    }
}
