//! ciede's CUDA source run on the CPU: `kernels/ciede.cu` (with `kernels/ciede_math.cuh`)
//! compiled as host C++ by g++ without contraction (`tests/c/cuda_host_shim.h` stands in for
//! CUDA's vocabulary, `tests/c/ciede_on_host.cpp` drives it), against the Rust specification bit
//! for bit: the elementary functions on a million arguments, and the frame sum behind `ciede2000`
//! on generated pictures of every layout and depth. The device code's transcription is checked
//! here on any machine; the GPU itself is checked by tests/cuda.rs on a GPU machine.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use vmaf_rs::feature::ciede::math;
use vmaf_rs::model::FeatureSpec;
use vmaf_rs::picture::{ChromaLayout, Picture, PictureFormat, Plane};
use vmaf_rs::{Chroma, Engine, EngineConfig};

/// The harness binary, compiled once (g++ comes with scripts/deps.sh).
fn harness() -> &'static PathBuf {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
        let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("ciede_on_host");
        let o = Command::new("g++")
            .args(["-std=c++17", "-O2", "-ffp-contract=off", "-I"])
            .arg(root.join("kernels"))
            .arg("-I")
            .arg(root.join("tests/c"))
            .arg("-o")
            .arg(&out)
            .arg(root.join("tests/c/ciede_on_host.cpp"))
            .output()
            .expect("g++ (scripts/deps.sh installs it)");
        assert!(
            o.status.success(),
            "g++ could not compile the CUDA source as C++:\n{}",
            String::from_utf8_lossy(&o.stderr)
        );
        out
    })
}

/// Runs the harness with `input` on stdin; its stdout's lines as hexadecimal numbers.
fn run(args: &[&str], input: &str) -> Vec<u64> {
    let mut child = Command::new(harness())
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let text = input.to_string();
    let writer = std::thread::spawn(move || stdin.write_all(text.as_bytes()));
    let o = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    assert!(o.status.success(), "harness failed: {:?}", o.status);
    String::from_utf8(o.stdout)
        .unwrap()
        .lines()
        .map(|l| u64::from_str_radix(l, 16).unwrap())
        .collect()
}

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * ((self.next() >> 11) as f64 / (1u64 << 53) as f64)
    }
}

#[test]
fn math_functions_equal_the_rust_ones() {
    let mut g = Rng(0x2545f4914f6cdd1d);
    let n = 150_000;
    // (function id, argument generator)
    type Gen = fn(&mut Rng) -> (f64, f64);
    let gens: [(u32, &str, Gen); 9] = [
        (0, "exp", |g| (g.range(-745.0, 709.0), 0.0)),
        (0, "exp near 0", |g| (g.range(-125.0, 1.0), 0.0)),
        (1, "pow", |g| (g.range(1e-6, 1e3), g.range(-30.0, 30.0))),
        (1, "pow(x, 2.4)", |g| (g.range(0.0, 1.2), 2.4)),
        (2, "sin", |g| (g.range(-40.0, 40.0), 0.0)),
        (3, "cos", |g| (g.range(-40.0, 40.0), 0.0)),
        (4, "atan2", |g| {
            (g.range(-150.0, 150.0), g.range(-150.0, 150.0))
        }),
        (4, "atan2 near an axis", |g| {
            (g.range(-1e-3, 1e-3), g.range(-150.0, 150.0))
        }),
        (5, "powf(x, 7)", |g| (g.range(0.0, 150.0), 7.0)),
    ];
    // Special arguments too: zeros, signs, infinities, NaN, huge and tiny values.
    let specials = [
        0.0,
        -0.0,
        1.0,
        -1.0,
        2.0,
        0.5,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        1e300,
        -1e300,
        4.9e-324,
        7.0,
        -3.0,
    ];
    for (f, name, gen) in gens {
        let mut args: Vec<(f64, f64)> = (0..n).map(|_| gen(&mut g)).collect();
        for &x in &specials {
            for &y in &specials {
                args.push((x, y));
            }
        }
        let input: String = args
            .iter()
            .map(|&(x, y)| {
                if f == 5 {
                    format!("5 {:x} {:x}\n", (x as f32).to_bits(), (y as f32).to_bits())
                } else {
                    format!("{f} {:x} {:x}\n", x.to_bits(), y.to_bits())
                }
            })
            .collect();
        let got = run(&["math"], &input);
        assert_eq!(got.len(), args.len(), "{name}");
        for (&(x, y), &bits) in args.iter().zip(&got) {
            let want = match f {
                0 => math::exp(x).to_bits(),
                1 => math::pow(x, y).to_bits(),
                2 => math::sin(x).to_bits(),
                3 => math::cos(x).to_bits(),
                4 => math::atan2(x, y).to_bits(),
                _ => math::powf(x as f32, y as f32).to_bits() as u64,
            };
            // NaN payloads may differ; NaN must stay NaN.
            let nan = |b: u64| {
                if f == 5 {
                    f32::from_bits(b as u32).is_nan()
                } else {
                    f64::from_bits(b).is_nan()
                }
            };
            assert!(
                bits == want || (nan(bits) && nan(want)),
                "{name}({x:e}, {y:e}): CUDA source {bits:x}, Rust {want:x}"
            );
        }
        println!(
            "{name}: {} arguments, CUDA source == Rust bit for bit",
            args.len()
        );
    }
}

