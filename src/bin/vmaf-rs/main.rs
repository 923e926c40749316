//! `vmaf-rs`: libvmaf's `vmaf` command-line tool, over the vmaf_rs engine; with `--segment`
//! it scores one frame range of a title into a partial log, and `vmaf-rs merge` merges the
//! partial logs of a title exactly (docs/SEGMENTS.md).

use clap::Parser;
use std::path::PathBuf;
use std::process::ExitCode;
use vmaf_rs::output::LogFormat;
use vmaf_rs::picture::Samples;
use vmaf_rs::report::LogOptions;
use vmaf_rs::segment::{PartialLog, RunConfig, SegmentInfo};
use vmaf_rs::video::VideoReader;
use vmaf_rs::{Chroma, ChromaLayout, Engine, Error, Ladder, Picture, PictureFormat, Plane, Result};

/// Compute VMAF of a distorted video against its reference, with libvmaf-identical scores.
#[derive(Parser, Debug)]
#[command(
    name = "vmaf-rs",
    version,
    disable_help_flag = true,
    after_help = "vmaf-rs merge PART... -o LOG merges the partial logs of --segment runs into the \
                  log of the whole title (vmaf-rs merge --help, docs/SEGMENTS.md)."
)]
struct Args {
    /// Reference video (.y4m, or raw .yuv with --width/--height/--pixel_format/--bitdepth).
    #[arg(short = 'r', long)]
    reference: PathBuf,
    /// Distorted video (same format as the reference). Repeat it to score a ladder of
    /// renditions against one reference read once: each gets its own scores, printed with its
    /// path, and its own log (-o with `%v`, replaced by the rendition's number 0, 1, …).
    #[arg(short = 'd', long, required = true)]
    distorted: Vec<PathBuf>,
    /// Width of raw input.
    #[arg(short = 'w', long)]
    width: Option<usize>,
    /// Height of raw input.
    #[arg(short = 'h', long)]
    height: Option<usize>,
    /// Chroma layout of raw input: 420, 422, 444 (or 400).
    #[arg(short = 'p', long = "pixel_format")]
    pixel_format: Option<String>,
    /// Bit depth of raw input (8 to 16).
    #[arg(short = 'b', long)]
    bitdepth: Option<u8>,
    /// Model: `version=vmaf_v0.6.1` or `path=model.json`, with `:name=…`, `:disable_clip=true`,
    /// `:enable_transform=true`. Repeatable. Default: version=vmaf_v0.6.1.
    #[arg(short = 'm', long = "model")]
    models: Vec<String>,
    /// Extra feature to compute and log, e.g. `adm` or `name=vif:vif_enhn_gain_limit=1.0`.
    #[arg(long = "feature")]
    features: Vec<String>,
    /// Log file path.
    #[arg(short = 'o', long)]
    output: Option<PathBuf>,
    /// Write the log as XML (the default).
    #[arg(long, group = "fmt")]
    xml: bool,
    /// Write the log as JSON.
    #[arg(long, group = "fmt")]
    json: bool,
    /// Write the log as CSV.
    #[arg(long, group = "fmt")]
    csv: bool,
    /// Write the log as SUB (subtitles).
    #[arg(long, group = "fmt")]
    sub: bool,
    /// Worker threads (0: compute on the main thread).
    #[arg(long, default_value_t = 0)]
    threads: usize,
    /// Score every N-th frame.
    #[arg(long, default_value_t = 1)]
    subsample: u32,
    /// Stop after this many frames.
    #[arg(long = "frame_cnt")]
    frame_cnt: Option<u64>,
    /// Pool method for the printed score: mean, harmonic_mean, min, max.
    #[arg(long, default_value = "mean")]
    pool: String,
    /// Which libvmaf kernels' results to reproduce where they depend on the host CPU: `auto`
    /// (those libvmaf takes on this host: AVX-512 with AVX-512 F/CD/DQ/BW/VL, else AVX2 with
    /// AVX2, else C), or `c`, `avx2`, `avx512` on any host, for scores reproducible across a
    /// fleet. They differ only in ADM at some widths (docs/FIDELITY.md). The JSON log records the
    /// family computed.
    #[arg(
        long = "libvmaf_isa",
        default_value = "auto",
        value_name = "auto|c|avx2|avx512"
    )]
    libvmaf_isa: String,
    /// Where features are computed: `cpu` (also `auto`: the inputs are host frames) or `cuda`
    /// (frames uploaded to GPU 0 and scored by the CUDA kernels; features without one run on the
    /// CPU from downloaded planes). Needs a build with the `cuda` feature.
    #[arg(long, default_value = "auto", value_name = "auto|cpu|cuda")]
    backend: String,
    /// Score only the title's frames [A, B) (`A:B`, or `A:` to the end of the input) and write
    /// a partial log (JSON) to -o for `vmaf-rs merge`. The inputs may start before A
    /// (--input_start): the frames the features read before A are taken as context (at most
    /// two), earlier ones are skipped.
    #[arg(long, value_name = "A:B")]
    segment: Option<String>,
    /// With --segment: the title index of the inputs' first frame (inputs decoded from frame S
    /// of the title on).
    #[arg(long = "input_start", default_value_t = 0, value_name = "S")]
    input_start: u64,
    /// With --segment: the title's frame count, recorded so the merge checks the parts reach it.
    #[arg(long = "title_frames", value_name = "N")]
    title_frames: Option<u64>,
    /// Write the log's fps as 0 (the one measured field), so that the log depends on the inputs
    /// only: two runs, or a merge of segments and a single run, give byte-identical logs.
    #[arg(long)]
    reproducible: bool,
    /// No progress, no score on stdout.
    #[arg(short = 'q', long)]
    quiet: bool,
    /// Print the configuration (models, libvmaf kernel family) to stderr.
    #[arg(short = 'v', long)]
    verbose: bool,
    /// Print help.
    #[arg(long, action = clap::ArgAction::Help)]
    help: Option<bool>,
}

