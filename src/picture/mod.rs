//! Borrowed strided picture planes (8–16 bit) and owned copies of them.
//!
//! This is the only module that turns raw pointers into slices: the C ABI and the CUDA-less paths
//! build [`Plane`]s here, everything downstream works on safe slices.

use crate::error::{Error, Result};

/// Chroma subsampling of a picture (luma-only formats are `Gray`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ChromaLayout {
    /// Luma only.
    Gray,
    /// 4:2:0.
    Yuv420,
    /// 4:2:2.
    Yuv422,
    /// 4:4:4.
    Yuv444,
}

impl ChromaLayout {
    /// The libvmaf / y4m style name (`400`, `420`, `422`, `444`).
    pub fn as_str(self) -> &'static str {
        match self {
            ChromaLayout::Gray => "400",
            ChromaLayout::Yuv420 => "420",
            ChromaLayout::Yuv422 => "422",
            ChromaLayout::Yuv444 => "444",
        }
    }

    /// Parses `400|420|422|444` (also `gray`, `yuv420p`… prefixes).
    pub fn parse(s: &str) -> Option<Self> {
        let s = s.trim().to_ascii_lowercase();
        let s = s.trim_start_matches("yuv").trim_end_matches('p');
        match s {
            "400" | "gray" | "mono" => Some(ChromaLayout::Gray),
            "420" => Some(ChromaLayout::Yuv420),
            "422" => Some(ChromaLayout::Yuv422),
            "444" => Some(ChromaLayout::Yuv444),
            _ => None,
        }
    }

    /// Chroma plane size for a luma size (rounding up, as FFmpeg does).
    pub fn chroma_size(self, width: usize, height: usize) -> (usize, usize) {
        match self {
            ChromaLayout::Gray => (0, 0),
            ChromaLayout::Yuv420 => (width.div_ceil(2), height.div_ceil(2)),
            ChromaLayout::Yuv422 => (width.div_ceil(2), height),
            ChromaLayout::Yuv444 => (width, height),
        }
    }

    /// libvmaf's size of the chroma planes it reads: `w >> 1` (and `h >> 1` for 4:2:0), rounded
    /// down where FFmpeg's planes ([`ChromaLayout::chroma_size`]) round up; luma size for 4:4:4
    /// and gray.
    pub fn libvmaf_chroma_size(self, width: usize, height: usize) -> (usize, usize) {
        match self {
            ChromaLayout::Yuv420 => (width >> 1, height >> 1),
            ChromaLayout::Yuv422 => (width >> 1, height),
            ChromaLayout::Yuv444 | ChromaLayout::Gray => (width, height),
        }
    }
}

/// Size, bit depth and layout of a picture stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PictureFormat {
    /// Luma width in pixels.
    pub width: usize,
    /// Luma height in pixels.
    pub height: usize,
    /// Bits per component, 8 to 16.
    pub bpc: u8,
    /// Chroma layout.
    pub layout: ChromaLayout,
}

impl PictureFormat {
    /// Checks the ranges libvmaf accepts.
    pub fn validate(&self) -> Result<()> {
        if !(8..=16).contains(&self.bpc) {
            return Err(Error::Unsupported(format!(
                "bit depth {} (supported: 8 to 16 bits per component)",
                self.bpc
            )));
        }
        // The filters mirror-pad by up to 8 pixels (VIF scale 0) and ADM/VIF downsample 3 times;
        // below these sizes libvmaf itself reads out of bounds or refuses.
        if self.width < 16 || self.height < 16 {
            return Err(Error::Unsupported(format!(
                "picture size {}x{} (minimum 16x16)",
                self.width, self.height
            )));
        }
        if self.width > 1 << 15 || self.height > 1 << 15 {
            return Err(Error::Unsupported(format!(
                "picture size {}x{} (maximum 32768x32768)",
                self.width, self.height
            )));
        }
        Ok(())
    }
}

impl std::fmt::Display for PictureFormat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let depth = if self.bpc == 8 {
            String::new()
        } else {
            format!(" {}-bit", self.bpc)
        };
        write!(
            f,
            "{}x{} {}{}",
            self.width,
            self.height,
            self.layout.as_str(),
            depth
        )
    }
}

