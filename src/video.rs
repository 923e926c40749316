//! Video file readers: y4m (any chroma layout, 8–16 bit) and raw planar YUV, over any byte
//! stream. Used by the CLI; in the library so that the fuzz targets (`tests/fuzz/`) reach it.

use crate::{ChromaLayout, Error, PictureFormat, Result};
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

/// A sequential frame reader: each frame's planes, Y then Cb then Cr, tightly packed.
pub struct VideoReader<R = BufReader<File>> {
    inner: R,
    path: String,
    /// Stream format.
    pub format: PictureFormat,
    /// Things the user should know about the stream (e.g. interlacing), for the caller to print.
    pub warnings: Vec<String>,
    y4m: bool,
    frame: Vec<u8>,
    frame_bytes: usize,
    marker: Vec<u8>,
}

/// The longest y4m stream header or FRAME line accepted: real ones are well under 100 bytes, and
/// a cap keeps a hostile file (or /dev/zero) from being read whole into memory.
pub const MAX_Y4M_LINE: u64 = 4096;

/// A y4m colour-space tag (the text after `C`): every tag FFmpeg writes, nothing else.
fn layout_from_y4m(tag: &[u8]) -> Option<(ChromaLayout, u8)> {
    let tag = std::str::from_utf8(tag).ok()?;
    let depth = |d: &str| -> Option<u8> {
        match d {
            "9" | "10" | "12" | "14" | "16" => d.parse().ok(),
            _ => None,
        }
    };
    let layout = |b: &str| match b {
        "420" => Some(ChromaLayout::Yuv420),
        "422" => Some(ChromaLayout::Yuv422),
        "444" => Some(ChromaLayout::Yuv444),
        _ => None,
    };
    match tag {
        "420jpeg" | "420paldv" | "420mpeg2" | "420" => Some((ChromaLayout::Yuv420, 8)),
        "422" | "444" => Some((layout(tag)?, 8)),
        "mono" => Some((ChromaLayout::Gray, 8)),
        _ => {
            if let Some(d) = tag.strip_prefix("mono") {
                return Some((ChromaLayout::Gray, depth(d)?));
            }
            let (base, d) = tag.split_once('p')?;
            Some((layout(base)?, depth(d)?))
        }
    }
}

/// Reads one `\n`-terminated line of at most [`MAX_Y4M_LINE`] bytes into `buf` (cleared first);
/// returns its length (0 at the end of the input).
fn read_capped_line(r: &mut impl BufRead, buf: &mut Vec<u8>, what: &str) -> Result<usize> {
    buf.clear();
    let n = r
        .by_ref()
        .take(MAX_Y4M_LINE)
        .read_until(b'\n', buf)
        .map_err(|e| Error::io(format!("cannot read {what}"), e))?;
    if n as u64 == MAX_Y4M_LINE && buf.last() != Some(&b'\n') {
        return Err(Error::Unsupported(format!(
            "{what}: corrupt y4m (a header or FRAME line longer than {MAX_Y4M_LINE} bytes)"
        )));
    }
    Ok(n)
}

fn open_file(path: &Path) -> Result<BufReader<File>> {
    let f =
        File::open(path).map_err(|e| Error::io(format!("cannot open {}", path.display()), e))?;
    Ok(BufReader::with_capacity(1 << 20, f))
}

impl VideoReader {
    /// Opens a y4m file, reading its header.
    pub fn open_y4m(path: &Path) -> Result<Self> {
        VideoReader::y4m(open_file(path)?, &path.display().to_string())
    }

    /// Opens a raw planar YUV file of the given format.
    pub fn open_raw(path: &Path, format: PictureFormat) -> Result<Self> {
        format.validate()?;
        let inner = open_file(path)?;
        Ok(VideoReader::new(
            inner,
            &path.display().to_string(),
            format,
            false,
        ))
    }
}