/// `vmaf-rs merge`: merges the partial logs of a title's segments into the log a single run
/// writes (per-frame values, temporal features, model scores and pooling recomputed across the
/// seams).
#[derive(Parser, Debug)]
#[command(name = "vmaf-rs merge", version)]
struct MergeArgs {
    /// Partial logs written by `vmaf-rs --segment A:B -o part.json`, in any order; together
    /// they must tile the title.
    #[arg(required = true, value_name = "PART")]
    parts: Vec<PathBuf>,
    /// Log file path.
    #[arg(short = 'o', long)]
    output: Option<PathBuf>,
    /// Write the log as XML (the default).
    #[arg(long, group = "fmt")]
    xml: bool,
    /// Write the log as JSON.
    #[arg(long, group = "fmt")]
    json: bool,
    /// Write the log as CSV.
    #[arg(long, group = "fmt")]
    csv: bool,
    /// Write the log as SUB (subtitles).
    #[arg(long, group = "fmt")]
    sub: bool,
    /// Write the log's fps as 0, as `vmaf-rs --reproducible` does.
    #[arg(long)]
    reproducible: bool,
    /// No score on stdout.
    #[arg(short = 'q', long)]
    quiet: bool,
}

/// The log format the flags choose (XML by default, as libvmaf's tool).
fn log_format(json: bool, csv: bool, sub: bool) -> LogFormat {
    if json {
        LogFormat::Json
    } else if csv {
        LogFormat::Csv
    } else if sub {
        LogFormat::Sub
    } else {
        LogFormat::Xml
    }
}

/// Prints every model's pooled score, as libvmaf's tool does.
fn print_scores(engine: &Engine) {
    for (i, name) in engine.model_names().iter().enumerate() {
        if let Some(s) = engine.pooled_model_score(i) {
            println!("{name}: {s:.6}");
        }
    }
}