/// Samples of one plane: bytes for 8-bit content, native-endian `u16` for 9–16 bit content.
#[derive(Debug, Clone, Copy)]
pub enum Samples<'a> {
    /// 8-bit samples.
    U8(&'a [u8]),
    /// 9–16 bit samples, one `u16` each, value in the low bits.
    U16(&'a [u16]),
}

/// A borrowed strided plane. `stride` is in samples, not bytes.
#[derive(Debug, Clone, Copy)]
pub struct Plane<'a> {
    /// The samples, at least `stride * (height - 1) + width` of them.
    pub samples: Samples<'a>,
    /// Width in samples.
    pub width: usize,
    /// Height in rows.
    pub height: usize,
    /// Distance between rows, in samples.
    pub stride: usize,
}

impl<'a> Plane<'a> {
    fn check(len: usize, width: usize, height: usize, stride: usize) -> Result<()> {
        if width == 0 || height == 0 {
            return Err(Error::Unsupported(format!("empty plane {width}x{height}")));
        }
        if stride < width {
            return Err(Error::InvalidOption(format!(
                "stride {stride} is smaller than the width {width}"
            )));
        }
        let need = stride * (height - 1) + width;
        if len < need {
            return Err(Error::InvalidOption(format!(
                "plane buffer holds {len} samples, {width}x{height} with stride {stride} needs {need}"
            )));
        }
        Ok(())
    }

    /// An 8-bit plane over a slice.
    pub fn new_u8(data: &'a [u8], width: usize, height: usize, stride: usize) -> Result<Self> {
        Self::check(data.len(), width, height, stride)?;
        Ok(Plane {
            samples: Samples::U8(data),
            width,
            height,
            stride,
        })
    }

    /// A 9–16 bit plane over a slice.
    pub fn new_u16(data: &'a [u16], width: usize, height: usize, stride: usize) -> Result<Self> {
        Self::check(data.len(), width, height, stride)?;
        Ok(Plane {
            samples: Samples::U16(data),
            width,
            height,
            stride,
        })
    }

    /// Builds a plane from a raw pointer and a pitch in bytes.
    ///
    /// # Safety
    /// `data` must point to `pitch * (height - 1) + width * bytes_per_sample` readable bytes that
    /// stay valid and unmodified for `'a`; for 16-bit samples it must be 2-byte aligned and `pitch`
    /// even.
    pub unsafe fn from_raw(
        data: *const u8,
        pitch: usize,
        width: usize,
        height: usize,
        sixteen_bit: bool,
    ) -> Result<Self> {
        if data.is_null() {
            return Err(Error::InvalidOption("plane pointer is NULL".into()));
        }
        if width == 0 || height == 0 {
            return Err(Error::Unsupported(format!("empty plane {width}x{height}")));
        }
        if sixteen_bit {
            if !pitch.is_multiple_of(2) || !(data as usize).is_multiple_of(2) {
                return Err(Error::InvalidOption(
                    "16-bit plane pointer or pitch is not 2-byte aligned".into(),
                ));
            }
            let stride = pitch / 2;
            let len = stride * (height - 1) + width;
            // SAFETY: the caller guarantees `len` u16 samples are readable and aligned for 'a.
            let s = unsafe { std::slice::from_raw_parts(data as *const u16, len) };
            Plane::new_u16(s, width, height, stride)
        } else {
            let len = pitch * (height - 1) + width;
            // SAFETY: the caller guarantees `len` bytes are readable for 'a.
            let s = unsafe { std::slice::from_raw_parts(data, len) };
            Plane::new_u8(s, width, height, pitch)
        }
    }

    /// Sample at (x, y) widened to `u32` (slow path for tests and edge handling).
    #[inline]
    pub fn get(&self, x: usize, y: usize) -> u32 {
        match self.samples {
            Samples::U8(d) => d[y * self.stride + x] as u32,
            Samples::U16(d) => d[y * self.stride + x] as u32,
        }
    }
}

/// The chroma planes of a borrowed picture.
#[derive(Debug, Clone, Copy)]
pub enum Chroma<'a> {
    /// Separate Cb and Cr planes (yuv420p, yuv444p10le…).
    Planar(Plane<'a>, Plane<'a>),
    /// One plane of Cb,Cr sample pairs (nv12, p010…): its `width` counts samples, so it is twice
    /// the chroma width.
    Interleaved(Plane<'a>),
}

