//! Bodies of the fuzz targets (`fuzz_targets/*.rs` call them; `tests/regressions.rs` replays the
//! saved inputs through them). Each one feeds hostile bytes to one of vmaf_rs's parsers or to the
//! C ABI and checks what must hold for any input: no panic, no unbounded allocation, and output
//! that stays well-formed. An `Err` from vmaf_rs is a correct answer to bad input.

use arbitrary::{Arbitrary, Unstructured};
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::io::Cursor;
use vmaf_rs::capi::*;
use vmaf_rs::model::{parse_feature_option, parse_model_option, Model, ModelSource};
use vmaf_rs::model::{pool, PoolStats};
use vmaf_rs::output::{write_log, LogData, LogFormat, LogParams};
use vmaf_rs::video::VideoReader;

/// The model loader: libvmaf JSON with its embedded libsvm text. A model that loads must predict
/// (any finite or non-finite feature values) without panicking, with each flag.
pub fn model_json(data: &[u8]) {
    let (text, feats) = match data.iter().position(|&b| b == 0) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &[][..]),
    };
    let Ok(text) = std::str::from_utf8(text) else {
        return;
    };
    let Ok(mut m) = Model::from_json_str(text, "fuzz") else {
        return;
    };
    let mut u = Unstructured::new(feats);
    let values: Vec<f64> = (0..m.features().len())
        .map(|_| f64::arbitrary(&mut u).unwrap_or(0.5))
        .collect();
    let _ = m.predict(&values);
    for flag in ["disable_clip", "enable_transform", "disable_transform"] {
        m.set_flag(flag, true).expect("known flag");
        let _ = m.predict(&values);
    }
}

/// Both option grammars (the filter's `model` and `feature` strings), then what a configure does
/// with what parsed: built-in models load and take their overloads.
pub fn options(data: &[u8]) {
    let Some((&which, text)) = data.split_first() else {
        return;
    };
    let text = String::from_utf8_lossy(text);
    if which & 1 == 0 {
        let Ok(specs) = parse_model_option(&text) else {
            return;
        };
        for spec in specs {
            // Model files are model_json's; only built-in versions load here.
            if matches!(spec.source, ModelSource::Version(_)) {
                let _ = spec.load();
            }
        }
    } else if let Ok(specs) = parse_feature_option(&text) {
        for s in specs {
            assert!(
                !s.name.is_empty(),
                "a feature without a name parsed: {text:?}"
            );
        }
    }
}

/// The y4m reader over a byte stream: header, FRAME lines and frames until the end or an error.
pub fn y4m(data: &[u8]) {
    let Ok(mut r) = VideoReader::y4m(Cursor::new(data), "fuzz.y4m") else {
        return;
    };
    let f = r.format;
    for _ in 0..64 {
        match r.next_frame() {
            Ok(Some(frame)) => {
                let bps = if f.bpc > 8 { 2 } else { 1 };
                let (cw, ch) = f.layout.chroma_size(f.width, f.height);
                let want = (f.width * f.height + 2 * cw * ch) * bps;
                assert_eq!(frame.len(), want, "short frame for {f}");
            }
            Ok(None) | Err(_) => return,
        }
    }
}

/// The log writers with hostile column and model names, versions and values: every format is
/// written, and JSON, XML and CSV must parse back with every name intact.
pub fn log_writers(data: &[u8]) {
    let mut u = Unstructured::new(data);
    let Ok(input) = LogInput::arbitrary(&mut u) else {
        return;
    };
    let LogInput {
        version,
        columns,
        frames,
        models,
        n_subsample,
        fps,
    } = input;
    if columns.is_empty() || columns.len() > 16 {
        return;
    }
    let rows: Vec<(u64, Vec<f64>)> = frames.into_iter().take(16).collect();
    let frames: Vec<(u64, &[f64])> = rows.iter().map(|(i, v)| (*i, v.as_slice())).collect();
    let pooled: Vec<(String, PoolStats)> = columns
        .iter()
        .map(|c| {
            (
                c.clone(),
                pool(rows.iter().filter_map(|r| r.1.first().copied())),
            )
        })
        .collect();
    let log = LogData {
        version: &version,
        fps,
        columns: &columns,
        frames: &frames,
        pooled: &pooled,
        aggregates: &[],
        params: LogParams {
            n_subsample,
            frames_sent: rows.len() as u64,
            models,
            width: 64,
            height: 64,
        },
        libvmaf_isa: None,
    };
    for fmt in [
        LogFormat::Xml,
        LogFormat::Json,
        LogFormat::Csv,
        LogFormat::Sub,
    ] {
        let mut out = Vec::new();
        if let Err(e) = write_log(&mut out, fmt, &log) {
            // Only XML refuses names, and only those that cannot be attribute names.
            assert!(
                fmt == LogFormat::Xml && !xml_names_ok(log.columns),
                "{fmt} log refused: {e}"
            );
            continue;
        }
        let text = String::from_utf8(out).expect("logs are UTF-8");
        match fmt {
            LogFormat::Json => check_json(&text, &log),
            LogFormat::Xml => check_xml(&text, &log),
            LogFormat::Csv => check_csv(&text, &log),
            LogFormat::Sub => {}
        }
    }
}