fn open(path: &std::path::Path, args: &Args) -> Result<VideoReader> {
    let is_y4m = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("y4m"));
    if is_y4m {
        let reader = VideoReader::open_y4m(path)?;
        for w in &reader.warnings {
            eprintln!("vmaf-rs: warning: {w}");
        }
        return Ok(reader);
    }
    let (Some(width), Some(height), Some(pf), Some(bpc)) = (
        args.width,
        args.height,
        args.pixel_format.as_deref(),
        args.bitdepth,
    ) else {
        return Err(Error::InvalidOption(format!(
            "{} is not .y4m: raw input needs --width, --height, --pixel_format and --bitdepth",
            path.display()
        )));
    };
    let layout = ChromaLayout::parse(pf).ok_or_else(|| {
        Error::InvalidOption(format!(
            "--pixel_format {pf}: expected 420, 422, 444 or 400"
        ))
    })?;
    VideoReader::open_raw(
        path,
        PictureFormat {
            width,
            height,
            bpc,
            layout,
        },
    )
}

/// A picture over one frame's bytes (planar Y, Cb, Cr), with its chroma planes only if
/// `chroma` (the engine reads them); 16-bit samples of the planes used are converted from
/// little-endian into `wide` first.
fn picture<'a>(
    fmt: PictureFormat,
    bytes: &'a [u8],
    wide: &'a mut Vec<u16>,
    chroma: bool,
) -> Result<Picture<'a>> {
    let (w, h) = (fmt.width, fmt.height);
    let (cw, ch) = fmt.layout.chroma_size(w, h);
    let chroma = chroma && cw > 0;
    let samples = w * h + if chroma { 2 * cw * ch } else { 0 };
    let plane = |s: Samples<'a>, at: usize, pw: usize, ph: usize| match s {
        Samples::U8(b) => Plane::new_u8(&b[at..at + pw * ph], pw, ph, pw),
        Samples::U16(b) => Plane::new_u16(&b[at..at + pw * ph], pw, ph, pw),
    };
    let all = if fmt.bpc > 8 {
        wide.clear();
        wide.extend(
            bytes[..2 * samples]
                .chunks_exact(2)
                .map(|c| u16::from_le_bytes([c[0], c[1]])),
        );
        Samples::U16(wide)
    } else {
        Samples::U8(bytes)
    };
    let pic = Picture::new(fmt, plane(all, 0, w, h)?)?;
    if !chroma {
        return Ok(pic);
    }
    let (u, v) = (
        plane(all, w * h, cw, ch)?,
        plane(all, w * h + cw * ch, cw, ch)?,
    );
    pic.with_chroma(Chroma::Planar(u, v))
}

/// Opens the reference and every distorted input, checking they share one format.
fn open_inputs(args: &Args) -> Result<(VideoReader, Vec<VideoReader>)> {
    let r = open(&args.reference, args)?;
    let mut ds = Vec::new();
    for path in &args.distorted {
        let d = open(path, args)?;
        if r.format != d.format {
            return Err(Error::Mismatch(format!(
                "reference {} is {}, distorted {} is {}; convert one of them first",
                args.reference.display(),
                r.format,
                path.display(),
                d.format
            )));
        }
        ds.push(d);
    }
    Ok((r, ds))
}

/// The engine configuration of the options (also what the merge rebuilds, [`RunConfig`]).
fn run_config(args: &Args, format: PictureFormat) -> RunConfig {
    RunConfig {
        width: format.width,
        height: format.height,
        bitdepth: format.bpc,
        pixel_format: format.layout.as_str().to_string(),
        models: args.models.clone(),
        features: args.features.clone(),
        n_subsample: args.subsample,
        pool: args.pool.clone(),
        libvmaf_isa: args.libvmaf_isa.clone(),
    }
}

/// A spinner of frames scored, hidden with -q.
fn progress(quiet: bool) -> indicatif::ProgressBar {
    if quiet {
        return indicatif::ProgressBar::hidden();
    }
    let b = indicatif::ProgressBar::new_spinner();
    b.set_style(
        indicatif::ProgressStyle::with_template("{spinner} {pos} frames {per_sec} {elapsed}")
            .expect("valid template"),
    );
    b
}