impl<R: BufRead> VideoReader<R> {
    /// Reads a y4m stream's header from `inner` (byte-wise: a header need not be UTF-8); `name`
    /// names the stream in errors.
    pub fn y4m(mut inner: R, name: &str) -> Result<Self> {
        let name = name.to_string();
        let mut warnings = Vec::new();
        let mut header = Vec::new();
        read_capped_line(&mut inner, &mut header, &name)?;
        let bad = |what: &str| Error::Unsupported(format!("{name}: {what}"));
        let mut toks = header
            .split(|b| b.is_ascii_whitespace())
            .filter(|t| !t.is_empty());
        if toks.next() != Some(b"YUV4MPEG2".as_slice()) {
            return Err(bad("not a y4m file (no YUV4MPEG2 header)"));
        }
        let num = |v: &[u8], what: &str| -> Result<usize> {
            std::str::from_utf8(v)
                .ok()
                .and_then(|v| v.parse().ok())
                .ok_or_else(|| bad(&format!("bad {what} '{}'", String::from_utf8_lossy(v))))
        };
        let (mut w, mut h, mut c) = (0usize, 0usize, b"420jpeg".to_vec());
        for t in toks {
            let (k, v) = (t[0], &t[1..]);
            match k {
                b'W' => w = num(v, "width")?,
                b'H' => h = num(v, "height")?,
                b'C' => c = v.to_vec(),
                b'I' => match v {
                    b"p" | b"?" => {}
                    b"t" | b"b" => warnings.push(format!(
                        "{name} is interlaced (I{}): its frames are scored as progressive \
                         pictures, as libvmaf does",
                        v[0] as char
                    )),
                    _ => {
                        return Err(bad(&format!(
                            "unsupported interlacing I{} (mixed or unknown field order; \
                             convert to progressive frames first)",
                            String::from_utf8_lossy(v)
                        )))
                    }
                },
                _ => {}
            }
        }
        let (layout, bpc) = layout_from_y4m(&c).ok_or_else(|| {
            bad(&format!(
                "unsupported colorspace C{} (supported: 420jpeg, 420paldv, 420mpeg2, 420, 422, \
                 444, 420p10 etc. at 9/10/12/14/16 bits, mono, mono10 etc.)",
                String::from_utf8_lossy(&c)
            ))
        })?;
        let format = PictureFormat {
            width: w,
            height: h,
            bpc,
            layout,
        };
        format.validate().map_err(|e| bad(&e.to_string()))?;
        let mut reader = VideoReader::new(inner, &name, format, true);
        reader.warnings = warnings;
        Ok(reader)
    }

    /// Reads a raw planar YUV stream of the given format from `inner`.
    pub fn raw(inner: R, name: &str, format: PictureFormat) -> Result<Self> {
        format.validate()?;
        Ok(VideoReader::new(inner, name, format, false))
    }

    fn new(inner: R, name: &str, format: PictureFormat, y4m: bool) -> Self {
        let bps = if format.bpc > 8 { 2 } else { 1 };
        let (cw, ch) = format.layout.chroma_size(format.width, format.height);
        VideoReader {
            inner,
            path: name.to_string(),
            format,
            warnings: Vec::new(),
            y4m,
            // Grown while reading, so a header's claimed size never sizes an allocation beyond
            // what the stream delivers.
            frame: Vec::new(),
            frame_bytes: (format.width * format.height + 2 * cw * ch) * bps,
            marker: Vec::with_capacity(64),
        }
    }

    /// Reads the next frame; returns its bytes, Y then Cb then Cr planes without padding
    /// (little-endian 16-bit samples above 8 bits), or `None` at the end of the stream. The buffer
    /// grows as data arrives, so a header's claimed size never allocates more than the stream
    /// delivers.
    pub fn next_frame(&mut self) -> Result<Option<&[u8]>> {
        let ctx = |e| Error::io(format!("cannot read {}", self.path), e);
        if self.y4m {
            let n = read_capped_line(&mut self.inner, &mut self.marker, &self.path)?;
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
        self.frame.clear();
        let n = (&mut self.inner)
            .take(self.frame_bytes as u64)
            .read_to_end(&mut self.frame)
            .map_err(ctx)?;
        if n == 0 && !self.y4m {
            return Ok(None);
        }
        if n < self.frame_bytes {
            return Err(Error::Unsupported(format!(
                "{}: truncated frame",
                self.path
            )));
        }
        Ok(Some(&self.frame))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn y4m_colorspaces() {
        let l = |t: &str| layout_from_y4m(t.as_bytes());
        assert_eq!(l("420jpeg"), Some((ChromaLayout::Yuv420, 8)));
        assert_eq!(l("420p10"), Some((ChromaLayout::Yuv420, 10)));
        assert_eq!(l("444p12"), Some((ChromaLayout::Yuv444, 12)));
        assert_eq!(l("422"), Some((ChromaLayout::Yuv422, 8)));
        assert_eq!(l("mono"), Some((ChromaLayout::Gray, 8)));
        assert_eq!(l("mono16"), Some((ChromaLayout::Gray, 16)));
        // Issue 8: tags FFmpeg never writes are refused, not guessed at.
        for bad in [
            "411", "420pXX", "420p", "420p11", "444alpha", "mono7", "4200", "",
        ] {
            assert_eq!(l(bad), None, "{bad}");
        }
        assert_eq!(layout_from_y4m(b"\xc3\xa9x"), None);
    }
}
