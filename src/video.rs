//! Video file readers: y4m (any chroma layout, 8–16 bit) and raw planar YUV, over any byte
//! stream. Used by the CLI; in the library so that the fuzz targets (`tests/fuzz/`) reach it.

use crate::picture::{OwnedPicture, OwnedPlane, PlaneBuf};
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
        if !self.frame_marker()? {
            return Ok(None);
        }
        let ctx = |e| Error::io(format!("cannot read {}", self.path), e);
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

impl<R: BufRead> VideoReader<R> {
    /// Reads a y4m frame's `FRAME` line; `false` at the end of the stream (always `true` for
    /// raw streams, whose end shows as a frame of no bytes).
    fn frame_marker(&mut self) -> Result<bool> {
        if !self.y4m {
            return Ok(true);
        }
        let n = read_capped_line(&mut self.inner, &mut self.marker, &self.path)?;
        if n == 0 {
            return Ok(false);
        }
        if !self.marker.starts_with(b"FRAME") {
            return Err(Error::Unsupported(format!(
                "{}: corrupt y4m (expected FRAME marker)",
                self.path
            )));
        }
        Ok(true)
    }

    fn truncated(&self) -> Error {
        Error::Unsupported(format!("{}: truncated frame", self.path))
    }

    /// Fills `buf` from the stream; returns the bytes read (fewer only at its end).
    fn read_full(&mut self, buf: &mut [u8]) -> Result<usize> {
        let mut got = 0;
        while got < buf.len() {
            match self.inner.read(&mut buf[got..]) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(Error::io(format!("cannot read {}", self.path), e)),
            }
        }
        Ok(got)
    }

    /// Reads one plane of `w x h` samples into `dst` when given (its top-left `dst.width` x
    /// `dst.height` part, as [`OwnedPicture::copy_from`] takes it), else past it. `first`: this
    /// is a raw stream's first plane of a frame, where the stream may end (returns `false`).
    fn read_plane(
        &mut self,
        (w, h): (usize, usize),
        dst: Option<&mut OwnedPlane>,
        first: bool,
    ) -> Result<bool> {
        let bps = if self.format.bpc > 8 { 2 } else { 1 };
        let bytes = w * h * bps;
        // 8-bit samples of a whole plane go straight into the picture's buffer.
        if let Some(OwnedPlane {
            buf: PlaneBuf::U8(v),
            width,
            height,
        }) = dst
        {
            if (*width, *height) == (w, h) {
                let n = self.read_full(&mut v[..bytes])?;
                return match n {
                    0 if first => Ok(false),
                    n if n < bytes => Err(self.truncated()),
                    _ => Ok(true),
                };
            }
        }
        let mut frame = std::mem::take(&mut self.frame);
        frame.resize(bytes, 0);
        let n = self.read_full(&mut frame);
        let ok = match n {
            Ok(0) if first => Ok(false),
            Ok(n) if n < bytes => Err(self.truncated()),
            Ok(_) => Ok(true),
            Err(e) => Err(e),
        };
        if let (Ok(true), Some(d)) = (&ok, dst) {
            let (dw, dh) = (d.width, d.height);
            match &mut d.buf {
                PlaneBuf::U8(v) => {
                    for (y, row) in v.chunks_exact_mut(dw).take(dh).enumerate() {
                        row.copy_from_slice(&frame[y * w..y * w + dw]);
                    }
                }
                PlaneBuf::U16(v) => {
                    for (y, row) in v.chunks_exact_mut(dw).take(dh).enumerate() {
                        let src = &frame[2 * y * w..2 * (y * w + dw)];
                        for (s, b) in row.iter_mut().zip(src.chunks_exact(2)) {
                            *s = u16::from_le_bytes([b[0], b[1]]);
                        }
                    }
                }
            }
        }
        self.frame = frame;
        ok
    }

    /// Reads the next frame straight into `pic` (an engine's own buffers,
    /// [`crate::Engine::send_filled`]): its luma, and its chroma planes when it keeps them, the
    /// others read past. `pic` must have this stream's size and depth. Returns `false` at the
    /// end of the stream.
    pub fn read_into(&mut self, pic: &mut OwnedPicture) -> Result<bool> {
        let f = self.format;
        let wide = matches!(pic.luma.buf, PlaneBuf::U16(_));
        if (pic.luma.width, pic.luma.height) != (f.width, f.height) || wide != (f.bpc > 8) {
            return Err(Error::Mismatch(format!(
                "{}: a {}x{} picture buffer for a {f} stream",
                self.path, pic.luma.width, pic.luma.height
            )));
        }
        if !self.frame_marker()? {
            return Ok(false);
        }
        if !self.read_plane((f.width, f.height), Some(&mut pic.luma), !self.y4m)? {
            return Ok(false);
        }
        let (cw, ch) = f.layout.chroma_size(f.width, f.height);
        if cw * ch == 0 {
            return Ok(true);
        }
        match &mut pic.chroma {
            Some([u, v]) => {
                self.read_plane((cw, ch), Some(u), false)?;
                self.read_plane((cw, ch), Some(v), false)?;
            }
            None => {
                self.read_plane((cw, ch), None, false)?;
                self.read_plane((cw, ch), None, false)?;
            }
        }
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::picture::{Chroma, Picture, Plane};

    /// `frames` frames of a stream (y4m when `tag` is given) with samples from a counter.
    fn stream(f: PictureFormat, tag: Option<&str>, frames: usize, cut: usize) -> Vec<u8> {
        let (cw, ch) = f.layout.chroma_size(f.width, f.height);
        let samples = f.width * f.height + 2 * cw * ch;
        let mut out = Vec::new();
        if let Some(t) = tag {
            out.extend(format!("YUV4MPEG2 W{} H{} C{t}\n", f.width, f.height).bytes());
        }
        let mut k = 0u32;
        for _ in 0..frames {
            if tag.is_some() {
                out.extend(b"FRAME\n");
            }
            for _ in 0..samples {
                k = k.wrapping_mul(1103515245).wrapping_add(12345);
                let v = (k >> 16) & ((1 << f.bpc) - 1);
                if f.bpc > 8 {
                    out.extend((v as u16).to_le_bytes());
                } else {
                    out.push(v as u8);
                }
            }
        }
        out.truncate(out.len() - cut);
        out
    }

    /// The engine's copy of what `next_frame` returns, as the CLI made it before `read_into`.
    fn copied(f: PictureFormat, bytes: &[u8], chroma: bool) -> OwnedPicture {
        let (w, h) = (f.width, f.height);
        let (cw, ch) = f.layout.chroma_size(w, h);
        let wide: Vec<u16> = bytes
            .chunks_exact(2)
            .map(|c| u16::from_le_bytes([c[0], c[1]]))
            .collect();
        let plane = |at: usize, pw: usize, ph: usize| {
            if f.bpc > 8 {
                Plane::new_u16(&wide[at..at + pw * ph], pw, ph, pw).unwrap()
            } else {
                Plane::new_u8(&bytes[at..at + pw * ph], pw, ph, pw).unwrap()
            }
        };
        let mut pic = Picture::new(f, plane(0, w, h)).unwrap();
        if chroma && cw > 0 {
            let (u, v) = (plane(w * h, cw, ch), plane(w * h + cw * ch, cw, ch));
            pic = pic.with_chroma(Chroma::Planar(u, v)).unwrap();
        }
        let mut o = OwnedPicture::new(f, chroma);
        o.copy_from(&pic).unwrap();
        o
    }

    fn same(a: &OwnedPicture, b: &OwnedPicture) -> bool {
        let planes = |p: &OwnedPicture| {
            let mut v = vec![format!("{:?}", p.luma.as_plane().samples)];
            if let Some([u, w]) = &p.chroma {
                v.push(format!(
                    "{:?} {:?}",
                    u.as_plane().samples,
                    w.as_plane().samples
                ));
            }
            v
        };
        planes(a) == planes(b)
    }

    /// Reading into an engine's buffers gives what copying `next_frame`'s bytes gave, for
    /// every layout, odd sizes (chroma larger than libvmaf's), both sample sizes, chroma kept or
    /// skipped; the end of the stream and a truncated frame are told apart as before.
    #[test]
    fn read_into_equals_a_copy_of_next_frame() {
        let layouts = [
            (ChromaLayout::Yuv420, "420"),
            (ChromaLayout::Yuv422, "422"),
            (ChromaLayout::Yuv444, "444"),
            (ChromaLayout::Gray, "mono"),
        ];
        for (layout, tag) in layouts {
            for bpc in [8u8, 10] {
                for (w, h) in [(17, 19), (16, 16)] {
                    let f = PictureFormat {
                        width: w,
                        height: h,
                        bpc,
                        layout,
                    };
                    let tag = match (bpc > 8, layout) {
                        (false, _) => tag.to_string(),
                        (true, ChromaLayout::Gray) => "mono10".into(),
                        (true, _) => format!("{tag}p10"),
                    };
                    for y4m in [false, true] {
                        let bytes = stream(f, y4m.then_some(tag.as_str()), 3, 0);
                        let open = |b: &[u8]| {
                            let c = std::io::Cursor::new(b.to_vec());
                            if y4m {
                                VideoReader::y4m(c, "t").unwrap()
                            } else {
                                VideoReader::raw(c, "t", f).unwrap()
                            }
                        };
                        for chroma in [false, true] {
                            let (mut a, mut b) = (open(&bytes), open(&bytes));
                            let mut pic = OwnedPicture::new(f, chroma);
                            for k in 0..3 {
                                let want = copied(f, b.next_frame().unwrap().unwrap(), chroma);
                                assert!(a.read_into(&mut pic).unwrap());
                                assert!(same(&pic, &want), "{f} {tag} y4m {y4m} frame {k}");
                            }
                            assert!(!a.read_into(&mut pic).unwrap(), "end of {f} y4m {y4m}");
                        }
                        let cut = open(&bytes[..bytes.len() - 3]);
                        let mut cut = cut;
                        let mut pic = OwnedPicture::new(f, true);
                        assert!(cut.read_into(&mut pic).unwrap());
                        assert!(cut.read_into(&mut pic).unwrap());
                        let e = cut.read_into(&mut pic).unwrap_err();
                        assert!(e.to_string().contains("truncated"), "{e}");
                    }
                }
            }
        }
    }

    #[test]
    fn read_into_refuses_another_format() {
        let f = PictureFormat {
            width: 16,
            height: 16,
            bpc: 8,
            layout: ChromaLayout::Yuv420,
        };
        let c = std::io::Cursor::new(stream(f, None, 1, 0));
        let mut r = VideoReader::raw(c, "t", f).unwrap();
        let mut pic = OwnedPicture::new(PictureFormat { bpc: 10, ..f }, false);
        assert!(r.read_into(&mut pic).is_err());
    }

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