/// The message for inputs of different lengths.
fn length_mismatch(short: &std::path::Path, long: &std::path::Path, n: u64) -> Error {
    Error::Mismatch(format!(
        "{} ends after {n} frames but {} has more; score equal-length inputs or use --frame_cnt",
        short.display(),
        long.display()
    ))
}

fn run(args: &Args) -> Result<()> {
    if args.distorted.len() > 1 {
        return run_ladder(args);
    }
    let (mut r, mut ds) = open_inputs(args)?;
    let mut d = ds.pop().expect("one distorted input");
    let distorted = &args.distorted[0];
    // The merge rebuilds the engine from these options (RunConfig), so the CLI does too.
    let run_cfg = run_config(args, r.format);
    let mut cfg = run_cfg.engine_config()?;
    cfg.n_threads = args.threads;
    cfg.backend = args.backend.parse()?;
    let fmt = log_format(args.json, args.csv, args.sub);
    let segment = args
        .segment
        .as_deref()
        .map(|t| vmaf_rs::segment::parse_range("--segment", t))
        .transpose()?;
    if segment.is_some() {
        if args.output.is_none() {
            return Err(Error::InvalidOption(
                "--segment writes a partial log: give its path with -o part.json".into(),
            ));
        }
        if args.xml || args.csv || args.sub || args.json || args.frame_cnt.is_some() {
            return Err(Error::InvalidOption(
                "--segment writes a partial log (JSON): the log format is chosen at `vmaf-rs \
                 merge`, and the frames by --segment A:B, not --frame_cnt"
                    .into(),
            ));
        }
    } else if args.input_start != 0 || args.title_frames.is_some() {
        return Err(Error::InvalidOption(
            "--input_start and --title_frames describe a segment: use them with --segment A:B"
                .into(),
        ));
    }
    // Fail on an unwritable log before spending time on the video; the log goes to a temporary
    // file beside it, renamed over it only once complete, so a failed run destroys nothing.
    let log_file = match &args.output {
        Some(p) => Some(LogFile::create(p, &[&args.reference, distorted])?),
        None => None,
    };

    let mut engine = Engine::new(cfg)?;
    for w in engine.warnings() {
        eprintln!("vmaf-rs: warning: {w}");
    }
    // With --segment: the title frames [skip_to, a) are context, [a, end) are scored.
    let (a, end) = segment.unwrap_or((0, None));
    let skip_to = a
        .saturating_sub(engine.context_frames())
        .max(args.input_start);
    if segment.is_some() {
        if args.input_start > a {
            return Err(Error::InvalidOption(format!(
                "--input_start {}: the inputs start after the segment's first frame {a}",
                args.input_start
            )));
        }
        engine.begin_segment(skip_to)?;
    }
    if args.verbose {
        eprintln!(
            "vmaf-rs: {}, models: {}, {}",
            r.format,
            engine.model_names().join(", "),
            vmaf_rs::report::isa_line(&engine)
        );
    }
    let bar = progress(args.quiet);
    let (mut wr, mut wd) = (Vec::new(), Vec::new());
    let (rf, df) = (r.format, d.format);
    let chroma = engine.reads_chroma();
    let mut scores = vmaf_rs::FrameScores::default();
    let mut n = 0u64;
    // Title index of the next input frame.
    let mut title = args.input_start;
    let mut input_ended = false;
    loop {
        if args.frame_cnt.is_some_and(|c| n >= c) || end.is_some_and(|e| title >= e) {
            break;
        }
        // After the first frame (which shows the inputs deliver what their headers claim
        // before the engine allocates for them), frames are read straight into the engine's
        // picture buffers: no copy.
        if n > 0 && title >= skip_to && title >= a && engine.fills_pictures() {
            let sent = engine.send_filled(|pr, pd| match (r.read_into(pr)?, d.read_into(pd)?) {
                (true, true) => Ok(true),
                (false, false) => Ok(false),
                (false, _) => Err(length_mismatch(&args.reference, distorted, n)),
                (_, false) => Err(length_mismatch(distorted, &args.reference, n)),
            })?;
            if !sent {
                input_ended = true;
                break;
            }
            title += 1;
            while engine.receive_into(&mut scores) {}
            n += 1;
            continue;
        }
        let (fr, fd) = (r.next_frame()?, d.next_frame()?);
        let (fr, fd) = match (fr, fd) {
            (Some(a), Some(b)) => (a, b),
            (None, None) => {
                input_ended = true;
                break;
            }
            (None, _) => return Err(length_mismatch(&args.reference, distorted, n)),
            (_, None) => return Err(length_mismatch(distorted, &args.reference, n)),
        };
        title += 1;
        if title - 1 < skip_to {
            continue;
        }
        let pr = picture(rf, fr, &mut wr, chroma)?;
        let pd = picture(df, fd, &mut wd, chroma)?;
        if title - 1 < a {
            engine.send_context(&pr, &pd)?;
            continue;
        }
        engine.send(&pr, &pd)?;
        if let Some(p) = engine.take_placement().filter(|_| args.verbose) {
            eprintln!("{p}");
        }
        while engine.receive_into(&mut scores) {}
        n += 1;
        bar.set_position(n);
    }
    engine.flush()?;
    bar.finish_and_clear();
    if n == 0 {
        return Err(Error::Unsupported(if segment.is_some() {
            format!("the inputs end at title frame {title}, before the segment's first frame {a}")
        } else {
            "the inputs hold no frames".into()
        }));
    }
    if segment.is_some() {
        let info = SegmentInfo {
            start: a,
            context_start: skip_to,
            title_frames: args.title_frames,
            // Without an end, the segment runs to the end of the title.
            input_ended: input_ended || end.is_none(),
        };
        let part = PartialLog::from_engine(&engine, &run_cfg, info)?;
        if !args.quiet {
            println!(
                "segment [{}, {}): {} frames, context [{}, {})",
                part.range[0],
                part.range[1],
                part.frames.len(),
                part.context[0],
                part.context[1]
            );
        }
        if let Some(f) = log_file {
            f.write(|w| part.write(w))?;
        }
        return Ok(());
    }
    // Scores first, as the filter does: a log that cannot be written does not swallow them.
    if !args.quiet {
        print_scores(&engine);
    }
    let opts = LogOptions {
        reproducible: args.reproducible,
    };
    if let Some(f) = log_file {
        f.write(|w| vmaf_rs::report::write_log_with(&engine, fmt, opts, w))?;
    }
    Ok(())
}