/// A borrowed picture: luma, the chroma planes if the caller has them, and the format. Features
/// that read chroma need them; the engine copies only the planes its features read.
#[derive(Debug, Clone, Copy)]
pub struct Picture<'a> {
    /// Stream format.
    pub format: PictureFormat,
    /// Luma plane.
    pub luma: Plane<'a>,
    /// Chroma planes (`None`: luma only, or a 4:0:0 picture).
    pub chroma: Option<Chroma<'a>>,
    /// Right shift applied to every sample when it is read: 6 for MSB-aligned p010, 0 otherwise.
    pub luma_shift: u8,
}

impl<'a> Picture<'a> {
    /// A picture whose luma samples are LSB-aligned.
    pub fn new(format: PictureFormat, luma: Plane<'a>) -> Result<Self> {
        Self::with_shift(format, luma, 0)
    }

    /// A picture whose samples are stored `shift` bits up (MSB-aligned formats like p010).
    pub fn with_shift(format: PictureFormat, luma: Plane<'a>, shift: u8) -> Result<Self> {
        format.validate()?;
        check_samples(&format, &luma, "luma")?;
        if luma.width != format.width || luma.height != format.height {
            return Err(Error::Mismatch(format!(
                "luma plane is {}x{}, the stream is {}",
                luma.width, luma.height, format
            )));
        }
        if shift as u32 + format.bpc as u32 > 16 {
            return Err(Error::InvalidOption(format!(
                "shift {shift} with {} bits exceeds 16 bits",
                format.bpc
            )));
        }
        Ok(Picture {
            format,
            luma,
            chroma: None,
            luma_shift: shift,
        })
    }

    /// Adds the chroma planes, checked against the format's chroma size.
    pub fn with_chroma(mut self, chroma: Chroma<'a>) -> Result<Self> {
        let f = self.format;
        let (cw, ch) = f.layout.chroma_size(f.width, f.height);
        if f.layout == ChromaLayout::Gray {
            return Err(Error::InvalidOption(format!(
                "{f} has no chroma planes, but some were given"
            )));
        }
        let planes: &[(&Plane, usize, &str)] = match &chroma {
            Chroma::Planar(u, v) => &[(u, cw, "Cb"), (v, cw, "Cr")],
            Chroma::Interleaved(uv) => &[(uv, 2 * cw, "interleaved CbCr")],
        };
        for &(p, want_w, what) in planes {
            check_samples(&f, p, what)?;
            if p.width != want_w || p.height != ch {
                return Err(Error::Mismatch(format!(
                    "{what} plane is {}x{} samples, {f} needs {want_w}x{ch}",
                    p.width, p.height
                )));
            }
        }
        self.chroma = Some(chroma);
        Ok(self)
    }
}

fn check_samples(format: &PictureFormat, p: &Plane<'_>, what: &str) -> Result<()> {
    let sixteen = matches!(p.samples, Samples::U16(_));
    if sixteen != (format.bpc > 8) {
        return Err(Error::InvalidOption(format!(
            "{}-bit picture given {} {what} samples",
            format.bpc,
            if sixteen { "16-bit" } else { "8-bit" }
        )));
    }
    Ok(())
}

/// A picture whose memory its owner lends until the picture is dropped: the planes stay valid
/// and unchanged until then, and dropping it runs the owner's release (FFmpeg's filter hands
/// over a reference on each software frame this way, so the engine reads the frame where the
/// decoder left it instead of copying it).
pub struct LentPicture {
    /// The planes, valid until `release` runs (the `'static` is this type's promise, never
    /// handed out: [`LentPicture::picture`] shortens it to the borrow of `self`).
    view: Picture<'static>,
    /// Gives the memory back to its owner, in `drop`.
    release: Giver,
}

/// How a [`LentPicture`] gives its memory back.
enum Giver {
    /// Dropping an owner's guard.
    Guard(#[allow(dead_code)] Box<dyn Send + Sync>),
    /// Calling a C callback with its argument, once; nothing allocated (the C ABI lends two
    /// pictures per frame this way).
    Callback(
        unsafe extern "C" fn(*mut std::ffi::c_void),
        *mut std::ffi::c_void,
    ),
}

// SAFETY: `Giver::Callback`'s pointer is only passed back to its callback, which
// `LentPicture::with_callback`'s caller allows to run on any thread; the guard is Send + Sync.
unsafe impl Send for Giver {}
// SAFETY: a shared `&Giver` gives access to nothing (only the owner's drop uses it).
unsafe impl Sync for Giver {}

impl Drop for LentPicture {
    fn drop(&mut self) {
        if let Giver::Callback(f, opaque) = self.release {
            // SAFETY: called exactly once (this drop), as `with_callback`'s caller requires; no
            // borrow of the planes outlives `self`.
            unsafe { f(opaque) };
        }
        // A guard drops with the field, after this.
    }
}

impl LentPicture {
    /// Lends `picture`'s memory until `release` is dropped.
    ///
    /// # Safety
    /// Every plane `picture` borrows must stay valid and unchanged until `release` is dropped,
    /// whichever thread drops it.
    pub unsafe fn new(picture: Picture<'_>, release: Box<dyn Send + Sync>) -> Self {
        LentPicture {
            // SAFETY: the caller's promise (as for `with_callback`).
            view: unsafe { Self::extend(picture) },
            release: Giver::Guard(release),
        }
    }

