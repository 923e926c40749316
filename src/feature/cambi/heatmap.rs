//! cambi's `heatmaps_path`: per scale one raw file of 16-bit little-endian samples, the
//! distorted picture's c-values scaled so that the largest possible c-value maps to 65535,
//! frame after frame at `frame * width * height` samples (libvmaf's `dump_c_values`; frames not
//! computed, e.g. with `n_subsample`, leave holes of zeros).

use super::setup::{Setup, CONTRAST_WEIGHTS, NUM_SCALES};
use crate::error::{Error, Result};
use std::fs::File;
use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// The open heatmap files and their conversion.
#[derive(Debug)]
pub struct Heatmaps {
    files: Vec<File>,
    /// 65535 over the largest possible c-value.
    scaling: f64,
    /// One scale's samples of a frame, as bytes.
    bytes: Vec<u8>,
}

fn io(what: String) -> impl FnOnce(std::io::Error) -> Error {
    move |source| Error::Io {
        context: what,
        source,
    }
}

impl Heatmaps {
    /// Creates `dir` (mode 0770, parents too) and the five files, emptied, named as libvmaf names
    /// them: `cambi_heatmap_scale_<s>_<w>x<h>_16b.gray` with the encoding size halved per scale
    /// (not halved again by `cambi_high_res_speedup`, which libvmaf's names ignore).
    pub fn create(dir: &str, setup: &Setup) -> Result<Heatmaps> {
        let mut b = std::fs::DirBuilder::new();
        b.recursive(true);
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut b, 0o770);
        b.create(dir)
            .map_err(io(format!("cambi: cannot create heatmaps_path {dir}")))?;
        let (mut w, mut h) = (setup.enc.width, setup.enc.height);
        let mut files = Vec::with_capacity(NUM_SCALES);
        for s in 0..NUM_SCALES {
            let p: PathBuf =
                Path::new(dir).join(format!("cambi_heatmap_scale_{s}_{w}x{h}_16b.gray"));
            files.push(
                File::create(&p).map_err(io(format!("cambi: cannot create {}", p.display())))?,
            );
            w = (w + 1) >> 1;
            h = (h + 1) >> 1;
        }
        let nd = setup.num_diffs as usize;
        let max_weight = *CONTRAST_WEIGHTS[..nd].iter().max().expect("num_diffs >= 1");
        let ws = setup.enc.window as i32;
        let max_c = max_weight * ws * ws / 4;
        Ok(Heatmaps {
            files,
            scaling: 65535.0 / max_c as f64,
            bytes: vec![0; 2 * setup.enc.width * setup.enc.height],
        })
    }

    /// Writes scale `scale`'s `w` x `h` c-values of frame `frame`.
    pub fn write(&mut self, scale: usize, frame: u64, c: &[f32], w: usize, h: usize) -> Result<()> {
        let n = w * h;
        for (b, &v) in self.bytes[..2 * n].chunks_exact_mut(2).zip(&c[..n]) {
            // libvmaf's (uint16_t) of a double: a 32-bit truncation, then the low 16 bits.
            let s = (self.scaling * v as f64) as i32 as u16;
            b.copy_from_slice(&s.to_le_bytes());
        }
        let f = &mut self.files[scale];
        let at = frame * n as u64 * 2;
        let what = || format!("cambi: cannot write heatmap scale {scale} of frame {frame}");
        f.seek(SeekFrom::Start(at)).map_err(io(what()))?;
        f.write_all(&self.bytes[..2 * n]).map_err(io(what()))
    }
}