/// Several `-d`: one reference read once, scored against every rendition ([`Ladder`]).
fn run_ladder(args: &Args) -> Result<()> {
    if args.segment.is_some() || args.input_start != 0 || args.title_frames.is_some() {
        return Err(Error::InvalidOption(
            "--segment scores one distorted input: give a single -d".into(),
        ));
    }
    let (mut r, mut ds) = open_inputs(args)?;
    let mut cfg = run_config(args, r.format).engine_config()?;
    cfg.n_threads = args.threads;
    cfg.backend = args.backend.parse()?;
    let fmt = log_format(args.json, args.csv, args.sub);
    // One log per rendition: the path's `%v` names it. Checked before the video is read.
    let mut logs = Vec::new();
    if let Some(p) = &args.output {
        let n = args.distorted.len();
        for (i, d) in args.distorted.iter().enumerate() {
            let path = vmaf_rs::ladder::rendition_log_path(p, "-o ", n, i)?;
            logs.push(LogFile::create(&path, &[&args.reference, d])?);
        }
    }
    let mut ladder = Ladder::new(cfg, args.distorted.len())?;
    for w in ladder.engine(0).warnings() {
        eprintln!("vmaf-rs: warning: {w}");
    }
    if args.verbose {
        eprintln!(
            "vmaf-rs: {}, {} renditions, models: {}, {}",
            r.format,
            ladder.renditions(),
            ladder.engine(0).model_names().join(", "),
            vmaf_rs::report::isa_line(ladder.engine(0))
        );
    }
    let bar = progress(args.quiet);
    let fmt_in = r.format;
    let chroma = ladder.engine(0).reads_chroma();
    let (mut wr, mut wd) = (Vec::new(), vec![Vec::new(); ds.len()]);
    let mut scores = vmaf_rs::FrameScores::default();
    let mut n = 0u64;
    while args.frame_cnt.is_none_or(|c| n < c) {
        // After the first frame (which shows the inputs deliver what their headers claim before
        // the engines allocate for them), frames are read straight into the pictures the
        // engines keep: no copy.
        if n > 0 {
            let sent = ladder.send_filled(
                |pr| r.read_into(pr),
                |i, pd| match ds[i].read_into(pd)? {
                    true => Ok(()),
                    false => Err(length_mismatch(&args.distorted[i], &args.reference, n)),
                },
            )?;
            if !sent {
                // The reference ended: so must every rendition.
                for (d, path) in ds.iter_mut().zip(&args.distorted) {
                    if d.next_frame()?.is_some() {
                        return Err(length_mismatch(&args.reference, path, n));
                    }
                }
                break;
            }
            for i in 0..ladder.renditions() {
                while ladder.receive_into(i, &mut scores) {}
            }
            n += 1;
            bar.set_position(n);
            continue;
        }
        let fr = r.next_frame()?;
        let mut frames = Vec::with_capacity(ds.len());
        for (d, path) in ds.iter_mut().zip(&args.distorted) {
            match (&fr, d.next_frame()?) {
                (Some(_), Some(f)) => frames.push(f),
                (None, None) => {}
                (None, Some(_)) => return Err(length_mismatch(&args.reference, path, n)),
                (Some(_), None) => return Err(length_mismatch(path, &args.reference, n)),
            }
        }
        let Some(fr) = fr else { break };
        let pr = picture(fmt_in, fr, &mut wr, chroma)?;
        let pds = frames
            .iter()
            .zip(wd.iter_mut())
            .map(|(f, w)| picture(fmt_in, f, w, chroma))
            // On the stack for up to 8 renditions: nothing allocated per frame.
            .collect::<Result<smallvec::SmallVec<[_; 8]>>>()?;
        ladder.send(&pr, &pds)?;
        for i in 0..ladder.renditions() {
            while ladder.receive_into(i, &mut scores) {}
        }
        n += 1;
        bar.set_position(n);
    }
    ladder.flush()?;
    bar.finish_and_clear();
    if n == 0 {
        return Err(Error::Unsupported("the inputs hold no frames".into()));
    }
    if !args.quiet {
        for (e, path) in ladder.engines().iter().zip(&args.distorted) {
            for (i, name) in e.model_names().iter().enumerate() {
                if let Some(s) = e.pooled_model_score(i) {
                    println!("{}: {name}: {s:.6}", path.display());
                }
            }
        }
    }
    let opts = LogOptions {
        reproducible: args.reproducible,
    };
    for (f, e) in logs.into_iter().zip(ladder.engines()) {
        f.write(|w| vmaf_rs::report::write_log_with(e, fmt, opts, w))?;
    }
    Ok(())
}

