//! Video input for the CLI: y4m (any chroma layout, 8–16 bit) and raw planar YUV.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use vmaf_rs::{ChromaLayout, Error, PictureFormat, Result};

/// A sequential frame reader that keeps only the luma plane of each frame.
pub struct VideoReader {
    inner: BufReader<File>,
    path: String,
    /// Stream format.
    pub format: PictureFormat,
    y4m: bool,
    luma: Vec<u8>,
    chroma_bytes: usize,
    skip: Vec<u8>,
    marker: Vec<u8>,
}

fn layout_from_y4m(tag: &str) -> Option<(ChromaLayout, u8)> {
    // e.g. 420jpeg, 420paldv, 420mpeg2, 420, 422, 444, 420p10, 444p12, mono, mono16
    let (base, depth) = match tag.find('p') {
        Some(i) if tag[i + 1..].chars().all(|c| c.is_ascii_digit()) && i + 1 < tag.len() => {
            (&tag[..i], tag[i + 1..].parse().ok()?)
        }
        _ => (tag, 8),
    };
    let layout = if base.starts_with("420") {
        ChromaLayout::Yuv420
    } else if base.starts_with("422") {
        ChromaLayout::Yuv422
    } else if base.starts_with("444") {
        ChromaLayout::Yuv444
    } else if let Some(d) = base.strip_prefix("mono") {
        let depth = if d.is_empty() { 8 } else { d.parse().ok()? };
        return Some((ChromaLayout::Gray, depth));
    } else {
        return None;
    };
    Some((layout, depth))
}

impl VideoReader {
    fn open_file(path: &Path) -> Result<BufReader<File>> {
        let f = File::open(path)
            .map_err(|e| Error::io(format!("cannot open {}", path.display()), e))?;
        Ok(BufReader::with_capacity(1 << 20, f))
    }

    /// Opens a y4m file, reading its header.
    pub fn open_y4m(path: &Path) -> Result<Self> {
        let mut inner = Self::open_file(path)?;
        let mut header = String::new();
        inner
            .read_line(&mut header)
            .map_err(|e| Error::io(format!("cannot read {}", path.display()), e))?;
        let bad = |what: &str| Error::Unsupported(format!("{}: {what}", path.display()));
        let mut toks = header.split_ascii_whitespace();
        if toks.next() != Some("YUV4MPEG2") {
            return Err(bad("not a y4m file (no YUV4MPEG2 header)"));
        }
        let (mut w, mut h, mut c) = (0usize, 0usize, "420jpeg".to_string());
        for t in toks {
            let (k, v) = t.split_at(1);
            match k {
                "W" => w = v.parse().map_err(|_| bad("bad width"))?,
                "H" => h = v.parse().map_err(|_| bad("bad height"))?,
                "C" => c = v.to_string(),
                _ => {}
            }
        }
        let (layout, bpc) =
            layout_from_y4m(&c).ok_or_else(|| bad(&format!("unsupported colorspace C{c}")))?;
        let format = PictureFormat {
            width: w,
            height: h,
            bpc,
            layout,
        };
        format.validate().map_err(|e| bad(&e.to_string()))?;
        Ok(Self::new(inner, path, format, true))
    }

    /// Opens a raw planar YUV file of the given format.
    pub fn open_raw(path: &Path, format: PictureFormat) -> Result<Self> {
        format.validate()?;
        let inner = Self::open_file(path)?;
        Ok(Self::new(inner, path, format, false))
    }

    fn new(inner: BufReader<File>, path: &Path, format: PictureFormat, y4m: bool) -> Self {
        let bps = if format.bpc > 8 { 2 } else { 1 };
        let (cw, ch) = format.layout.chroma_size(format.width, format.height);
        VideoReader {
            inner,
            path: path.display().to_string(),
            format,
            y4m,
            luma: vec![0; format.width * format.height * bps],
            chroma_bytes: 2 * cw * ch * bps,
            skip: vec![0; 2 * cw * ch * bps],
            marker: Vec::with_capacity(64),
        }
    }

    /// Reads the next frame; returns its luma bytes (little-endian 16-bit samples above 8 bits),
    /// or `None` at the end of the stream.
    pub fn next_frame(&mut self) -> Result<Option<&[u8]>> {
        let ctx = |e| Error::io(format!("cannot read {}", self.path), e);
        if self.y4m {
            self.marker.clear();
            let n = self
                .inner
                .read_until(b'\n', &mut self.marker)
                .map_err(ctx)?;
            if n == 0 {
                return Ok(None);
            }
            if !self.marker.starts_with(b"FRAME") {
                return Err(Error::Unsupported(format!(
                    "{}: corrupt y4m (expected FRAME marker)",
                    self.path
                )));
            }
        }
        match read_full(&mut self.inner, &mut self.luma).map_err(ctx)? {
            0 if !self.y4m => return Ok(None),
            n if n < self.luma.len() => {
                return Err(Error::Unsupported(format!(
                    "{}: truncated frame",
                    self.path
                )))
            }
            _ => {}
        }
        let c = self.chroma_bytes;
        if read_full(&mut self.inner, &mut self.skip[..c]).map_err(ctx)? < c {
            return Err(Error::Unsupported(format!(
                "{}: truncated frame",
                self.path
            )));
        }
        Ok(Some(&self.luma))
    }
}

fn read_full(r: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match r.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn y4m_colorspaces() {
        assert_eq!(layout_from_y4m("420jpeg"), Some((ChromaLayout::Yuv420, 8)));
        assert_eq!(layout_from_y4m("420p10"), Some((ChromaLayout::Yuv420, 10)));
        assert_eq!(layout_from_y4m("444p12"), Some((ChromaLayout::Yuv444, 12)));
        assert_eq!(layout_from_y4m("422"), Some((ChromaLayout::Yuv422, 8)));
        assert_eq!(layout_from_y4m("mono"), Some((ChromaLayout::Gray, 8)));
        assert_eq!(layout_from_y4m("mono16"), Some((ChromaLayout::Gray, 16)));
        assert_eq!(layout_from_y4m("411"), None);
    }
}