#[derive(Arbitrary, Debug)]
struct LogInput {
    version: String,
    columns: Vec<String>,
    frames: Vec<(u64, Vec<f64>)>,
    models: Vec<String>,
    n_subsample: u32,
    fps: f64,
}

fn check_json(text: &str, log: &LogData) {
    let v: serde_json::Value =
        serde_json::from_str(text).unwrap_or_else(|e| panic!("invalid JSON ({e}):\n{text}"));
    assert_eq!(v["version"].as_str(), Some(log.version), "version lost");
    let pooled = v["pooled_metrics"]
        .as_object()
        .expect("pooled_metrics object");
    for c in log.columns {
        assert!(pooled.contains_key(c), "column {c:?} lost in JSON");
    }
}

/// Columns usable as XML attribute names (an independent statement of the writer's rule).
fn xml_names_ok(columns: &[String]) -> bool {
    let name = |s: &str| {
        let b = s.as_bytes();
        !b.is_empty()
            && (b[0].is_ascii_alphabetic() || b[0] == b'_')
            && b.iter()
                .all(|&c| c.is_ascii_alphanumeric() || b"_-.".contains(&c))
    };
    let mut all: Vec<&str> = columns.iter().map(|c| c.as_str()).collect();
    all.push("frameNum");
    all.sort_unstable();
    all.iter().all(|c| name(c)) && all.windows(2).all(|w| w[0] != w[1])
}

fn check_xml(text: &str, log: &LogData) {
    let doc =
        roxmltree::Document::parse(text).unwrap_or_else(|e| panic!("invalid XML ({e}):\n{text}"));
    let root = doc.root_element();
    assert_eq!(
        root.attribute("version"),
        Some(xml_visible(log.version).as_str()),
        "version lost in XML"
    );
    let pooled = root
        .children()
        .find(|n| n.has_tag_name("pooled_metrics"))
        .expect("pooled_metrics element");
    let names: Vec<&str> = pooled
        .children()
        .filter_map(|n| n.attribute("name"))
        .collect();
    for c in log.columns {
        assert!(
            names.contains(&xml_visible(c).as_str()),
            "column {c:?} lost in XML: {names:?}"
        );
    }
}

/// What an XML parser reads back for a name: characters XML 1.0 cannot hold at all (most C0
/// controls) are written as U+FFFD, and attribute-value normalisation has nothing to undo
/// because tab, newline and carriage return are written as character references.
fn xml_visible(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            '\t' | '\n' | '\r' => c,
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => '\u{FFFD}',
            c => c,
        })
        .collect()
}

fn check_csv(text: &str, log: &LogData) {
    let mut r = csv::ReaderBuilder::new()
        .has_headers(true)
        .flexible(true)
        .from_reader(text.as_bytes());
    let header = r.headers().expect("CSV header").clone();
    assert_eq!(header.get(0), Some("Frame"), "CSV header: {header:?}");
    // libvmaf ends every field with a comma, so a row ends in one empty field.
    let mut names: Vec<&str> = header.iter().skip(1).collect();
    assert_eq!(
        names.pop(),
        Some(""),
        "CSV header without its trailing comma"
    );
    let want: Vec<&str> = log.columns.iter().map(|c| c.as_str()).collect();
    assert_eq!(names, want, "CSV header names");
    for rec in r.records() {
        let rec = rec.unwrap_or_else(|e| panic!("invalid CSV ({e}):\n{text}"));
        assert!(rec.len() <= header.len(), "CSV row longer than its header");
    }
}