/// `vmaf-rs merge`.
fn merge(args: &MergeArgs) -> Result<()> {
    let inputs: Vec<&PathBuf> = args.parts.iter().collect();
    let log_file = match &args.output {
        Some(p) => Some(LogFile::create(p, &inputs)?),
        None => None,
    };
    let mut parts = Vec::new();
    for p in &args.parts {
        parts.push((p.display().to_string(), PartialLog::read(p)?));
    }
    let engine = vmaf_rs::segment::merge(&parts)?;
    if !args.quiet {
        print_scores(&engine);
    }
    let fmt = log_format(args.json, args.csv, args.sub);
    let opts = LogOptions {
        reproducible: args.reproducible,
    };
    if let Some(f) = log_file {
        f.write(|w| vmaf_rs::report::write_log_with(&engine, fmt, opts, w))?;
    }
    Ok(())
}

/// The process's file-mode creation mask (Linux `/proc/self/status`; 022 if unreadable), so a
/// new log gets the permissions `File::create` would give it, not the temporary file's 0600.
fn umask() -> u32 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            let l = s.lines().find(|l| l.starts_with("Umask:"))?;
            u32::from_str_radix(l["Umask:".len()..].trim(), 8).ok()
        })
        .unwrap_or(0o022)
}

/// The log being written: for a regular file (or a new one), a temporary file in the log's
/// directory, renamed to the log's path when complete (and removed if the run fails); for
/// anything else (`/dev/stdout`, a pipe), the path itself, opened before scoring.
enum LogFile {
    Staged {
        path: PathBuf,
        tmp: tempfile::NamedTempFile,
        mode: u32,
    },
    Direct {
        path: PathBuf,
        file: std::fs::File,
    },
}