    /// Lends `picture`'s memory until `release(opaque)` is called, which happens exactly once,
    /// when the lent picture is dropped.
    ///
    /// # Safety
    /// Every plane `picture` borrows must stay valid and unchanged until `release` is called,
    /// and `release(opaque)` must be safe to call once from whichever thread drops the picture.
    pub unsafe fn with_callback(
        picture: Picture<'_>,
        release: unsafe extern "C" fn(*mut std::ffi::c_void),
        opaque: *mut std::ffi::c_void,
    ) -> Self {
        LentPicture {
            // SAFETY: the caller's promise.
            view: unsafe { Self::extend(picture) },
            release: Giver::Callback(release, opaque),
        }
    }

    /// # Safety
    /// The planes must stay valid until the picture's release (see the constructors).
    unsafe fn extend(picture: Picture<'_>) -> Picture<'static> {
        // SAFETY: only the lifetime changes; the caller keeps the memory valid until the
        // release, which runs after every borrow of the `LentPicture` that holds it.
        unsafe { std::mem::transmute::<Picture<'_>, Picture<'static>>(picture) }
    }

    /// The lent picture, borrowed for as long as `self` is.
    pub fn picture(&self) -> &Picture<'_> {
        &self.view
    }

    /// Whether an [`OwnedPicture`] can read these planes in place instead of copying them:
    /// LSB-aligned samples and, if it keeps chroma, separate Cb and Cr planes (interleaved ones
    /// are split by the copy).
    fn readable_in_place(&self, chroma: bool) -> bool {
        self.view.luma_shift == 0
            && (!chroma || matches!(self.view.chroma, Some(Chroma::Planar(..))))
    }
}

impl std::fmt::Debug for LentPicture {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LentPicture")
            .field("format", &self.view.format)
            .finish_non_exhaustive()
    }
}

/// The planes of an owned picture the engine keeps: luma always, chroma (planar, de-interleaved)
/// only when a feature reads it. It holds its own copy of the samples, or a [`LentPicture`] read
/// in place ([`OwnedPicture::lend`]); readers go through [`OwnedPicture::luma_plane`] and
/// [`OwnedPicture::chroma_planes`], which see either.
#[derive(Debug)]
pub struct OwnedPicture {
    /// Luma (unused while a picture is lent).
    pub luma: OwnedPlane,
    /// Cb and Cr, when kept (unused while a picture is lent).
    pub chroma: Option<[OwnedPlane; 2]>,
    /// A picture read in place instead of `luma` and `chroma`, released when replaced.
    lent: Option<LentPicture>,
}

impl OwnedPicture {
    /// Zeroed planes for a format; chroma planes only if `chroma` (and the format has them), of
    /// libvmaf's chroma size: `w >> 1` (and `h >> 1` for 4:2:0), rounded down where FFmpeg's
    /// planes round up; the copy takes their top-left part, as libvmaf's filter does.
    pub fn new(f: PictureFormat, chroma: bool) -> Self {
        let (cw, ch) = f.layout.libvmaf_chroma_size(f.width, f.height);
        OwnedPicture {
            luma: OwnedPlane::new(f.width, f.height, f.bpc),
            chroma: (chroma && f.layout != ChromaLayout::Gray)
                .then(|| [0, 1].map(|_| OwnedPlane::new(cw, ch, f.bpc))),
            lent: None,
        }
    }