/// One call of the C ABI, as a careless C caller might make it.
#[derive(Arbitrary, Debug)]
enum Call {
    New,
    Free,
    SetOption(OptKey, OptValue),
    SetOptionNull(bool),
    Configure {
        width: u8,
        height: u8,
        bpc: u8,
        layout: u8,
        huge: bool,
    },
    Send(PicSpec, PicSpec),
    SendNull(bool),
    Receive,
    ReceiveNull,
    Flush,
    Finish,
    PooledScore(u8),
    PooledScoreNull,
    FramesScored,
    LastError,
    NullContext(u8),
}

#[derive(Arbitrary, Debug)]
enum OptKey {
    Model,
    Feature,
    LogPath,
    LogFmt,
    Pool,
    NThreads,
    NSubsample,
    Backend,
    LibvmafIsa,
    Other(String),
}

#[derive(Arbitrary, Debug)]
enum OptValue {
    Text(String),
    /// A few values that reach deeper states than random text does.
    Known(u8),
}

/// A picture descriptor: the declared fields are fuzzed; the buffers always hold what the
/// declaration says (a caller that lies about its buffers is outside any C contract).
#[derive(Arbitrary, Debug)]
struct PicSpec {
    width: u8,
    height: u8,
    bpc: u8,
    wide: bool,
    shift: u8,
    layout: u8,
    memory: u8,
    interleaved: bool,
    extra_pitch: u8,
    null_plane: Option<u8>,
    seed: u8,
}

const KNOWN: &[&str] = &[
    "version=vmaf_v0.6.1",
    "version=vmaf_v0.6.1neg|version=vmaf_4k_v0.6.1:name=k",
    "version=vmaf_v0.6.1:disable_clip=true:enable_transform=true",
    "version=vmaf_v0.6.1:vif.vif_enhn_gain_limit=1.0:adm.adm_enhn_gain_limit=1.0",
    "name=adm|name=vif|name=motion",
    "name=motion:motion_force_zero=true",
    "json",
    "xml",
    "csv",
    "sub",
    "harmonic_mean",
    "0",
    "1",
    "2",
    "3",
    "cpu",
    "cuda",
    "c",
    "avx2",
    "avx512",
];

unsafe extern "C" fn log_cb(_opaque: *mut c_void, level: c_int, msg: *const c_char) {
    assert!(!msg.is_null(), "log callback given NULL");
    // SAFETY: the ABI promises a NUL-terminated line valid during the call.
    let m = unsafe { CStr::from_ptr(msg) }.to_bytes();
    assert!(m.ends_with(b"\n"), "log line without newline: {m:?}");
    assert!((16..=48).contains(&level), "log level {level}");
}

unsafe extern "C" fn release_cb(opaque: *mut c_void) {
    // SAFETY: every release_opaque below points at a live u32 counter.
    unsafe { *(opaque as *mut u32) += 1 };
}