/// A generated sample plane (`w x h`, `bpc` bits).
fn plane(g: &mut Rng, w: usize, h: usize, bpc: u8) -> Vec<u16> {
    let max = (1u32 << bpc) - 1;
    // Smooth content plus noise, so every hue and lightness range is met.
    let phase = g.range(0.0, 6.0);
    (0..w * h)
        .map(|k| {
            let (x, y) = ((k % w) as f64, (k / w) as f64);
            let base = 0.5 + 0.45 * ((x * 0.11 + phase).sin() * (y * 0.07).cos());
            let noise = g.range(-0.08, 0.08);
            (((base + noise).clamp(0.0, 1.0)) * max as f64) as u16
        })
        .collect()
}

#[test]
fn frame_sums_equal_the_cpu_extractor() {
    let mut g = Rng(0x9e3779b97f4a7c15);
    let cases = [
        (ChromaLayout::Yuv420, 8, 161, 91),
        (ChromaLayout::Yuv420, 8, 97, 60),
        (ChromaLayout::Yuv420, 8, 130, 67),
        (ChromaLayout::Yuv422, 8, 101, 75),
        (ChromaLayout::Yuv444, 8, 64, 48),
        (ChromaLayout::Yuv420, 10, 131, 68),
        (ChromaLayout::Yuv422, 10, 65, 75),
        (ChromaLayout::Yuv444, 12, 97, 65),
        (ChromaLayout::Yuv420, 16, 67, 41),
    ];
    for (layout, bpc, w, h) in cases {
        let fmt = PictureFormat {
            width: w,
            height: h,
            bpc,
            layout,
        };
        let mut cfg = EngineConfig::new(fmt);
        cfg.features = vec![FeatureSpec {
            name: "ciede".into(),
            opts: Vec::new(),
        }];
        let mut eng = Engine::new(cfg).unwrap();
        let col = eng.columns().iter().position(|c| c == "ciede2000").unwrap();
        let (cw, ch) = layout.chroma_size(w, h);
        let (lw, lh) = layout.libvmaf_chroma_size(w, h);
        let mut sums = Vec::new();
        for _ in 0..2 {
            let pics: Vec<Vec<Vec<u16>>> = (0..2)
                .map(|_| {
                    vec![
                        plane(&mut g, w, h, bpc),
                        plane(&mut g, cw, ch, bpc),
                        plane(&mut g, cw, ch, bpc),
                    ]
                })
                .collect();
            let code = match layout {
                ChromaLayout::Yuv420 => 0,
                ChromaLayout::Yuv422 => 1,
                _ => 2,
            };
            let mut input = format!("{w} {h} {bpc} {code}\n");
            for p in &pics {
                input.extend(p[0].iter().map(|v| format!("{v} ")));
                for c in &p[1..] {
                    // libvmaf's size: the top-left lw x lh of each chroma plane.
                    for r in 0..lh {
                        input.extend(c[r * cw..r * cw + lw].iter().map(|v| format!("{v} ")));
                    }
                }
            }
            sums.push(f64::from_bits(run(&[], &input)[0]));
            let p8: Vec<Vec<u8>> = pics
                .iter()
                .flatten()
                .map(|p| p.iter().map(|&v| v as u8).collect())
                .collect();
            let p16: Vec<&Vec<u16>> = pics.iter().flatten().collect();
            let picture = |k: usize| -> Picture<'_> {
                let mk = |i: usize, pw: usize, ph: usize| {
                    if bpc == 8 {
                        Plane::new_u8(&p8[3 * k + i], pw, ph, pw).unwrap()
                    } else {
                        Plane::new_u16(p16[3 * k + i], pw, ph, pw).unwrap()
                    }
                };
                Picture::new(fmt, mk(0, w, h))
                    .unwrap()
                    .with_chroma(Chroma::Planar(mk(1, cw, ch), mk(2, cw, ch)))
                    .unwrap()
            };
            eng.send(&picture(0), &picture(1)).unwrap();
        }
        eng.flush().unwrap();
        for (t, sum) in sums.iter().enumerate() {
            let cpu = eng.receive().expect("a scored frame").values[col];
            // ciede's frame value from the sum (feature::ciede's score_of_sum).
            let gpu = 45.0 - 20.0 * (sum / ((w as u32) * (h as u32)) as f64).log10();
            assert_eq!(
                gpu.to_bits(),
                cpu.to_bits(),
                "{layout:?} {bpc}-bit {w}x{h} frame {t}: CUDA source {gpu}, CPU {cpu}"
            );
        }
        println!("{layout:?} {bpc}-bit {w}x{h}: 2 frames, CUDA source == CPU bit for bit");
    }
}