    /// Reads `p` in place until it is replaced (by another [`OwnedPicture::lend`], a copy or
    /// [`OwnedPicture::release_lent`]) if its planes allow ([`LentPicture`]: LSB-aligned, chroma
    /// planar where kept); otherwise copies it like [`OwnedPicture::copy_from`] and releases it
    /// at once. The picture's size and sample width must be this one's.
    pub fn lend(&mut self, p: LentPicture) -> Result<()> {
        self.lent = None;
        if !p.readable_in_place(self.chroma.is_some()) {
            return self.copy_from(p.picture());
        }
        // The checks a copy would make: luma of this size, chroma at least this size (libvmaf's
        // may be a row or column short of the frame's: the top-left part is read, as the copy
        // takes it).
        let v = &p.view;
        self.luma.check_source(&v.luma, true)?;
        if let (Some([u, _]), Some(Chroma::Planar(pu, pv))) = (&self.chroma, v.chroma) {
            u.check_source(&pu, false)?;
            u.check_source(&pv, false)?;
        }
        self.lent = Some(p);
        Ok(())
    }

    /// Releases a lent picture now (the owned planes, stale, become current again).
    pub fn release_lent(&mut self) {
        self.lent = None;
    }

    /// Borrows the luma plane: the lent picture's, or the owned copy.
    pub fn luma_plane(&self) -> Plane<'_> {
        match &self.lent {
            Some(l) => l.view.luma,
            None => self.luma.as_plane(),
        }
    }

    /// Copies `p`'s planes in (shifting samples down to LSB alignment). Fails if chroma is kept
    /// but `p` has none.
    pub fn copy_from(&mut self, p: &Picture<'_>) -> Result<()> {
        self.lent = None;
        self.luma.copy_from(&p.luma, p.luma_shift)?;
        let Some([u, v]) = &mut self.chroma else {
            return Ok(());
        };
        match p.chroma {
            Some(Chroma::Planar(pu, pv)) => {
                u.copy_part(&pu, p.luma_shift)?;
                v.copy_part(&pv, p.luma_shift)
            }
            Some(Chroma::Interleaved(uv)) => OwnedPlane::deinterleave(u, v, &uv, p.luma_shift),
            None => Err(Error::InvalidOption(
                "a feature of this run reads chroma, but the picture was given with luma only"
                    .into(),
            )),
        }
    }

    /// Borrows the chroma planes, if kept: the top-left parts of the lent picture's (checked by
    /// [`OwnedPicture::lend`]), or the owned copies.
    pub fn chroma_planes(&self) -> Option<[Plane<'_>; 2]> {
        let [u, v] = self.chroma.as_ref()?;
        match self.lent.as_ref().and_then(|l| l.view.chroma) {
            Some(Chroma::Planar(pu, pv)) => {
                let part = |q: Plane<'static>| Plane {
                    width: u.width,
                    height: u.height,
                    ..q
                };
                Some([part(pu), part(pv)])
            }
            _ => Some([u.as_plane(), v.as_plane()]),
        }
    }
}

/// An owned, tightly packed plane the engine copies frames into (reused, never reallocated
/// per frame).
#[derive(Debug, Clone)]
pub enum PlaneBuf {
    /// 8-bit samples, `width * height`.
    U8(Vec<u8>),
    /// 9–16 bit samples, `width * height`.
    U16(Vec<u16>),
}

/// An owned plane with its size.
#[derive(Debug, Clone)]
pub struct OwnedPlane {
    /// The samples, row-major, stride == width.
    pub buf: PlaneBuf,
    /// Width in samples.
    pub width: usize,
    /// Height in rows.
    pub height: usize,
}

impl OwnedPlane {
    /// A zeroed plane for a format.
    pub fn new(width: usize, height: usize, bpc: u8) -> Self {
        let n = width * height;
        let buf = if bpc > 8 {
            PlaneBuf::U16(vec![0; n])
        } else {
            PlaneBuf::U8(vec![0; n])
        };
        OwnedPlane { buf, width, height }
    }

    /// Copies `src` in (shifting samples right by `shift`), without reallocating.
    pub fn copy_from(&mut self, src: &Plane<'_>, shift: u8) -> Result<()> {
        self.check_source(src, true)?;
        self.copy_rows(src, shift);
        Ok(())
    }

    /// Checks that `src` can stand for this plane: of its size (`exact`) or larger (its
    /// top-left part is read), with samples of its width.
    fn check_source(&self, src: &Plane<'_>, exact: bool) -> Result<()> {
        if exact && (src.width != self.width || src.height != self.height) {
            return Err(Error::Mismatch(format!(
                "frame is {}x{}, expected {}x{}",
                src.width, src.height, self.width, self.height
            )));
        }
        if src.width < self.width || src.height < self.height {
            return Err(Error::Mismatch(format!(
                "plane is {}x{}, expected at least {}x{}",
                src.width, src.height, self.width, self.height
            )));
        }
        if matches!(src.samples, Samples::U16(_)) != matches!(self.buf, PlaneBuf::U16(_)) {
            return Err(Error::Mismatch(
                "frame sample size differs from the configured bit depth".into(),
            ));
        }
        Ok(())
    }