/// A sequence of C ABI calls (at most 48), decoded from the input. Checks: no crash, every call
/// returns 0, a negative errno or (receive) `VMAF_RS_EOF`; `vmaf_rs_last_error` is always a
/// valid string; every host picture's release callback runs exactly once per send.
pub fn capi(data: &[u8]) {
    let mut u = Unstructured::new(data);
    let dir = std::env::temp_dir().join(format!("vmaf_rs_fuzz_capi_{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    let mut ctx: *mut VmafRsContext = std::ptr::null_mut();
    for _ in 0..48 {
        let Ok(call) = Call::arbitrary(&mut u) else {
            break;
        };
        // SAFETY: every call below passes either a context from vmaf_rs_new (or NULL) and
        // pointers to live, correctly sized memory (or NULL where the call is a NULL test).
        let rc = unsafe { one_call(&mut ctx, call, &dir) };
        assert!(
            rc == 0 || rc == VMAF_RS_EOF || (-200..0).contains(&rc),
            "return code {rc}"
        );
        // SAFETY: ctx is NULL or live.
        let e = unsafe { vmaf_rs_last_error(ctx) };
        assert!(!e.is_null(), "last_error returned NULL");
    }
    // SAFETY: ctx is NULL or from vmaf_rs_new.
    unsafe { vmaf_rs_free(&mut ctx) };
    assert!(ctx.is_null(), "free did not clear the handle");
}

unsafe fn one_call(ctx: &mut *mut VmafRsContext, call: Call, dir: &std::path::Path) -> c_int {
    let c = *ctx;
    // SAFETY (whole function): as promised by the caller.
    unsafe {
        match call {
            Call::New => {
                if c.is_null() {
                    vmaf_rs_new(ctx, Some(log_cb), std::ptr::null_mut())
                } else {
                    0
                }
            }
            Call::Free => {
                vmaf_rs_free(ctx);
                0
            }
            Call::SetOption(k, v) => {
                let key = match k {
                    OptKey::Model => "model".to_string(),
                    OptKey::Feature => "feature".into(),
                    OptKey::LogPath => "log_path".into(),
                    OptKey::LogFmt => "log_fmt".into(),
                    OptKey::Pool => "pool".into(),
                    OptKey::NThreads => "n_threads".into(),
                    OptKey::NSubsample => "n_subsample".into(),
                    OptKey::Backend => "backend".into(),
                    OptKey::LibvmafIsa => "libvmaf_isa".into(),
                    OptKey::Other(s) => s,
                };
                let value = match (&*key, v) {
                    // Logs go only into our own directory; a missing one must be an error.
                    ("log_path", OptValue::Known(i)) if i % 2 == 0 => {
                        dir.join("log").display().to_string()
                    }
                    ("log_path", _) => dir.join("missing/log").display().to_string(),
                    // Thread counts stay small: starting thousands of threads is slow, not wrong.
                    ("n_threads", OptValue::Known(i)) => (i % 3).to_string(),
                    ("n_threads", OptValue::Text(_)) => "x".into(),
                    (_, OptValue::Known(i)) => KNOWN[i as usize % KNOWN.len()].to_string(),
                    (_, OptValue::Text(s)) => s,
                };
                let (Ok(k), Ok(v)) = (CString::new(key), CString::new(value)) else {
                    return 0;
                };
                vmaf_rs_set_option(c, k.as_ptr(), v.as_ptr())
            }
            Call::SetOptionNull(key_null) => {
                let s = c"model";
                if key_null {
                    vmaf_rs_set_option(c, std::ptr::null(), s.as_ptr())
                } else {
                    vmaf_rs_set_option(c, s.as_ptr(), std::ptr::null())
                }
            }
            Call::Configure {
                width,
                height,
                bpc,
                layout,
                huge,
            } => {
                let scale = if huge { 1 << 9 } else { 1 };
                vmaf_rs_configure(
                    c,
                    width as u32 * scale,
                    height as u32 * scale,
                    bpc as u32 % 20,
                    layout as u32 % 6,
                )
            }
            Call::Send(r, d) => {
                let mut released = 0u32;
                let (rb, rp) = r.build(&mut released);
                let (db, dp) = d.build(&mut released);
                let rc = vmaf_rs_send(c, &rp, &dp);
                // Host pictures are released before send returns, whatever happened.
                let want = (rp.memory == VMAF_RS_MEMORY_HOST) as u32
                    + (dp.memory == VMAF_RS_MEMORY_HOST) as u32;
                if !c.is_null() && want == 2 {
                    assert_eq!(released, want, "host pictures not released once");
                }
                drop((rb, db));
                rc
            }
            Call::SendNull(which) => {
                let mut released = 0;
                let (_b, p) = PicSpec::default_for(&mut released);
                if which {
                    vmaf_rs_send(c, std::ptr::null(), &p)
                } else {
                    vmaf_rs_send(c, &p, std::ptr::null())
                }
            }
            Call::Receive => {
                let mut out = std::mem::zeroed::<VmafRsFrameScores>();
                let rc = vmaf_rs_receive(c, &mut out);
                if rc == 0 {
                    for i in 0..out.count as usize {
                        let n = *out.names.add(i);
                        assert!(!n.is_null(), "NULL column name");
                        let _ = CStr::from_ptr(n);
                        let _ = *out.values.add(i);
                    }
                }
                rc
            }
            Call::ReceiveNull => vmaf_rs_receive(c, std::ptr::null_mut()),
            Call::Flush => vmaf_rs_flush(c),
            Call::Finish => vmaf_rs_finish(c),
            Call::PooledScore(i) => {
                let mut s = 0.0;
                vmaf_rs_pooled_score(c, i as u32 % 4, &mut s)
            }
            Call::PooledScoreNull => vmaf_rs_pooled_score(c, 0, std::ptr::null_mut()),
            Call::FramesScored => {
                let _ = vmaf_rs_frames_scored(c);
                0
            }
            Call::LastError => {
                let e = vmaf_rs_last_error(c);
                let _ = CStr::from_ptr(e);
                0
            }
            Call::NullContext(i) => {
                let null = std::ptr::null_mut();
                match i % 5 {
                    0 => vmaf_rs_flush(null),
                    1 => vmaf_rs_finish(null),
                    2 => vmaf_rs_configure(null, 64, 64, 8, VMAF_RS_LAYOUT_YUV420),
                    3 => vmaf_rs_set_option(null, c"model".as_ptr(), c"x".as_ptr()),
                    _ => {
                        let mut out = std::mem::zeroed::<VmafRsFrameScores>();
                        vmaf_rs_receive(null, &mut out)
                    }
                }
            }
        }
    }
}

impl PicSpec {
    fn default_for(released: &mut u32) -> (Vec<Vec<u16>>, VmafRsPicture) {
        PicSpec {
            width: 32,
            height: 32,
            bpc: 8,
            wide: false,
            shift: 0,
            layout: VMAF_RS_LAYOUT_YUV420 as u8,
            memory: VMAF_RS_MEMORY_HOST as u8,
            interleaved: false,
            extra_pitch: 0,
            null_plane: None,
            seed: 0,
        }
        .build(released)
    }

    /// The buffers and the descriptor pointing into them. Host memory only is ever filled in:
    /// a CUDA descriptor gets a NULL-free garbage device address, which vmaf_rs must refuse
    /// before touching (this build has no CUDA).
    fn build(&self, released: &mut u32) -> (Vec<Vec<u16>>, VmafRsPicture) {
        // Sizes near the configured ones (16..80) plus the rare odd one, so that matching
        // formats are common enough for frames to be scored.
        let w = 16 + (self.width as usize % 65);
        let h = 16 + (self.height as usize % 65);
        // The declared sample size (1 or 2, or a bad one to be refused); buffers are sized by it.
        let declared = if self.wide { 2 } else { 1 } + (self.shift as u32 / 128);
        let bps = declared.min(2) as usize;
        let layout = self.layout as u32 % 5;
        let (cw, ch) = match layout {
            VMAF_RS_LAYOUT_YUV420 => (w.div_ceil(2), h.div_ceil(2)),
            VMAF_RS_LAYOUT_YUV422 => (w.div_ceil(2), h),
            _ => (w, h),
        };
        let dims = [(w, h), (cw, ch), (cw, ch)];
        let mut bufs = Vec::new();
        let mut pic = VmafRsPicture {
            data: [std::ptr::null(); 3],
            pitch: [0; 3],
            width: w as u32,
            height: h as u32,
            bpc: self.bpc as u32 % 20,
            bytes_per_sample: declared,
            shift: self.shift as u32 % 9,
            layout,
            memory: self.memory as u32 % 3,
            interleaved_chroma: self.interleaved as u32,
            release: Some(release_cb),
            release_opaque: released as *mut u32 as *mut c_void,
        };
        for (i, (pw, ph)) in dims.into_iter().enumerate() {
            // Interleaved chroma rows hold both components.
            let row = pw * bps * if i == 1 && self.interleaved { 2 } else { 1 };
            let pitch = row + self.extra_pitch as usize % 8 * bps;
            // u16 storage: 2-byte aligned, as 16-bit planes must be.
            let mut b = vec![0u16; (pitch * ph).div_ceil(2) + 8];
            for (j, x) in b.iter_mut().enumerate() {
                *x = (j as u16)
                    .wrapping_mul(0x3131)
                    .wrapping_add(self.seed as u16);
            }
            pic.pitch[i] = pitch as isize;
            pic.data[i] = if pic.memory == VMAF_RS_MEMORY_CUDA {
                0x1000 as *const c_void
            } else {
                b.as_ptr() as *const c_void
            };
            bufs.push(b);
        }
        if let Some(p) = self.null_plane {
            pic.data[p as usize % 3] = std::ptr::null();
        }
        (bufs, pic)
    }
}