impl LogFile {
    /// Checks `path` is not one of `inputs` and that it can be written.
    fn create(path: &std::path::Path, inputs: &[&PathBuf]) -> Result<Self> {
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        let err = |e| Error::io(format!("cannot write log {}", path.display()), e);
        let mut mode = 0o666 & !umask();
        if let Ok(out) = std::fs::metadata(path) {
            for i in inputs {
                if let Ok(m) = std::fs::metadata(i) {
                    if (m.dev(), m.ino()) == (out.dev(), out.ino()) {
                        return Err(Error::InvalidOption(format!(
                            "-o {} is the input {}: refusing to overwrite a video with a log",
                            path.display(),
                            i.display()
                        )));
                    }
                }
            }
            if out.is_dir() {
                return Err(Error::InvalidOption(format!(
                    "cannot write log {}: it is a directory",
                    path.display()
                )));
            }
            if !out.is_file() {
                let file = std::fs::OpenOptions::new()
                    .write(true)
                    .open(path)
                    .map_err(err)?;
                return Ok(LogFile::Direct {
                    path: path.to_path_buf(),
                    file,
                });
            }
            mode = out.permissions().mode() & 0o7777;
        }
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => std::path::Path::new("."),
        };
        let tmp = tempfile::Builder::new()
            .prefix(".vmaf-rs-log-")
            .tempfile_in(dir)
            .map_err(err)?;
        Ok(LogFile::Staged {
            path: path.to_path_buf(),
            tmp,
            mode,
        })
    }

    /// Writes the log with `f`, then puts it in place.
    fn write(self, f: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>) -> Result<()> {
        use std::io::Write;
        use std::os::unix::fs::PermissionsExt;
        let (path, mut file, staged) = match self {
            LogFile::Staged { path, tmp, mode } => {
                let (file, tmp_path) = tmp.into_parts();
                (path, file, Some((tmp_path, mode)))
            }
            LogFile::Direct { path, file } => (path, file, None),
        };
        let err = |e| Error::io(format!("cannot write log {}", path.display()), e);
        let mut w = std::io::BufWriter::new(&mut file);
        f(&mut w).map_err(err)?;
        w.flush().map_err(err)?;
        drop(w);
        if let Some((tmp_path, mode)) = staged {
            file.set_permissions(std::fs::Permissions::from_mode(mode))
                .map_err(err)?;
            file.sync_all().map_err(err)?;
            tmp_path.persist(&path).map_err(|e| err(e.error))?;
        }
        Ok(())
    }
}

fn main() -> ExitCode {
    let argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let result = if argv.get(1).is_some_and(|a| a == "merge") {
        let rest = std::iter::once("vmaf-rs merge".into()).chain(argv[2..].iter().cloned());
        merge(&MergeArgs::parse_from(rest))
    } else {
        run(&Args::parse())
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("vmaf-rs: {e}");
            ExitCode::FAILURE
        }
    }
}