    /// Copies the top-left `width` x `height` samples of `src`, which may be larger.
    fn copy_part(&mut self, src: &Plane<'_>, shift: u8) -> Result<()> {
        self.check_source(src, false)?;
        self.copy_rows(src, shift);
        Ok(())
    }

    /// The copy of [`OwnedPlane::copy_part`], once [`OwnedPlane::check_source`] passed.
    fn copy_rows(&mut self, src: &Plane<'_>, shift: u8) {
        let w = self.width;
        match (&mut self.buf, src.samples) {
            (PlaneBuf::U8(dst), Samples::U8(s)) => {
                for (y, row) in dst.chunks_exact_mut(w).enumerate() {
                    row.copy_from_slice(&s[y * src.stride..y * src.stride + w]);
                }
            }
            (PlaneBuf::U16(dst), Samples::U16(s)) => {
                for (y, row) in dst.chunks_exact_mut(w).enumerate() {
                    let from = &s[y * src.stride..y * src.stride + w];
                    if shift == 0 {
                        row.copy_from_slice(from);
                    } else {
                        for (d, v) in row.iter_mut().zip(from) {
                            *d = v >> shift;
                        }
                    }
                }
            }
            _ => unreachable!("check_source compared the sample sizes"),
        }
    }

    /// Splits an interleaved CbCr plane into `u` and `v` (shifting samples right by `shift`).
    fn deinterleave(u: &mut Self, v: &mut Self, src: &Plane<'_>, shift: u8) -> Result<()> {
        let w = u.width;
        if src.width < 2 * w || src.height < u.height {
            return Err(Error::Mismatch(format!(
                "interleaved chroma is {}x{} samples, expected {}x{}",
                src.width,
                src.height,
                2 * w,
                u.height
            )));
        }
        match (&mut u.buf, &mut v.buf, src.samples) {
            (PlaneBuf::U8(du), PlaneBuf::U8(dv), Samples::U8(s)) => {
                for y in 0..u.height {
                    let row = &s[y * src.stride..y * src.stride + 2 * w];
                    for (x, pair) in row.chunks_exact(2).enumerate() {
                        du[y * w + x] = pair[0];
                        dv[y * w + x] = pair[1];
                    }
                }
            }
            (PlaneBuf::U16(du), PlaneBuf::U16(dv), Samples::U16(s)) => {
                for y in 0..u.height {
                    let row = &s[y * src.stride..y * src.stride + 2 * w];
                    for (x, pair) in row.chunks_exact(2).enumerate() {
                        du[y * w + x] = pair[0] >> shift;
                        dv[y * w + x] = pair[1] >> shift;
                    }
                }
            }
            _ => {
                return Err(Error::Mismatch(
                    "chroma sample size differs from the configured bit depth".into(),
                ))
            }
        }
        Ok(())
    }

    /// Borrows the plane.
    pub fn as_plane(&self) -> Plane<'_> {
        let samples = match &self.buf {
            PlaneBuf::U8(v) => Samples::U8(v),
            PlaneBuf::U16(v) => Samples::U16(v),
        };
        Plane {
            samples,
            width: self.width,
            height: self.height,
            stride: self.width,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plane_bounds_are_checked() {
        let d = vec![0u8; 10 * 3];
        assert!(Plane::new_u8(&d, 10, 3, 10).is_ok());
        assert!(Plane::new_u8(&d, 10, 4, 10).is_err());
        assert!(Plane::new_u8(&d, 11, 3, 10).is_err());
    }

    #[test]
    fn copy_honours_stride_and_shift() {
        let src: Vec<u16> = (0..40).map(|v| (v as u16) << 6).collect();
        let p = Plane::new_u16(&src, 3, 4, 10).unwrap();
        let mut o = OwnedPlane::new(3, 4, 10);
        o.copy_from(&p, 6).unwrap();
        let b = o.as_plane();
        assert_eq!(b.get(2, 3), 32);
        assert_eq!(b.get(0, 1), 10);
    }
}
