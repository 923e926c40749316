//! CUDA backend tests: GPU per-frame values must equal the CPU extractors' bit for bit, through the
//! whole engine (CPU `send` vs CUDA `push_spatial`, then models), on 8-bit, 10-bit, MSB-aligned
//! 10-bit, 12-bit, odd and tiny sizes, pitch > width and coded-height padding; plus the lifecycle
//! (no GPU memory leak over 50 create/score/drop cycles, borrowed context intact).
//!
//! Each test plays FFmpeg's role: it creates its own context (cuCtxCreate) and stream, uploads
//! pictures and hands the scorer borrowed device planes. Without a GPU or libcuda the tests print
//! why and pass ("skipped: ..."), except under `VMAF_RS_REQUIRE_GPU=1`, where they fail (as they
//! do when the crate was built without the `cuda` feature). Throughput: `cargo test --release --features cuda --test cuda
//! -- --ignored --nocapture bench`.

#[cfg(not(feature = "cuda"))]
#[test]
fn stub_reports_built_without_cuda() {
    use vmaf_rs::picture::{ChromaLayout, PictureFormat};
    let f = PictureFormat {
        width: 64,
        height: 64,
        bpc: 8,
        layout: ChromaLayout::Yuv420,
    };
    let e =
        vmaf_rs::cuda::CudaScorer::new(std::ptr::null_mut(), std::ptr::null_mut(), f, 0, &[], 0, 1)
            .unwrap_err();
    assert!(e.to_string().contains("built without CUDA"), "{e}");
    const { assert!(!vmaf_rs::cuda::AVAILABLE) };
    assert!(
        std::env::var("VMAF_RS_REQUIRE_GPU").as_deref() != Ok("1"),
        "VMAF_RS_REQUIRE_GPU=1 but these tests were built without the cuda feature \
         (cargo test --features cuda --test cuda)"
    );
}

/// Prints why a GPU test skips; fails instead under `VMAF_RS_REQUIRE_GPU=1`.
#[cfg(feature = "cuda")]
fn skip_because(why: &str) {
    assert!(
        std::env::var("VMAF_RS_REQUIRE_GPU").as_deref() != Ok("1"),
        "VMAF_RS_REQUIRE_GPU=1 but: {why}"
    );
    eprintln!("skipped: {why}");
}

#[cfg(feature = "cuda")]
mod gpu {
    use cudarc::driver::sys;
    use std::ffi::c_void;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{Arc, Mutex};
    use std::time::Instant;
    use vmaf_rs::cuda::{CudaFrame, CudaScorer};
    use vmaf_rs::model::FeatureSpec;
    use vmaf_rs::picture::{ChromaLayout, Picture, PictureFormat, Plane};
    use vmaf_rs::{Engine, EngineConfig, LibvmafIsa, LibvmafIsaMode};

    /// Tests share one GPU; run them one at a time (memory accounting needs a quiet device).
    static SERIAL: Mutex<()> = Mutex::new(());

    fn ck(r: sys::CUresult, what: &str) {
        assert_eq!(r, sys::CUresult::CUDA_SUCCESS, "{what}");
    }

    /// FFmpeg's side: a context made with cuCtxCreate and a stream in it.
    struct Gpu {
        ctx: sys::CUcontext,
        stream: sys::CUstream,
    }

    impl Gpu {
        /// `None` (after printing why) when there is no usable GPU.
        fn new(null_stream: bool) -> Option<Gpu> {
            if let Err(e) = vmaf_rs::cuda::probe_driver() {
                super::skip_because(&e.to_string());
                return None;
            }
            let mut n = 0;
            // SAFETY: the driver is initialised (probe_driver); valid out-pointer.
            let r = unsafe { sys::cuDeviceGetCount(&mut n) };
            if r != sys::CUresult::CUDA_SUCCESS || n == 0 {
                super::skip_because(&format!("no CUDA device ({r:?}, {n} devices)"));
                return None;
            }
            let mut dev = 0;
            // SAFETY: valid out-pointer, device 0 exists.
            ck(unsafe { sys::cuDeviceGet(&mut dev, 0) }, "cuDeviceGet");
            let mut ctx = std::ptr::null_mut();
            // SAFETY: valid out-pointer and device; the new context becomes current here.
            ck(
                unsafe { sys::cuCtxCreate_v2(&mut ctx, 0, dev) },
                "cuCtxCreate",
            );
            let mut stream = std::ptr::null_mut();
            if !null_stream {
                // SAFETY: a context is current; valid out-pointer.
                ck(
                    unsafe { sys::cuStreamCreate(&mut stream, 0) },
                    "cuStreamCreate",
                );
            }
            Some(Gpu { ctx, stream })
        }

        fn mem_free(&self) -> usize {
            self.current();
            vmaf_rs::cuda::device_memory_info().expect("cuMemGetInfo").0
        }

        /// Makes our context current on this thread (tests may move between threads).
        fn current(&self) {
            // SAFETY: the context is alive until Drop.
            ck(unsafe { sys::cuCtxSetCurrent(self.ctx) }, "cuCtxSetCurrent");
        }
    }

    impl Drop for Gpu {
        fn drop(&mut self) {
            self.current();
            if !self.stream.is_null() {
                // SAFETY: our stream, no work pending (scorers synchronised their work).
                ck(
                    unsafe { sys::cuStreamDestroy_v2(self.stream) },
                    "cuStreamDestroy",
                );
            }
            // SAFETY: our context; it must still be valid (scorers never destroy it).
            ck(
                unsafe { sys::cuCtxDestroy_v2(self.ctx) },
                "cuCtxDestroy (context still valid)",
            );
        }
    }

    /// A device copy of a host plane buffer (including its pitch padding and padding rows).
    struct DevPlane {
        ptr: sys::CUdeviceptr,
    }

    impl DevPlane {
        fn upload(bytes: &[u8]) -> DevPlane {
            let mut ptr = 0;
            // SAFETY: a context is current; valid out-pointer.
            ck(
                unsafe { sys::cuMemAlloc_v2(&mut ptr, bytes.len()) },
                "cuMemAlloc",
            );
            // SAFETY: `ptr` holds bytes.len() bytes; synchronous copy from a live slice.
            ck(
                unsafe { sys::cuMemcpyHtoD_v2(ptr, bytes.as_ptr() as *const c_void, bytes.len()) },
                "cuMemcpyHtoD",
            );
            DevPlane { ptr }
        }
    }

    impl Drop for DevPlane {
        fn drop(&mut self) {
            // SAFETY: allocated above; every scorer using it has been drained or dropped.
            unsafe { sys::cuMemFree_v2(self.ptr) };
        }
    }

    fn hash(x: u32, y: u32, t: u32, seed: u32) -> u32 {
        let mut h = x.wrapping_mul(0x9E37_79B1)
            ^ y.wrapping_mul(0x85EB_CA77)
            ^ t.wrapping_mul(0xC2B2_AE3D)
            ^ seed.wrapping_mul(0x27D4_EB2F);
        h ^= h >> 15;
        h = h.wrapping_mul(0x2C1B_3C6D);
        h ^= h >> 12;
        h
    }

    /// Integer-only synthetic content (identical on every machine): moving ramps and texture with
    /// noise; the distorted picture is a blurred, quantised, noisy copy.
    fn picture(w: usize, h: usize, t: u32, bpc: u8, distorted: bool) -> Vec<u32> {
        let maxv = (1u32 << bpc) - 1;
        let lo = bpc - 8;
        let base = |x: usize, y: usize| -> u32 {
            let a = ((x as u32 * 7 + y as u32 * 3 + t * 11) % 256) as i32;
            let a = if a > 127 { 255 - a } else { a } as u32;
            let b = ((x as u32 ^ y as u32) + t * 5) & 63;
            let n = hash(x as u32, y as u32, t, 1) & 31;
            let v8 = (a * 2 / 3 + b + n + 40).min(255);
            ((v8 << lo) | (hash(x as u32, y as u32, t, 2) & ((1 << lo) - 1))).min(maxv)
        };
        let mut out = vec![0u32; w * h];
        for y in 0..h {
            for x in 0..w {
                out[y * w + x] = if distorted {
                    let x1 = (x + 1).min(w - 1);
                    let y1 = (y + 1).min(h - 1);
                    let avg = (2 * base(x, y) + base(x1, y) + base(x, y1)) / 4;
                    let q = (avg >> (lo + 2)) << (lo + 2);
                    let n = (hash(x as u32, y as u32, t, 3) % (9 << lo)) as i32 - (4 << lo);
                    (q as i32 + n).clamp(0, maxv as i32) as u32
                } else {
                    base(x, y)
                };
            }
        }
        out
    }

    /// 32x32 blocks of 0 and full scale whose polarity flips every frame (the distorted picture
    /// a little off): the largest frame differences, so every filtered sum of motion, VIF and
    /// ADM reaches the top of its range (32-bit intermediates overflow here first).
    fn extreme_picture(w: usize, h: usize, t: u32, bpc: u8, distorted: bool) -> Vec<u32> {
        let maxv = (1u32 << bpc) - 1;
        let mut out = vec![0u32; w * h];
        for y in 0..h {
            for x in 0..w {
                let on = (x / 32 + y / 32 + t as usize) % 2 == 1;
                let v = if on { maxv } else { 0 };
                out[y * w + x] = if distorted && (x + y) % 7 == 0 {
                    maxv - v
                } else {
                    v
                };
            }
        }
        out
    }

    /// Stream layout of one test case.
    #[derive(Clone, Copy, Debug)]
    struct Layout {
        w: usize,
        h: usize,
        bpc: u8,
        /// Stored samples are `value << shift` (MSB-aligned formats).
        shift: u8,
        /// Row pitch in samples (>= w).
        stride: usize,
        /// Allocated rows (>= h; NVDEC's coded height), extra rows filled with garbage.
        rows: usize,
    }

    /// The host buffer of a plane in `l`'s layout (garbage in the padding) as bytes.
    fn host_plane(l: &Layout, v: &[u32]) -> Vec<u8> {
        let bps = if l.bpc > 8 { 2 } else { 1 };
        let mut out = vec![0u8; l.stride * l.rows * bps];
        for y in 0..l.rows {
            for x in 0..l.stride {
                let s = if y < l.h && x < l.w {
                    v[y * l.w + x] << l.shift
                } else {
                    hash(x as u32, y as u32, 7, 9) // garbage that must never be read
                };
                let at = (y * l.stride + x) * bps;
                if bps == 1 {
                    out[at] = s as u8;
                } else {
                    out[at..at + 2].copy_from_slice(&(s as u16).to_ne_bytes());
                }
            }
        }
        out
    }

    fn cpu_picture<'a>(
        l: &Layout,
        fmt: PictureFormat,
        bytes: &'a [u8],
        words: &'a [u16],
    ) -> Picture<'a> {
        let plane = if l.bpc > 8 {
            Plane::new_u16(words, l.w, l.h, l.stride).unwrap()
        } else {
            Plane::new_u8(bytes, l.w, l.h, l.stride).unwrap()
        };
        Picture::with_shift(fmt, plane, l.shift).unwrap()
    }

    fn words(bytes: &[u8]) -> Vec<u16> {
        bytes
            .chunks_exact(2)
            .map(|c| u16::from_ne_bytes([c[0], c[1]]))
            .collect()
    }

    struct Case {
        name: &'static str,
        layout: Layout,
        frames: u32,
        models: &'static str,
        features: Vec<FeatureSpec>,
        n_subsample: u32,
        null_stream: bool,
        depth: usize,
        isa: LibvmafIsaMode,
        /// Full-range blocks whose polarity flips every frame ([`extreme_picture`]).
        extreme: bool,
    }

    fn feat(name: &str, opts: &[(&str, &str)]) -> FeatureSpec {
        FeatureSpec {
            name: name.into(),
            opts: opts
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        }
    }

    fn config(c: &Case) -> EngineConfig {
        let l = c.layout;
        let mut cfg = EngineConfig::new(PictureFormat {
            width: l.w,
            height: l.h,
            bpc: l.bpc,
            layout: ChromaLayout::Yuv420,
        });
        cfg.models = vmaf_rs::model::parse_model_option(c.models).unwrap();
        cfg.features = c.features.clone();
        cfg.n_subsample = c.n_subsample;
        cfg.libvmaf_isa = c.isa;
        cfg
    }

    /// Runs one case on CPU and GPU and compares every value's bits. Returns frames compared.
    fn run_case(c: &Case) -> Option<usize> {
        let gpu = Gpu::new(c.null_stream)?;
        let l = c.layout;
        let cfg = config(c);
        let fmt = cfg.format;
        let mut cpu = Engine::new(cfg.clone()).unwrap();
        let mut eng = Engine::new(cfg).unwrap();
        let mut scorer = CudaScorer::for_engine(
            gpu.ctx as *mut c_void,
            gpu.stream as *mut c_void,
            &eng,
            l.shift,
        )
        .unwrap_or_else(|e| panic!("{}: CudaScorer::new: {e}", c.name));
        scorer.set_depth(c.depth).unwrap();
        let released = Arc::new(AtomicUsize::new(0));
        let mut planes = Vec::new();
        let mut row = Vec::new();
        for t in 0..c.frames {
            let pic = if c.extreme { extreme_picture } else { picture };
            let r = host_plane(&l, &pic(l.w, l.h, t, l.bpc, false));
            let d = host_plane(&l, &pic(l.w, l.h, t, l.bpc, true));
            let (rw, dw) = (words(&r), words(&d));
            cpu.send(
                &cpu_picture(&l, fmt, &r, &rw),
                &cpu_picture(&l, fmt, &d, &dw),
            )
            .unwrap();
            gpu.current();
            let (dr, dd) = (DevPlane::upload(&r), DevPlane::upload(&d));
            let pitch = l.stride * if l.bpc > 8 { 2 } else { 1 };
            let mk = |p: &DevPlane| {
                let n = released.clone();
                CudaFrame::with_release(p.ptr, pitch, move || {
                    n.fetch_add(1, Ordering::SeqCst);
                })
            };
            scorer.submit(mk(&dr), mk(&dd)).unwrap();
            planes.push((dr, dd));
            while scorer.poll(&mut row).unwrap() {
                eng.push_spatial(&row).unwrap();
            }
            assert!(
                scorer.frames_held() <= 2 * c.depth + 2,
                "{}: holds too many frames",
                c.name
            );
        }
        let mut err = None;
        scorer
            .drain(&mut |row| {
                if let Err(e) = eng.push_spatial(row) {
                    err.get_or_insert(e);
                }
            })
            .unwrap();
        assert!(err.is_none(), "{err:?}");
        drop(scorer);
        assert_eq!(
            released.load(Ordering::SeqCst),
            2 * c.frames as usize,
            "{}: every frame released exactly once",
            c.name
        );
        cpu.flush().unwrap();
        eng.flush().unwrap();
        let cols = cpu.columns().to_vec();
        assert_eq!(cols, eng.columns());
        let mut n = 0;
        // Per column: (mismatching frames, first example).
        let mut bad: Vec<(usize, String)> = vec![(0, String::new()); cols.len()];
        while let Some(a) = cpu.receive() {
            let b = eng.receive().expect("GPU engine has as many frames");
            assert_eq!(a.index, b.index);
            for (k, (x, y)) in a.values.iter().zip(&b.values).enumerate() {
                if x.to_bits() != y.to_bits() {
                    if bad[k].0 == 0 {
                        bad[k].1 = format!(
                            "frame {}: CPU {x:?} ({:#018x}) vs GPU {y:?} ({:#018x})",
                            a.index,
                            x.to_bits(),
                            y.to_bits()
                        );
                    }
                    bad[k].0 += 1;
                }
            }
            n += 1;
        }
        let report: Vec<String> = bad
            .iter()
            .zip(&cols)
            .filter(|((c, _), _)| *c > 0)
            .map(|((c, ex), name)| format!("  {name}: {c} of {n} frames differ; first: {ex}"))
            .collect();
        assert!(
            report.is_empty(),
            "{}: GPU values differ from the CPU's:\n{}",
            c.name,
            report.join("\n")
        );
        assert!(eng.receive().is_none());
        drop(planes);
        eprintln!(
            "{}: {} frames, {} columns bit-identical ({}x{} {}-bit shift {} stride {} rows {})",
            c.name,
            n,
            cols.len(),
            l.w,
            l.h,
            l.bpc,
            l.shift,
            l.stride,
            l.rows
        );
        Some(n)
    }

    fn case(name: &'static str, layout: Layout, frames: u32) -> Case {
        Case {
            name,
            layout,
            frames,
            models: "version=vmaf_v0.6.1",
            features: Vec::new(),
            n_subsample: 1,
            null_stream: false,
            depth: vmaf_rs::cuda::DEFAULT_DEPTH,
            isa: LibvmafIsaMode::Auto,
            extreme: false,
        }
    }

    #[test]
    fn bit_identical_8bit_padded() {
        let _s = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let l = Layout {
            w: 320,
            h: 180,
            bpc: 8,
            shift: 0,
            stride: 384,
            rows: 192,
        };
        run_case(&case("8-bit 320x180 pitch 384 coded 192", l, 7));
    }

    #[test]
    fn bit_identical_8bit_1080p_nvdec_layout() {
        let _s = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let l = Layout {
            w: 1920,
            h: 1080,
            bpc: 8,
            shift: 0,
            stride: 2048,
            rows: 1088,
        };
        run_case(&case("8-bit 1920x1080 pitch 2048 coded 1088", l, 3));
    }

    #[test]
    fn bit_identical_10bit_lsb() {
        let _s = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let l = Layout {
            w: 176,
            h: 144,
            bpc: 10,
            shift: 0,
            stride: 192,
            rows: 152,
        };
        run_case(&case("10-bit yuv420p10 176x144", l, 5));
    }

    #[test]
    fn bit_identical_10bit_msb_p010() {
        let _s = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let l = Layout {
            w: 160,
            h: 96,
            bpc: 10,
            shift: 6,
            stride: 256,
            rows: 112,
        };
        let mut c = case("10-bit MSB-aligned (p010) 160x96", l, 5);
        c.null_stream = true; // FFmpeg's default: AVCUDADeviceContext.stream == NULL
        run_case(&c);
    }

    #[test]
    fn bit_identical_12bit_msb_and_16bit() {
        let _s = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let l = Layout {
            w: 128,
            h: 72,
            bpc: 12,
            shift: 4,
            stride: 128,
            rows: 72,
        };
        run_case(&case("12-bit MSB-aligned (p012) 128x72", l, 4));
        let l = Layout {
            w: 96,
            h: 64,
            bpc: 16,
            shift: 0,
            stride: 100,
            rows: 66,
        };
        run_case(&case("16-bit 96x64", l, 4));
    }

    #[test]
    fn bit_identical_extreme_motion() {
        let _s = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        for (bpc, stride) in [(8, 384), (10, 320)] {
            let l = Layout {
                w: 320,
                h: 184,
                bpc,
                shift: 0,
                stride,
                rows: 192,
            };
            let name = if bpc == 8 {
                "8-bit full-range blocks flipping every frame"
            } else {
                "10-bit full-range blocks flipping every frame"
            };
            let mut c = case(name, l, 6);
            c.extreme = true;
            run_case(&c);
        }
    }

    #[test]
    fn bit_identical_odd_and_tiny_sizes() {
        let _s = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let l = Layout {
            w: 67,
            h: 37,
            bpc: 8,
            shift: 0,
            stride: 67,
            rows: 37,
        };
        run_case(&case("8-bit odd 67x37", l, 5));
        let l = Layout {
            w: 101,
            h: 53,
            bpc: 10,
            shift: 0,
            stride: 104,
            rows: 56,
        };
        run_case(&case("10-bit odd 101x53", l, 4));
        let l = Layout {
            w: 16,
            h: 16,
            bpc: 8,
            shift: 0,
            stride: 32,
            rows: 18,
        };
        run_case(&case("8-bit tiny 16x16", l, 4));
        let l = Layout {
            w: 17,
            h: 23,
            bpc: 10,
            shift: 6,
            stride: 24,
            rows: 24,
        };
        run_case(&case("10-bit MSB tiny 17x23", l, 4));
    }

    /// Widths where libvmaf's AVX2 or AVX-512 scale-0 DWT computes the last column unmirrored
    /// (adm::scalar::s0_last_column_unmirrored), or where its AVX-512 masking rounds narrow
    /// bands differently (adm::scalar::CmShiftsS0): the GPU equals the CPU for every
    /// `libvmaf_isa`, so CUDA == CPU whichever variant a host resolves to.
    #[test]
    fn bit_identical_every_libvmaf_isa_at_edge_widths() {
        let _s = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let layout = |w, h, bpc, shift, stride, rows| Layout {
            w,
            h,
            bpc,
            shift,
            stride,
            rows,
        };
        let cases = [
            (
                "8-bit 65x48 + adm_skip_scale0",
                layout(65, 48, 8, 0, 80, 48),
                true,
            ),
            ("8-bit 66x40", layout(66, 40, 8, 0, 66, 40), false),
            ("10-bit MSB 129x40", layout(129, 40, 10, 6, 160, 48), false),
            ("16-bit 130x36", layout(130, 36, 16, 0, 130, 36), false),
            ("8-bit 321x243", layout(321, 243, 8, 0, 384, 256), false),
            (
                "10-bit 97x40 (AVX2 only)",
                layout(97, 40, 10, 0, 128, 40),
                false,
            ),
            ("12-bit 257x30", layout(257, 30, 12, 0, 272, 32), false),
            (
                "8-bit 24x40 (AVX-512 masking rounding)",
                layout(24, 40, 8, 0, 32, 40),
                false,
            ),
            (
                "10-bit 33x20 (AVX2, band 17)",
                layout(33, 20, 10, 0, 48, 20),
                false,
            ),
        ];
        for (name, l, skip_scale0) in cases {
            for isa in LibvmafIsa::ALL {
                let name = format!("{name}, libvmaf_isa={isa}").leak();
                let mut c = case(name, l, 4);
                c.isa = LibvmafIsaMode::Fixed(isa);
                if skip_scale0 {
                    c.features = vec![feat("adm", &[("adm_skip_scale0", "true")])];
                }
                run_case(&c);
            }
        }
    }

    #[test]
    fn bit_identical_options_models_subsample_depth() {
        let _s = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let l = Layout {
            w: 200,
            h: 120,
            bpc: 8,
            shift: 0,
            stride: 256,
            rows: 128,
        };
        let mut c = case("options, two models, n_subsample=3, depth 1", l, 8);
        c.models = "version=vmaf_v0.6.1:name=a|version=vmaf_v0.6.1neg:name=b";
        c.features = vec![
            feat("adm", &[("adm_csf_mode", "1"), ("adm_skip_aim", "true")]),
            feat(
                "adm",
                &[("adm_skip_scale0", "true"), ("adm_min_val", "0.5")],
            ),
            feat("adm", &[("adm_csf_mode", "3"), ("adm_norm_view_dist", "5")]),
            // Shares v0.6.1neg's decomposition (gain limit 1) with other CSF and masking values.
            feat(
                "adm",
                &[
                    ("adm_enhn_gain_limit", "1.0"),
                    ("adm_csf_mode", "2"),
                    ("adm_norm_view_dist", "5"),
                    ("adm_dlm_weight", "0.7"),
                ],
            ),
            feat("vif", &[("vif_skip_scale0", "true")]),
            feat("motion", &[("motion_five_frame_window", "true")]),
            feat("motion", &[("motion_force_zero", "true")]),
        ];
        c.n_subsample = 3;
        c.depth = 1;
        run_case(&c);
        let mut c = case("two models, depth 16", l, 6);
        c.models = "version=vmaf_v0.6.1:name=a|version=vmaf_v0.6.1neg:name=b";
        c.depth = 16;
        run_case(&c);
    }

    #[test]
    fn refused_frames_are_released() {
        let _s = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let Some(gpu) = Gpu::new(false) else { return };
        let l = Layout {
            w: 64,
            h: 64,
            bpc: 8,
            shift: 0,
            stride: 64,
            rows: 64,
        };
        let eng = Engine::new(config(&case("refuse", l, 1))).unwrap();
        let mut s =
            CudaScorer::for_engine(gpu.ctx as *mut c_void, gpu.stream as *mut c_void, &eng, 0)
                .unwrap();
        let n = Arc::new(AtomicUsize::new(0));
        let mk = |ptr: u64, pitch: usize| {
            let n = n.clone();
            CudaFrame::with_release(ptr, pitch, move || {
                n.fetch_add(1, Ordering::SeqCst);
            })
        };
        assert!(s.submit(mk(0, 64), mk(0x1000, 64)).is_err());
        assert!(s.submit(mk(0x1000, 32), mk(0x1000, 64)).is_err());
        assert_eq!(n.load(Ordering::SeqCst), 4);
        assert_eq!(
            s.device_bytes(),
            0,
            "nothing allocated before the first frame"
        );
    }

    /// Ladder scoring on CUDA frames: one reference against three renditions, the reference
    /// frame shared by the three scorers, equals three CPU runs bit for bit (so three separate
    /// CUDA runs), and each frame is released exactly once: the reference once, not once per
    /// rendition, and only after every rendition's kernels read it.
    #[test]
    fn ladder_on_cuda_frames_equals_separate_runs() {
        let _s = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let Some(gpu) = Gpu::new(false) else { return };
        let l = Layout {
            w: 320,
            h: 180,
            bpc: 8,
            shift: 0,
            stride: 384,
            rows: 192,
        };
        let (renditions, frames) = (3usize, 7u32);
        let mut c = case("ladder", l, frames);
        c.models = "version=vmaf_v0.6.1:name=a|version=vmaf_v0.6.1neg:name=b";
        let cfg = config(&c);
        let fmt = cfg.format;
        let mut ladder = vmaf_rs::Ladder::new(cfg.clone(), renditions).unwrap();
        let mut cpu: Vec<Engine> = (0..renditions)
            .map(|_| Engine::new(cfg.clone()).unwrap())
            .collect();
        let target = vmaf_rs::backend::CudaTarget {
            ctx: gpu.ctx as *mut c_void,
            stream: gpu.stream as *mut c_void,
            shift: 0,
        };
        let (ref_released, dis_released) =
            (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        let mk = |p: &DevPlane, n: &Arc<AtomicUsize>| {
            let n = n.clone();
            CudaFrame::with_release(p.ptr, l.stride, move || {
                n.fetch_add(1, Ordering::SeqCst);
            })
        };
        let mut planes = Vec::new();
        for t in 0..frames {
            let r = host_plane(&l, &picture(l.w, l.h, t, l.bpc, false));
            let rw = words(&r);
            gpu.current();
            let dr = DevPlane::upload(&r);
            let mut dists = Vec::new();
            for (k, e) in cpu.iter_mut().enumerate() {
                // Each rendition its own distortion of the same reference.
                let d = host_plane(&l, &picture(l.w, l.h, t + 1000 * k as u32, l.bpc, true));
                let dw = words(&d);
                e.send(
                    &cpu_picture(&l, fmt, &r, &rw),
                    &cpu_picture(&l, fmt, &d, &dw),
                )
                .unwrap();
                gpu.current();
                dists.push(DevPlane::upload(&d));
            }
            let frames_d = dists.iter().map(|d| mk(d, &dis_released)).collect();
            ladder
                .send_cuda(target, mk(&dr, &ref_released), frames_d)
                .unwrap();
            planes.push((dr, dists));
        }
        ladder.flush().unwrap();
        ladder.release_gpu().unwrap();
        assert_eq!(
            ref_released.load(Ordering::SeqCst),
            frames as usize,
            "each reference frame released once"
        );
        assert_eq!(
            dis_released.load(Ordering::SeqCst),
            renditions * frames as usize
        );
        let mut got = vmaf_rs::FrameScores::default();
        for (k, e) in cpu.iter_mut().enumerate() {
            e.flush().unwrap();
            assert_eq!(e.columns(), ladder.engine(k).columns());
            let mut n = 0;
            while let Some(want) = e.receive() {
                assert!(
                    ladder.receive_into(k, &mut got),
                    "rendition {k}: frame {n} missing"
                );
                assert_eq!(want.index, got.index);
                for ((x, y), name) in want.values.iter().zip(&got.values).zip(e.columns()) {
                    assert_eq!(
                        x.to_bits(),
                        y.to_bits(),
                        "rendition {k} frame {} {name}: CPU {x} vs ladder on CUDA {y}",
                        want.index
                    );
                }
                n += 1;
            }
            assert_eq!(n, frames as usize);
            assert!(!ladder.receive_into(k, &mut got));
        }
        // A frame count that does not match the ladder is refused, every frame still released.
        let before = (
            ref_released.load(Ordering::SeqCst),
            dis_released.load(Ordering::SeqCst),
        );
        let dr = DevPlane::upload(&host_plane(&l, &picture(l.w, l.h, 0, l.bpc, false)));
        let err = ladder
            .send_cuda(target, mk(&dr, &ref_released), vec![mk(&dr, &dis_released)])
            .unwrap_err();
        assert!(err.to_string().contains("1 distorted CUDA frames"), "{err}");
        assert_eq!(ref_released.load(Ordering::SeqCst), before.0 + 1);
        assert_eq!(dis_released.load(Ordering::SeqCst), before.1 + 1);
        drop(planes);
        eprintln!(
            "ladder on CUDA: {renditions} renditions x {frames} frames bit-identical to separate \
             CPU runs; the shared reference released once a frame"
        );
    }

    /// Scores `frames` frames of `l` on a fresh scorer and drops it; returns device bytes it held.
    fn cycle(
        gpu: &Gpu,
        eng_cfg: &EngineConfig,
        l: &Layout,
        planes: &[(DevPlane, DevPlane)],
        frames: usize,
    ) -> usize {
        let mut eng = Engine::new(eng_cfg.clone()).unwrap();
        let mut s =
            CudaScorer::for_engine(gpu.ctx as *mut c_void, gpu.stream as *mut c_void, &eng, 0)
                .unwrap();
        let pitch = l.stride;
        let mut row = Vec::new();
        for i in 0..frames {
            let (r, d) = &planes[i % planes.len()];
            s.submit(CudaFrame::new(r.ptr, pitch), CudaFrame::new(d.ptr, pitch))
                .unwrap();
            while s.poll(&mut row).unwrap() {
                eng.push_spatial(&row).unwrap();
            }
        }
        s.drain(&mut |r| eng.push_spatial(r).unwrap()).unwrap();
        let bytes = s.device_bytes();
        drop(s);
        eng.flush().unwrap();
        assert_eq!(eng.frames_scored(), frames as u64);
        bytes
    }

    #[test]
    fn lifecycle_no_leak_50_cycles() {
        let _s = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let Some(gpu) = Gpu::new(false) else { return };
        let l = Layout {
            w: 1920,
            h: 1080,
            bpc: 8,
            shift: 0,
            stride: 2048,
            rows: 1088,
        };
        let cfg = config(&case("lifecycle", l, 1));
        let planes: Vec<_> = (0..2)
            .map(|t| {
                (
                    DevPlane::upload(&host_plane(&l, &picture(l.w, l.h, t, 8, false))),
                    DevPlane::upload(&host_plane(&l, &picture(l.w, l.h, t, 8, true))),
                )
            })
            .collect();
        // Configuration allocates nothing on the GPU.
        let eng = Engine::new(cfg.clone()).unwrap();
        let before = gpu.mem_free();
        let s = CudaScorer::for_engine(gpu.ctx as *mut c_void, gpu.stream as *mut c_void, &eng, 0)
            .unwrap();
        let after = gpu.mem_free();
        drop(s);
        assert_eq!(before, after, "CudaScorer::new allocated GPU memory");
        // Warm-up cycle (driver-internal lazy allocations, module cache), then 50 cycles.
        let held = cycle(&gpu, &cfg, &l, &planes, 3);
        let base = gpu.mem_free();
        let mut frees = Vec::new();
        for _ in 0..50 {
            cycle(&gpu, &cfg, &l, &planes, 3);
            frees.push(gpu.mem_free());
        }
        let worst = frees.iter().min().copied().unwrap_or(base);
        eprintln!(
            "lifecycle: scorer held {:.1} MiB at 1080p; free after warm-up {} B, after 50 cycles {} B \
             (lowest {} B, drift {} B)",
            held as f64 / (1 << 20) as f64,
            base,
            frees.last().unwrap(),
            worst,
            base as i64 - worst as i64
        );
        assert!(
            frees.iter().all(|&f| f == base),
            "GPU memory leaked: {frees:?} vs {base}"
        );
        // The borrowed context is still valid and usable.
        gpu.current();
        let mut p = 0;
        // SAFETY: the context is current; valid out-pointer.
        ck(
            unsafe { sys::cuMemAlloc_v2(&mut p, 1 << 20) },
            "cuMemAlloc after cycles",
        );
        // SAFETY: allocated just above.
        ck(unsafe { sys::cuMemFree_v2(p) }, "cuMemFree after cycles");
        drop(planes);
        drop(gpu); // asserts cuCtxDestroy succeeds
    }

    fn bench_size(gpu: &Gpu, w: usize, h: usize, frames: usize) {
        let l = Layout {
            w,
            h,
            bpc: 8,
            shift: 0,
            stride: w.next_multiple_of(256),
            rows: h.next_multiple_of(16),
        };
        let cfg = config(&case("bench", l, 1));
        gpu.current();
        // Enough distinct frames that they do not all sit in the 60 MB L2 cache.
        let n_planes = (256 << 20) / (2 * l.stride * l.rows).max(1);
        let planes: Vec<_> = (0..n_planes.clamp(4, 32) as u32)
            .map(|t| {
                (
                    DevPlane::upload(&host_plane(&l, &picture(l.w, l.h, t, 8, false))),
                    DevPlane::upload(&host_plane(&l, &picture(l.w, l.h, t, 8, true))),
                )
            })
            .collect();
        cycle(gpu, &cfg, &l, &planes, 8); // warm-up
        let t0 = Instant::now();
        cycle(gpu, &cfg, &l, &planes, frames);
        let dt = t0.elapsed().as_secs_f64();
        eprintln!(
            "bench: {w}x{h} 8-bit, default model (vif+adm+motion), frames on the GPU: {frames} frames \
             in {dt:.3} s = {:.1} fps ({} distinct frame pairs; including scorer setup and teardown)",
            frames as f64 / dt,
            planes.len()
        );
    }

    #[test]
    fn scorer_moves_between_threads() {
        let _s = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let Some(gpu) = Gpu::new(false) else { return };
        let l = Layout {
            w: 96,
            h: 80,
            bpc: 8,
            shift: 0,
            stride: 128,
            rows: 80,
        };
        let cfg = config(&case("threads", l, 1));
        let planes: Vec<_> = (0..3)
            .map(|t| {
                (
                    DevPlane::upload(&host_plane(&l, &picture(l.w, l.h, t, 8, false))),
                    DevPlane::upload(&host_plane(&l, &picture(l.w, l.h, t, 8, true))),
                )
            })
            .collect();
        let eng = Engine::new(cfg).unwrap();
        let mut s =
            CudaScorer::for_engine(gpu.ctx as *mut c_void, gpu.stream as *mut c_void, &eng, 0)
                .unwrap();
        let ptrs: Vec<(u64, u64)> = planes.iter().map(|(r, d)| (r.ptr, d.ptr)).collect();
        let rows = std::thread::spawn(move || {
            // No context is current on this thread: the scorer pushes its borrowed one.
            for (r, d) in ptrs {
                s.submit(CudaFrame::new(r, 128), CudaFrame::new(d, 128))
                    .unwrap();
            }
            let mut n = 0;
            s.drain(&mut |_| n += 1).unwrap();
            drop(s);
            n
        })
        .join()
        .unwrap();
        assert_eq!(rows, 3);
        gpu.current();
        drop(planes);
    }

    /// 4:2:0 planes (Y, Cb, Cr) of frame `t`, as `u16` samples (`bpc` > 8) or bytes.
    fn yuv420(w: usize, h: usize, t: u32, bpc: u8, distorted: bool) -> [Vec<u32>; 3] {
        let (cw, ch) = (w.div_ceil(2), h.div_ceil(2));
        [
            picture(w, h, t, bpc, distorted),
            picture(cw, ch, t + 100, bpc, distorted),
            picture(cw, ch, t + 200, bpc, distorted),
        ]
    }

    /// A 4:2:0 picture over planes made by [`yuv420`] (as `u16`).
    fn pic420(fmt: PictureFormat, p: &[Vec<u16>]) -> Picture<'_> {
        let (w, h) = (fmt.width, fmt.height);
        let (cw, ch) = (w.div_ceil(2), h.div_ceil(2));
        let y = Plane::new_u16(&p[0], w, h, w).unwrap();
        let u = Plane::new_u16(&p[1], cw, ch, cw).unwrap();
        let v = Plane::new_u16(&p[2], cw, ch, cw).unwrap();
        Picture::new(fmt, y)
            .unwrap()
            .with_chroma(vmaf_rs::Chroma::Planar(u, v))
            .unwrap()
    }

    /// `backend=cuda` with host pictures (what the CLI's `--backend cuda` does): the engine uploads
    /// them into device 0's primary context and scores them on the GPU; bit-identical to the CPU,
    /// psnr's and ciede's kernels reading the uploaded 10-bit chroma planes (`apsnr_*`
    /// aggregates from the psnr plan's totals), and the GPU side released by flush.
    #[test]
    fn backend_cuda_uploads_host_frames() {
        let _s = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let Some(_gpu) = Gpu::new(false) else { return };
        let (w, h, bpc) = (176, 100, 10);
        let fmt = PictureFormat {
            width: w,
            height: h,
            bpc,
            layout: ChromaLayout::Yuv420,
        };
        let mut cfg = EngineConfig::new(fmt);
        cfg.features = vec![
            feat("psnr", &[("enable_apsnr", "true")]),
            feat("ciede", &[]),
        ];
        let mut cpu = Engine::new(cfg.clone()).unwrap();
        cfg.backend = vmaf_rs::backend::Backend::Cuda;
        let mut eng = Engine::new(cfg).unwrap();
        let frames = 7;
        for t in 0..frames {
            let r: Vec<Vec<u16>> = yuv420(w, h, t, bpc, false)
                .map(|p| p.into_iter().map(|v| v as u16).collect())
                .into();
            let d: Vec<Vec<u16>> = yuv420(w, h, t, bpc, true)
                .map(|p| p.into_iter().map(|v| v as u16).collect())
                .into();
            let (pr, pd) = (pic420(fmt, &r), pic420(fmt, &d));
            cpu.send(&pr, &pd).unwrap();
            eng.send(&pr, &pd).unwrap();
            if t == 0 {
                let p = eng
                    .take_placement()
                    .expect("placement after the first frame");
                let (gpu, cpu_side) = placement(&p);
                assert_eq!(gpu, ["adm", "ciede", "motion", "psnr", "vif"], "{p}");
                assert!(cpu_side.is_empty(), "{p}");
                eprintln!("{p}");
            }
        }
        assert!(eng.gpu_device_bytes() > 0, "scored on the GPU");
        cpu.flush().unwrap();
        eng.flush().unwrap();
        assert_eq!(eng.gpu_device_bytes(), 0, "flush releases the GPU side");
        assert_eq!(cpu.columns(), eng.columns());
        let mut n = 0;
        while let Some(a) = cpu.receive() {
            let b = eng.receive().expect("as many frames");
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&a.values), bits(&b.values), "frame {}", a.index);
            n += 1;
        }
        assert_eq!(n, frames);
        assert_eq!(cpu.aggregates(), eng.aggregates());
        assert!(!cpu.aggregates().is_empty(), "apsnr aggregates present");
        eprintln!(
            "backend=cuda uploads: {n} frames, {} columns and {} aggregates bit-identical",
            cpu.columns().len(),
            cpu.aggregates().len()
        );
    }

    /// The features of a placement line on CUDA and on the CPU fallback, each sorted.
    fn placement(line: &str) -> (Vec<String>, Vec<String>) {
        let list = |after: &str| -> Vec<String> {
            let mut v: Vec<String> = line
                .split_once(after)
                .map(|(_, rest)| rest.split(';').next().unwrap_or(""))
                .unwrap_or("")
                .split(',')
                .map(|x| x.trim().to_string())
                .filter(|x| !x.is_empty())
                .collect();
            v.sort();
            v
        };
        (
            list("on CUDA: "),
            list("on the CPU from downloaded planes (no CUDA kernel yet): "),
        )
    }

    /// One stream scored with `backend=cuda` (uploads) and on the CPU: every frame's values as
    /// f64 bits and the aggregates must agree; returns the frames compared and the CUDA
    /// engine's placement line.
    fn upload_vs_cpu(
        fmt: PictureFormat,
        features: Vec<FeatureSpec>,
        n_subsample: u32,
        frames: u32,
        same: bool,
    ) -> (usize, String) {
        let mut cfg = EngineConfig::new(fmt);
        cfg.features = features;
        cfg.n_subsample = n_subsample;
        let mut cpu = Engine::new(cfg.clone()).unwrap();
        cfg.backend = vmaf_rs::backend::Backend::Cuda;
        let mut eng = Engine::new(cfg).unwrap();
        let (cw, ch) = fmt.layout.chroma_size(fmt.width, fmt.height);
        let mut placement = String::new();
        for t in 0..frames {
            let planes = |distorted: bool| -> Vec<(Vec<u32>, usize, usize)> {
                let mut v = vec![(
                    picture(fmt.width, fmt.height, t, fmt.bpc, distorted),
                    fmt.width,
                    fmt.height,
                )];
                if fmt.layout != ChromaLayout::Gray {
                    for k in [100, 200] {
                        v.push((picture(cw, ch, t + k, fmt.bpc, distorted), cw, ch));
                    }
                }
                v
            };
            let (r, d) = (planes(false), planes(same));
            let (r8, d8): (Vec<Vec<u8>>, Vec<Vec<u8>>) = (
                r.iter()
                    .map(|p| p.0.iter().map(|&x| x as u8).collect())
                    .collect(),
                d.iter()
                    .map(|p| p.0.iter().map(|&x| x as u8).collect())
                    .collect(),
            );
            let (r16, d16): (Vec<Vec<u16>>, Vec<Vec<u16>>) = (
                r.iter()
                    .map(|p| p.0.iter().map(|&x| x as u16).collect())
                    .collect(),
                d.iter()
                    .map(|p| p.0.iter().map(|&x| x as u16).collect())
                    .collect(),
            );
            fn build<'a>(
                fmt: PictureFormat,
                sizes: &[(usize, usize)],
                p8: &'a [Vec<u8>],
                p16: &'a [Vec<u16>],
            ) -> Picture<'a> {
                let make = |k: usize| {
                    let (w, h) = sizes[k];
                    if fmt.bpc == 8 {
                        Plane::new_u8(&p8[k], w, h, w).unwrap()
                    } else {
                        Plane::new_u16(&p16[k], w, h, w).unwrap()
                    }
                };
                let p = Picture::new(fmt, make(0)).unwrap();
                if fmt.layout == ChromaLayout::Gray {
                    p
                } else {
                    p.with_chroma(vmaf_rs::Chroma::Planar(make(1), make(2)))
                        .unwrap()
                }
            }
            let sizes: Vec<(usize, usize)> = r.iter().map(|p| (p.1, p.2)).collect();
            let (pr, pd) = (build(fmt, &sizes, &r8, &r16), build(fmt, &sizes, &d8, &d16));
            cpu.send(&pr, &pd).unwrap();
            eng.send(&pr, &pd).unwrap();
            if t == 0 {
                placement = eng
                    .take_placement()
                    .expect("placement after the first frame");
            }
        }
        cpu.flush().unwrap();
        eng.flush().unwrap();
        assert_eq!(cpu.columns(), eng.columns());
        let mut n = 0;
        while let Some(a) = cpu.receive() {
            let b = eng.receive().expect("as many frames");
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(
                bits(&a.values),
                bits(&b.values),
                "{fmt:?}: frame {}: cpu {:?} cuda {:?}",
                a.index,
                a.values,
                b.values
            );
            n += 1;
        }
        assert_eq!(cpu.aggregates(), eng.aggregates(), "{fmt:?}: aggregates");
        (n, placement)
    }

    /// float_moment's kernel against the CPU, f64 bit for bit through the whole engine (host frames
    /// uploaded by `backend=cuda`): 8, 10, 12 and 16 bits, 4:2:0, 4:4:4 and gray, odd sizes,
    /// identical frames, n_subsample 2, a 1080p picture, a 16-bit picture above 2^21 pixels (the
    /// CPU fallback, still identical); and MSB-aligned, padded CUDA frames through the scorer
    /// directly.
    #[test]
    fn float_moment_kernel_every_depth_and_layout() {
        let _s = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let Some(_gpu) = Gpu::new(false) else { return };
        // (layout, bits, width, height, n_subsample, distorted == reference, frames)
        type MomentCase = (ChromaLayout, u8, usize, usize, u32, bool, u32);
        let cases: &[MomentCase] = &[
            (ChromaLayout::Yuv420, 8, 161, 91, 1, false, 5),
            (ChromaLayout::Yuv444, 8, 64, 48, 2, true, 4),
            (ChromaLayout::Yuv420, 10, 163, 90, 2, false, 6),
            (ChromaLayout::Gray, 10, 129, 72, 1, false, 4),
            (ChromaLayout::Yuv444, 12, 97, 65, 1, false, 4),
            (ChromaLayout::Yuv420, 12, 401, 387, 2, false, 4),
            (ChromaLayout::Yuv420, 16, 130, 67, 1, false, 4),
            (ChromaLayout::Gray, 16, 64, 48, 1, true, 3),
            (ChromaLayout::Yuv420, 8, 1920, 1080, 1, false, 3),
            (ChromaLayout::Gray, 16, 2050, 1024, 1, false, 2),
        ];
        // Under compute-sanitizer's racecheck (gpu-check) the large pictures take minutes.
        let small_only = std::env::var("VMAF_RS_GPU_SMALL_CASES").as_deref() == Ok("1");
        for &(layout, bpc, w, h, sub, same, frames) in cases {
            if small_only && w * h > 1 << 18 {
                println!("{w}x{h}: not run (VMAF_RS_GPU_SMALL_CASES=1)");
                continue;
            }
            let fmt = PictureFormat {
                width: w,
                height: h,
                bpc,
                layout,
            };
            let features = vec![feat("float_moment", &[])];
            let (n, p) = upload_vs_cpu(fmt, features, sub, frames, same);
            let (gpu, cpu_side) = placement(&p);
            // On the GPU but at 16 bits above 2^21 pixels, where a sum could reach 2^53 units.
            if bpc == 16 && w * h > 1 << 21 {
                assert_eq!(gpu, ["adm", "motion", "vif"], "{p}");
                assert_eq!(cpu_side, ["float_moment"], "{p}");
            } else {
                assert_eq!(gpu, ["adm", "float_moment", "motion", "vif"], "{p}");
                assert!(cpu_side.is_empty(), "{p}");
            }
            println!(
                "bit-identical: float_moment {layout:?} {bpc}-bit {w}x{h} n_subsample={sub}{}{}: \
                 {n} frames",
                if same { " (identical frames)" } else { "" },
                if cpu_side.is_empty() {
                    ""
                } else {
                    " (CPU fallback)"
                }
            );
        }
        // CUDA frames as decoders give them: MSB-aligned samples, pitch above the width, garbage
        // in the padding and in coded rows below the picture.
        let layouts = [(163, 91, 10, 6, 192, 96), (321, 243, 12, 4, 384, 256)];
        for (w, h, bpc, shift, stride, rows) in layouts {
            let l = Layout {
                w,
                h,
                bpc,
                shift,
                stride,
                rows,
            };
            let name =
                format!("float_moment {bpc}-bit {w}x{h} shift {shift} pitch {stride}").leak();
            let mut c = case(name, l, 3);
            c.features = vec![feat("float_moment", &[])];
            c.n_subsample = 2;
            run_case(&c);
        }
    }

    /// float_ssim's kernels against the CPU, f64 bit for bit through the whole engine: 8, 10, 12
    /// and 16 bits, odd sizes, the default scale (1 on small pictures, 2 to 4 from 384 lines up),
    /// explicit scales 1, 2, 3 and 5, `enable_lcs`, `enable_db` with and without `clip_db`
    /// (identical frames: the capped value), n_subsample 2, several instances of different
    /// scales sharing the scratch in one engine, a 1080p map at scale 1 summed in chunks; and
    /// MSB-aligned, padded CUDA frames through the scorer directly.
    #[test]
    fn float_ssim_kernel_every_depth_and_option() {
        let _s = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let Some(_gpu) = Gpu::new(false) else { return };
        let lcs = [("enable_lcs", "true")];
        let db = [("enable_db", "true"), ("clip_db", "true")];
        // (bits, width, height, instances' options, n_subsample, distorted == reference, frames)
        type SsimCase<'a> = (
            u8,
            usize,
            usize,
            &'a [&'a [(&'a str, &'a str)]],
            u32,
            bool,
            u32,
        );
        let cases: &[SsimCase] = &[
            (8, 161, 91, &[&[], &lcs], 1, false, 5),
            (
                8,
                163,
                97,
                &[&[("scale", "2")], &[("scale", "3")]],
                2,
                false,
                6,
            ),
            (
                10,
                129,
                73,
                &[&[("scale", "2"), ("enable_lcs", "true")]],
                1,
                false,
                4,
            ),
            (10, 1280, 720, &[&[], &[("scale", "1")], &lcs], 1, false, 3),
            (
                12,
                97,
                65,
                &[&[("scale", "1"), ("enable_lcs", "true")]],
                1,
                false,
                4,
            ),
            (12, 401, 387, &[&[("scale", "5")], &[]], 2, false, 4),
            (
                16,
                130,
                67,
                &[&[("scale", "2")], &lcs, &[("enable_db", "true")]],
                1,
                false,
                4,
            ),
            (16, 64, 48, &[&db, &[("enable_db", "true")]], 1, true, 3),
            (
                8,
                1920,
                1080,
                &[&[], &[("scale", "1")], &[("scale", "2")]],
                1,
                false,
                2,
            ),
            (10, 1920, 1080, &[&lcs], 2, false, 3),
        ];
        // Under compute-sanitizer's racecheck (gpu-check) the large pictures take minutes.
        let small_only = std::env::var("VMAF_RS_GPU_SMALL_CASES").as_deref() == Ok("1");
        for &(bpc, w, h, instances, sub, same, frames) in cases {
            if small_only && w * h > 1 << 18 {
                println!("{w}x{h}: not run (VMAF_RS_GPU_SMALL_CASES=1)");
                continue;
            }
            for layout in [ChromaLayout::Yuv420, ChromaLayout::Gray] {
                if layout == ChromaLayout::Gray && w * h > 1 << 20 {
                    continue; // the large pictures once
                }
                let fmt = PictureFormat {
                    width: w,
                    height: h,
                    bpc,
                    layout,
                };
                let features = instances.iter().map(|o| feat("float_ssim", o)).collect();
                let (n, p) = upload_vs_cpu(fmt, features, sub, frames, same);
                let (mut gpu, cpu_side) = placement(&p);
                gpu.dedup(); // one entry per instance
                assert_eq!(gpu, ["adm", "float_ssim", "motion", "vif"], "{p}");
                assert!(cpu_side.is_empty(), "{p}");
                println!(
                    "bit-identical: float_ssim kernels {layout:?} {bpc}-bit {w}x{h} {instances:?} \
                     n_subsample={sub}{}: {n} frames",
                    if same { " (identical frames)" } else { "" }
                );
            }
        }
        // CUDA frames as decoders give them: MSB-aligned samples, pitch above the width, garbage
        // in the padding and in coded rows below the picture.
        let layouts = [
            (400, 386, 10, 6, 448, 392),    // default scale 2
            (321, 243, 12, 4, 384, 256),    // scale 1
            (1920, 1080, 8, 0, 2048, 1088), // default scale 4
        ];
        for (w, h, bpc, shift, stride, rows) in layouts {
            if small_only && w * h > 1 << 18 {
                println!("{w}x{h} frames: not run (VMAF_RS_GPU_SMALL_CASES=1)");
                continue;
            }
            let l = Layout {
                w,
                h,
                bpc,
                shift,
                stride,
                rows,
            };
            let name = format!("float_ssim {bpc}-bit {w}x{h} shift {shift} pitch {stride}").leak();
            let mut c = case(name, l, 3);
            c.features = vec![
                feat("float_ssim", &[("enable_lcs", "true")]),
                feat("float_ssim", &[("scale", "3")]),
            ];
            c.n_subsample = 2;
            run_case(&c);
        }
    }

    /// float_ms_ssim's kernels against the CPU, f64 bit for bit through the whole engine: 8, 10,
    /// 12 and 16 bits, odd sizes just above libvmaf's smallest (176: scale 4 is 11 wide, a map
    /// one pixel wide), `enable_lcs`, `enable_db` with and without `clip_db` (identical frames:
    /// the capped value), n_subsample 2, two instances sharing the scratch, 1080p (scale 0's map
    /// summed in chunks); and MSB-aligned, padded CUDA frames through the scorer directly, next
    /// to float_ssim.
    #[test]
    fn float_ms_ssim_kernel_every_depth_and_option() {
        let _s = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let Some(_gpu) = Gpu::new(false) else { return };
        let lcs = [("enable_lcs", "true")];
        let db = [("enable_db", "true"), ("clip_db", "true")];
        let db_lcs = [("enable_db", "true"), ("enable_lcs", "true")];
        // (bits, width, height, instances' options, n_subsample, distorted == reference, frames)
        type MsSsimCase<'a> = (
            u8,
            usize,
            usize,
            &'a [&'a [(&'a str, &'a str)]],
            u32,
            bool,
            u32,
        );
        let cases: &[MsSsimCase] = &[
            (8, 177, 176, &[&[], &lcs], 1, false, 4),
            (8, 179, 183, &[&db_lcs], 2, false, 5),
            (10, 193, 181, &[&lcs], 1, false, 4),
            (10, 176, 177, &[&[("enable_db", "true")]], 2, false, 4),
            (12, 211, 179, &[&lcs, &[("enable_db", "true")]], 1, false, 3),
            (16, 181, 191, &[&lcs], 1, false, 3),
            (16, 200, 190, &[&db, &[("enable_db", "true")]], 1, true, 3),
            (12, 201, 185, &[&db], 1, true, 2),
            (8, 1920, 1080, &[&[], &lcs], 1, false, 2),
            (10, 1920, 1080, &[&db_lcs], 2, false, 3),
        ];
        // Under compute-sanitizer's racecheck (gpu-check) the large pictures take minutes.
        let small_only = std::env::var("VMAF_RS_GPU_SMALL_CASES").as_deref() == Ok("1");
        for &(bpc, w, h, instances, sub, same, frames) in cases {
            if small_only && w * h > 1 << 18 {
                println!("{w}x{h}: not run (VMAF_RS_GPU_SMALL_CASES=1)");
                continue;
            }
            for layout in [ChromaLayout::Yuv420, ChromaLayout::Gray] {
                if layout == ChromaLayout::Gray && w * h > 1 << 20 {
                    continue; // the large pictures once
                }
                let fmt = PictureFormat {
                    width: w,
                    height: h,
                    bpc,
                    layout,
                };
                let features = instances.iter().map(|o| feat("float_ms_ssim", o)).collect();
                let (n, p) = upload_vs_cpu(fmt, features, sub, frames, same);
                let (mut gpu, cpu_side) = placement(&p);
                gpu.dedup(); // one entry per instance
                assert_eq!(gpu, ["adm", "float_ms_ssim", "motion", "vif"], "{p}");
                assert!(cpu_side.is_empty(), "{p}");
                println!(
                    "bit-identical: float_ms_ssim kernels {layout:?} {bpc}-bit {w}x{h} \
                     {instances:?} n_subsample={sub}{}: {n} frames",
                    if same { " (identical frames)" } else { "" }
                );
            }
        }
        // CUDA frames as decoders give them: MSB-aligned samples, pitch above the width, garbage
        // in the padding and in coded rows below the picture.
        let layouts = [(400, 386, 10, 6, 448, 392), (1920, 1080, 8, 0, 2048, 1088)];
        for (w, h, bpc, shift, stride, rows) in layouts {
            if small_only && w * h > 1 << 18 {
                println!("{w}x{h} frames: not run (VMAF_RS_GPU_SMALL_CASES=1)");
                continue;
            }
            let l = Layout {
                w,
                h,
                bpc,
                shift,
                stride,
                rows,
            };
            let name =
                format!("float_ms_ssim {bpc}-bit {w}x{h} shift {shift} pitch {stride}").leak();
            let mut c = case(name, l, 3);
            c.features = vec![
                feat("float_ms_ssim", &[("enable_lcs", "true")]),
                feat("float_ssim", &[]),
            ];
            c.n_subsample = 2;
            run_case(&c);
        }
    }

    /// psnr's and float_psnr's kernels against the CPU for every chroma layout, 8 to 16 bits, odd
    /// sizes (chroma rounded down as libvmaf does), every psnr option, identical frames (the
    /// capped values) and n_subsample with psnr's every-frame aggregate; and a 16-bit picture
    /// above 2^21 samples, whose float_psnr runs on the CPU fallback.
    #[test]
    fn psnr_kernels_every_layout_depth_and_option() {
        let _s = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let Some(_gpu) = Gpu::new(false) else { return };
        let all = [("enable_mse", "true"), ("enable_apsnr", "true")];
        // (layout, bits, width, height, psnr options, n_subsample, distorted == reference)
        type PsnrCase<'a> = (
            ChromaLayout,
            u8,
            usize,
            usize,
            &'a [(&'a str, &'a str)],
            u32,
            bool,
        );
        let cases: &[PsnrCase] = &[
            (ChromaLayout::Yuv420, 8, 161, 91, &all, 3, false),
            (ChromaLayout::Yuv420, 8, 64, 48, &all, 1, true),
            (
                ChromaLayout::Yuv422,
                10,
                163,
                90,
                &[("enable_mse", "true"), ("reduced_hbd_peak", "true")],
                1,
                false,
            ),
            (
                ChromaLayout::Yuv444,
                12,
                97,
                65,
                &[("min_sse", "0.5"), ("enable_apsnr", "true")],
                2,
                false,
            ),
            (ChromaLayout::Yuv420, 16, 130, 67, &all, 1, false),
            (ChromaLayout::Yuv420, 16, 64, 48, &all, 1, true),
            (
                ChromaLayout::Yuv420,
                10,
                129,
                72,
                &[("enable_chroma", "false")],
                1,
                false,
            ),
            (ChromaLayout::Gray, 10, 120, 70, &all, 1, false),
            (ChromaLayout::Gray, 16, 2050, 1024, &[], 1, false),
        ];
        for &(layout, bpc, w, h, opts, sub, same) in cases {
            let fmt = PictureFormat {
                width: w,
                height: h,
                bpc,
                layout,
            };
            let frames = if w * h > 1 << 20 { 3 } else { 7 };
            let features = vec![feat("psnr", opts), feat("float_psnr", &[])];
            let (n, p) = upload_vs_cpu(fmt, features, sub, frames, same);
            let (gpu, cpu_side) = placement(&p);
            // The default model's features and both psnr kinds on the GPU, but float_psnr at 16
            // bits above 2^21 samples.
            if bpc == 16 && w * h > 1 << 21 {
                assert_eq!(gpu, ["adm", "motion", "psnr", "vif"], "{p}");
                assert_eq!(cpu_side, ["float_psnr"], "{p}");
            } else {
                assert_eq!(gpu, ["adm", "float_psnr", "motion", "psnr", "vif"], "{p}");
                assert!(cpu_side.is_empty(), "{p}");
            }
            println!(
                "bit-identical: psnr/float_psnr kernels {layout:?} {bpc}-bit {w}x{h} {opts:?} n_subsample={sub}{}: {n} frames",
                if same { " (identical frames)" } else { "" }
            );
        }
    }

    /// float_motion's kernels against the CPU through the whole engine (host frames uploaded by
    /// `backend=cuda`): 8, 10, 12 and 16 bits, 4:2:0, 4:2:2, 4:4:4 and gray, odd sizes, every
    /// option (motion_add_uv with planar and interleaved nv12/p010-like chroma, motion_add_scale1
    /// alone and with motion_add_uv on 4:4:4, the 5-tap, 3-tap and no-op filters,
    /// motion_force_zero, fps weight, max_val, blend), two instances at once, n_subsample 2
    /// (motion2/motion3 from every frame); the placement line names float_motion on CUDA, and
    /// next to a feature without a kernel (ciede, on the CPU fallback) too.
    #[test]
    fn float_motion_kernel_every_depth_and_option() {
        let _s = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let Some(_gpu) = Gpu::new(false) else { return };
        let uv = ("motion_add_uv", "true");
        let scale1 = ("motion_add_scale1", "true");
        // (layout, bits, width, height, one option set per float_motion instance, n_subsample)
        type FmCase<'a> = (
            ChromaLayout,
            u8,
            usize,
            usize,
            &'a [&'a [(&'a str, &'a str)]],
            u32,
        );
        let cases: &[FmCase] = &[
            (ChromaLayout::Yuv420, 8, 161, 91, &[&[]], 1),
            (ChromaLayout::Yuv420, 8, 161, 91, &[&[uv]], 2),
            (ChromaLayout::Yuv420, 10, 163, 90, &[&[uv]], 2),
            (
                ChromaLayout::Yuv422,
                10,
                97,
                65,
                &[&[uv, ("motion_filter_size", "3")]],
                1,
            ),
            (
                ChromaLayout::Yuv444,
                12,
                97,
                65,
                &[&[
                    uv,
                    ("motion_filter_size", "1"),
                    ("motion_fps_weight", "2.5"),
                    ("motion_max_val", "3.5"),
                ]],
                1,
            ),
            (ChromaLayout::Yuv420, 16, 130, 67, &[&[uv], &[]], 2),
            (
                ChromaLayout::Yuv420,
                16,
                64,
                48,
                &[&[("motion_filter_size", "3")]],
                1,
            ),
            (
                ChromaLayout::Yuv420,
                8,
                64,
                48,
                &[
                    &[("motion_force_zero", "true")],
                    &[
                        ("motion_blend_factor", "0.3"),
                        ("motion_blend_offset", "2"),
                        ("debug", "false"),
                    ],
                ],
                2,
            ),
            (
                ChromaLayout::Yuv420,
                12,
                129,
                72,
                &[
                    &[("motion_filter_size", "0"), ("motion_max_val", "0.25")],
                    &[("motion_filter_size", "7")],
                ],
                1,
            ),
            (ChromaLayout::Gray, 10, 120, 70, &[&[]], 2),
            (ChromaLayout::Yuv420, 10, 163, 90, &[&[scale1], &[]], 2),
            (
                ChromaLayout::Yuv420,
                8,
                161,
                91,
                &[&[scale1, ("motion_filter_size", "3")]],
                1,
            ),
            (ChromaLayout::Yuv444, 8, 97, 65, &[&[uv, scale1]], 1),
            (ChromaLayout::Yuv444, 16, 98, 66, &[&[uv, scale1]], 2),
        ];
        for &(layout, bpc, w, h, sets, sub) in cases {
            let fmt = PictureFormat {
                width: w,
                height: h,
                bpc,
                layout,
            };
            let features = sets.iter().map(|o| feat("float_motion", o)).collect();
            let (n, p) = upload_vs_cpu(fmt, features, sub, 7, false);
            let (mut gpu, cpu_side) = placement(&p);
            gpu.dedup(); // one entry per instance
            assert_eq!(gpu, ["adm", "float_motion", "motion", "vif"], "{p}");
            assert!(cpu_side.is_empty(), "{p}");
            println!(
                "bit-identical: float_motion {layout:?} {bpc}-bit {w}x{h} {sets:?} n_subsample={sub}: {n} frames"
            );
        }

        // Next to an instance without a kernel: float_motion stays on CUDA, float_adm with
        // adm_p_norm 2 (per-sample powf) goes to the CPU fallback, both identical.
        let fmt = PictureFormat {
            width: 96,
            height: 64,
            bpc: 10,
            layout: ChromaLayout::Yuv444,
        };
        let features = vec![
            feat("float_motion", &[uv]),
            feat("float_adm", &[("adm_p_norm", "2")]),
        ];
        let (n, p) = upload_vs_cpu(fmt, features, 2, 7, false);
        let (gpu, cpu_side) = placement(&p);
        assert_eq!(gpu, ["adm", "float_motion", "motion", "vif"], "{p}");
        assert_eq!(cpu_side, ["float_adm"], "{p}");
        println!("bit-identical: float_motion on CUDA, float_adm on the CPU fallback: {n} frames");

        // Chroma from one interleaved CbCr plane (nv12, and p010-like: 10 bits stored 6 up).
        fn interleaved_vs_cpu(
            fmt: PictureFormat,
            shift: u8,
            features: Vec<FeatureSpec>,
            n_subsample: u32,
        ) -> String {
            let mut cfg = EngineConfig::new(fmt);
            cfg.features = features;
            cfg.n_subsample = n_subsample;
            let mut cpu = Engine::new(cfg.clone()).unwrap();
            cfg.backend = vmaf_rs::backend::Backend::Cuda;
            let mut eng = Engine::new(cfg).unwrap();
            let (w, h) = (fmt.width, fmt.height);
            let (cw, ch) = fmt.layout.chroma_size(w, h);
            let mut placement = String::new();
            for t in 0..7 {
                let y: Vec<u32> = picture(w, h, t, fmt.bpc, false);
                let (u, v) = (
                    picture(cw, ch, t + 100, fmt.bpc, false),
                    picture(cw, ch, t + 200, fmt.bpc, false),
                );
                let uv: Vec<u32> = u.iter().zip(&v).flat_map(|(&a, &b)| [a, b]).collect();
                let y16: Vec<u16> = y.iter().map(|&s| (s << shift) as u16).collect();
                let uv16: Vec<u16> = uv.iter().map(|&s| (s << shift) as u16).collect();
                let y8: Vec<u8> = y.iter().map(|&s| s as u8).collect();
                let uv8: Vec<u8> = uv.iter().map(|&s| s as u8).collect();
                let (luma, chroma) = if fmt.bpc == 8 {
                    (
                        Plane::new_u8(&y8, w, h, w).unwrap(),
                        Plane::new_u8(&uv8, 2 * cw, ch, 2 * cw).unwrap(),
                    )
                } else {
                    (
                        Plane::new_u16(&y16, w, h, w).unwrap(),
                        Plane::new_u16(&uv16, 2 * cw, ch, 2 * cw).unwrap(),
                    )
                };
                let pic = Picture::with_shift(fmt, luma, shift)
                    .unwrap()
                    .with_chroma(vmaf_rs::Chroma::Interleaved(chroma))
                    .unwrap();
                cpu.send(&pic, &pic).unwrap();
                eng.send(&pic, &pic).unwrap();
                if t == 0 {
                    placement = eng
                        .take_placement()
                        .expect("placement after the first frame");
                }
            }
            cpu.flush().unwrap();
            eng.flush().unwrap();
            assert_eq!(cpu.columns(), eng.columns());
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            let mut n = 0;
            while let Some(a) = cpu.receive() {
                let b = eng.receive().expect("as many frames");
                assert_eq!(
                    bits(&a.values),
                    bits(&b.values),
                    "{fmt:?} interleaved: frame {}: cpu {:?} cuda {:?}",
                    a.index,
                    a.values,
                    b.values
                );
                n += 1;
            }
            assert_eq!(n, 7u32.div_ceil(n_subsample), "{fmt:?}: every scored frame");
            placement
        }
        let nv12 = PictureFormat {
            width: 161,
            height: 91,
            bpc: 8,
            layout: ChromaLayout::Yuv420,
        };
        let p010 = PictureFormat {
            width: 163,
            height: 90,
            bpc: 10,
            layout: ChromaLayout::Yuv420,
        };
        for (fmt, shift, opts) in [
            (nv12, 0, &[uv][..]),
            (p010, 6, &[uv, ("motion_filter_size", "3")][..]),
        ] {
            let p = interleaved_vs_cpu(fmt, shift, vec![feat("float_motion", opts)], 2);
            let (gpu, cpu_side) = placement(&p);
            assert_eq!(gpu, ["adm", "float_motion", "motion", "vif"], "{p}");
            assert!(cpu_side.is_empty(), "{p}");
            println!(
                "bit-identical: float_motion {fmt:?} interleaved chroma, shift {shift}, {opts:?}"
            );
        }
    }

    /// Writes an 8-bit 4:2:0 y4m of `frames` frames.
    fn write_y4m(path: &std::path::Path, w: usize, h: usize, frames: u32, distorted: bool) {
        let mut out = format!("YUV4MPEG2 W{w} H{h} F25:1 Ip A1:1 C420jpeg\n").into_bytes();
        for t in 0..frames {
            out.extend_from_slice(b"FRAME\n");
            for p in yuv420(w, h, t, 8, distorted) {
                out.extend(p.into_iter().map(|v| v as u8));
            }
        }
        std::fs::write(path, out).unwrap();
    }

    /// The CLI's `--backend cuda` gives the CPU's log, value for value: with ciede's kernel, and
    /// with ciede sent to the CPU fallback by `VMAF_RS_CUDA_ON_CPU` (chroma planes downloaded
    /// from the GPU: every chroma feature has kernels, so this is how that path stays tested).
    #[test]
    fn cli_backend_cuda_matches_cpu() {
        let _s = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let Some(_gpu) = Gpu::new(false) else { return };
        let cli = std::env::var_os("VMAF_RS_CLI")
            .map(std::path::PathBuf::from)
            .unwrap_or_else(|| env!("CARGO_BIN_EXE_vmaf-rs").into());
        let dir = std::env::temp_dir().join(format!("vmaf_rs_cli_cuda_{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (r, d) = (dir.join("ref.y4m"), dir.join("dis.y4m"));
        write_y4m(&r, 160, 90, 6, false);
        write_y4m(&d, 160, 90, 6, true);
        // (backend, VMAF_RS_CUDA_ON_CPU, features expected on the CPU fallback)
        let run = |backend: &str, on_cpu: &str, fallback: &[&str]| -> serde_json::Value {
            let log = dir.join(format!("{backend}{on_cpu}.json"));
            let o = std::process::Command::new(&cli)
                .args(["-r", r.to_str().unwrap(), "-d", d.to_str().unwrap()])
                .args([
                    "--feature",
                    "psnr",
                    "--feature",
                    "ciede",
                    "--json",
                    "-q",
                    "-v",
                ])
                .args(["--backend", backend, "-o", log.to_str().unwrap()])
                .env("VMAF_RS_CUDA_ON_CPU", on_cpu)
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&o.stderr);
            assert!(o.status.success(), "vmaf-rs --backend {backend}: {err}");
            if backend == "cuda" {
                let line = err.lines().find(|l| l.contains("on CUDA: ")).unwrap_or("");
                let (gpu, cpu_side) = placement(line);
                let mut want = vec!["adm", "ciede", "motion", "psnr", "vif"];
                want.retain(|f| !fallback.contains(f));
                assert_eq!(gpu, want, "{err}");
                assert_eq!(cpu_side, fallback, "{err}");
            }
            serde_json::from_str(&std::fs::read_to_string(log).unwrap()).unwrap()
        };
        let a = run("cpu", "", &[]);
        for (on_cpu, fallback) in [("", &[][..]), ("ciede", &["ciede"][..])] {
            let b = run("cuda", on_cpu, fallback);
            assert_eq!(a["frames"], b["frames"], "VMAF_RS_CUDA_ON_CPU={on_cpu}");
            assert_eq!(a["pooled_metrics"], b["pooled_metrics"]);
        }
        assert_eq!(a["frames"].as_array().unwrap().len(), 6);
        eprintln!(
            "vmaf-rs --backend cuda: 6 frames, logs with ciede on CUDA and on the fallback \
             identical to --backend cpu"
        );
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    #[ignore]
    fn bench_throughput() {
        let _s = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let Some(gpu) = Gpu::new(false) else { return };
        bench_size(&gpu, 1920, 1080, 600);
        bench_size(&gpu, 3840, 2160, 200);
    }

    /// float_vif's kernels against the CPU, f64 bit for bit through the whole engine (host frames
    /// uploaded by `backend=cuda`): 8, 10, 12 and 16 bits, 4:2:0, 4:4:4 and gray, odd sizes,
    /// identical frames, n_subsample 2, two instances of different options in one engine, a 1080p
    /// picture, every option (debug, vif_enhn_gain_limit, vif_kernelscale from 0.5 to 360/97 with
    /// its 65 taps, vif_sigma_nsq including 0 on flat areas, where the CPU's 0 / 0 NaN reaches the
    /// log2, vif_skip_scale0, the three min values, vif_prescale with each method, a prescale that
    /// keeps the size); and MSB-aligned, padded CUDA frames through the scorer directly.
    #[test]
    fn float_vif_kernel_every_depth_and_option() {
        let _s = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let Some(_gpu) = Gpu::new(false) else { return };
        let debug = ("debug", "true");
        let skip0 = ("vif_skip_scale0", "true");
        // (layout, bits, width, height, instances' options, n_subsample, distorted == reference,
        // frames)
        type VifCase<'a> = (
            ChromaLayout,
            u8,
            usize,
            usize,
            &'a [&'a [(&'a str, &'a str)]],
            u32,
            bool,
            u32,
        );
        let cases: &[VifCase] = &[
            (ChromaLayout::Yuv420, 8, 161, 91, &[&[]], 1, false, 4),
            (ChromaLayout::Yuv420, 8, 161, 91, &[&[debug]], 2, true, 5),
            (
                ChromaLayout::Yuv420,
                10,
                163,
                90,
                &[
                    &[
                        debug,
                        ("vif_enhn_gain_limit", "1.2"),
                        ("vif_sigma_nsq", "1.5"),
                    ],
                    &[],
                ],
                2,
                false,
                5,
            ),
            (
                ChromaLayout::Yuv444,
                12,
                97,
                65,
                &[
                    &[("vif_kernelscale", "0.5"), debug],
                    &[("vif_kernelscale", "3")],
                ],
                1,
                false,
                3,
            ),
            (
                ChromaLayout::Gray,
                16,
                130,
                67,
                &[&[("vif_kernelscale", "2"), ("vif_sigma_nsq", "5")]],
                1,
                false,
                3,
            ),
            (
                ChromaLayout::Yuv420,
                12,
                129,
                72,
                &[
                    &[("vif_kernelscale", "3.7113402"), debug],
                    &[
                        ("vif_kernelscale", "0.711111"),
                        ("vif_enhn_gain_limit", "1"),
                    ],
                ],
                1,
                false,
                3,
            ),
            (
                ChromaLayout::Yuv420,
                8,
                120,
                70,
                &[
                    &[skip0, debug],
                    &[
                        ("vif_scale1_min_val", "0.97"),
                        ("vif_scale2_min_val", "0.99"),
                        ("vif_scale3_min_val", "0.995"),
                        ("vif_kernelscale", "1.5"),
                    ],
                ],
                2,
                false,
                4,
            ),
            (
                ChromaLayout::Yuv420,
                10,
                161,
                91,
                &[
                    &[("vif_prescale", "0.5"), debug],
                    &[("vif_prescale", "1.5"), ("vif_prescale_method", "bilinear")],
                ],
                1,
                false,
                3,
            ),
            (
                ChromaLayout::Yuv444,
                8,
                163,
                97,
                &[
                    &[
                        ("vif_prescale", "0.75"),
                        ("vif_prescale_method", "bicubic"),
                        debug,
                    ],
                    &[
                        ("vif_prescale", "1.25"),
                        ("vif_prescale_method", "lanczos4"),
                        ("vif_kernelscale", "0.5"),
                    ],
                ],
                1,
                false,
                3,
            ),
            (
                ChromaLayout::Gray,
                16,
                161,
                91,
                &[
                    &[
                        ("vif_prescale", "0.75"),
                        ("vif_prescale_method", "lanczos4"),
                        ("vif_kernelscale", "0.5"),
                    ],
                    // Rounds back to 161x91: libvmaf copies.
                    &[
                        ("vif_prescale", "1.001"),
                        ("vif_prescale_method", "bicubic"),
                    ],
                ],
                2,
                false,
                3,
            ),
            (
                ChromaLayout::Yuv420,
                8,
                1920,
                1080,
                &[&[debug]],
                1,
                false,
                2,
            ),
            (
                ChromaLayout::Yuv420,
                10,
                1920,
                1080,
                &[&[("vif_prescale", "0.5"), ("vif_prescale_method", "bicubic")]],
                1,
                false,
                2,
            ),
        ];
        // Under compute-sanitizer's racecheck (gpu-check) the large pictures take minutes.
        let small_only = std::env::var("VMAF_RS_GPU_SMALL_CASES").as_deref() == Ok("1");
        for &(layout, bpc, w, h, sets, sub, same, frames) in cases {
            if small_only && w * h > 1 << 18 {
                println!("{w}x{h}: not run (VMAF_RS_GPU_SMALL_CASES=1)");
                continue;
            }
            let fmt = PictureFormat {
                width: w,
                height: h,
                bpc,
                layout,
            };
            let features = sets.iter().map(|o| feat("float_vif", o)).collect();
            let (n, p) = upload_vs_cpu(fmt, features, sub, frames, same);
            let (mut gpu, cpu_side) = placement(&p);
            gpu.dedup(); // one entry per instance
            assert_eq!(gpu, ["adm", "float_vif", "motion", "vif"], "{p}");
            assert!(cpu_side.is_empty(), "{p}");
            println!(
                "bit-identical: float_vif {layout:?} {bpc}-bit {w}x{h} {sets:?} \
                 n_subsample={sub}{}: {n} frames",
                if same { " (identical frames)" } else { "" }
            );
        }

        // Flat areas: the reference's top half is 128 (float 0), so sigma1_sq is exactly 0 there;
        // with vif_sigma_nsq=0 the CPU divides 0 by 0 and feeds the NaN to its log2.
        let (w, h) = (96, 80);
        let fmt = PictureFormat {
            width: w,
            height: h,
            bpc: 8,
            layout: ChromaLayout::Gray,
        };
        for opts in [&[("vif_sigma_nsq", "0"), debug][..], &[debug][..]] {
            let mut cfg = EngineConfig::new(fmt);
            cfg.features = vec![feat("float_vif", opts)];
            let mut cpu = Engine::new(cfg.clone()).unwrap();
            cfg.backend = vmaf_rs::backend::Backend::Cuda;
            let mut eng = Engine::new(cfg).unwrap();
            let mut placement_line = String::new();
            for t in 0..3 {
                let mut r: Vec<u8> = picture(w, h, t, 8, false)
                    .iter()
                    .map(|&v| v as u8)
                    .collect();
                r[..w * h / 2].fill(128);
                let d: Vec<u8> = picture(w, h, t, 8, true).iter().map(|&v| v as u8).collect();
                let pr = Picture::new(fmt, Plane::new_u8(&r, w, h, w).unwrap()).unwrap();
                let pd = Picture::new(fmt, Plane::new_u8(&d, w, h, w).unwrap()).unwrap();
                cpu.send(&pr, &pd).unwrap();
                eng.send(&pr, &pd).unwrap();
                if t == 0 {
                    placement_line = eng
                        .take_placement()
                        .expect("placement after the first frame");
                }
            }
            cpu.flush().unwrap();
            eng.flush().unwrap();
            let (gpu, cpu_side) = placement(&placement_line);
            assert_eq!(
                gpu,
                ["adm", "float_vif", "motion", "vif"],
                "{placement_line}"
            );
            assert!(cpu_side.is_empty(), "{placement_line}");
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            let mut n = 0;
            while let Some(a) = cpu.receive() {
                let b = eng.receive().expect("as many frames");
                assert_eq!(
                    bits(&a.values),
                    bits(&b.values),
                    "flat {opts:?}: frame {}: cpu {:?} cuda {:?}",
                    a.index,
                    a.values,
                    b.values
                );
                n += 1;
            }
            assert_eq!(n, 3);
            println!("bit-identical: float_vif flat half {w}x{h} {opts:?}: {n} frames");
        }

        // CUDA frames as decoders give them: MSB-aligned samples, pitch above the width, garbage
        // in the padding and in coded rows below the picture.
        let layouts = [(163, 91, 10, 6, 192, 96), (321, 243, 12, 4, 384, 256)];
        for (w, h, bpc, shift, stride, rows) in layouts {
            let l = Layout {
                w,
                h,
                bpc,
                shift,
                stride,
                rows,
            };
            let name = format!("float_vif {bpc}-bit {w}x{h} shift {shift} pitch {stride}").leak();
            let mut c = case(name, l, 3);
            c.features = vec![
                feat("float_vif", &[debug]),
                feat(
                    "float_vif",
                    &[
                        ("vif_prescale", "0.75"),
                        ("vif_prescale_method", "bilinear"),
                    ],
                ),
            ];
            c.n_subsample = 2;
            run_case(&c);
        }
    }

    /// Banded synthetic content for cambi (flat runs a level or two apart, noise on the right
    /// third, which alone has noisy low bits), as 16-bit words below 2^bpc.
    fn cambi_picture(w: usize, h: usize, t: u32, bpc: u8, distorted: bool) -> Vec<u32> {
        let lo = bpc as u32 - 8;
        let mut v = Vec::with_capacity(w * h);
        for y in 0..h {
            for x in 0..w {
                let n = hash(x as u32, y as u32, t, 11 + distorted as u32);
                let mut s = 60 + ((x + 2 * y + 3 * t as usize) / 23 % 40) as u32;
                let noisy = x > 2 * w / 3;
                if noisy || (distorted && n.is_multiple_of(31)) {
                    s += n % 3;
                }
                let low = if noisy { (n >> 8) & ((1 << lo) - 1) } else { 0 };
                v.push(((s << lo) | low).min((1 << bpc) - 1));
            }
        }
        v
    }

    /// One stream of banded pictures scored with `backend=cuda` (uploads) and on the CPU: every
    /// value's f64 bits; returns the frames compared and the placement line.
    fn cambi_vs_cpu(
        fmt: PictureFormat,
        features: Vec<FeatureSpec>,
        n_subsample: u32,
        frames: u32,
        same: bool,
    ) -> (usize, String) {
        let mut cfg = EngineConfig::new(fmt);
        cfg.features = features;
        cfg.n_subsample = n_subsample;
        let mut cpu = Engine::new(cfg.clone()).unwrap();
        cfg.backend = vmaf_rs::backend::Backend::Cuda;
        let mut eng = Engine::new(cfg).unwrap();
        let (cw, ch) = fmt.layout.chroma_size(fmt.width, fmt.height);
        let mut placement = String::new();
        for t in 0..frames {
            let planes = |distorted: bool| -> Vec<(Vec<u32>, usize, usize)> {
                let mut v = vec![(
                    cambi_picture(fmt.width, fmt.height, t, fmt.bpc, distorted),
                    fmt.width,
                    fmt.height,
                )];
                if fmt.layout != ChromaLayout::Gray {
                    for k in [100, 200] {
                        v.push((picture(cw, ch, t + k, fmt.bpc, distorted), cw, ch));
                    }
                }
                v
            };
            let (r, d) = (planes(false), planes(same));
            let p8 = |v: &[(Vec<u32>, usize, usize)]| -> Vec<Vec<u8>> {
                v.iter()
                    .map(|p| p.0.iter().map(|&x| x as u8).collect())
                    .collect()
            };
            let p16 = |v: &[(Vec<u32>, usize, usize)]| -> Vec<Vec<u16>> {
                v.iter()
                    .map(|p| p.0.iter().map(|&x| x as u16).collect())
                    .collect()
            };
            let (r8, d8, r16, d16) = (p8(&r), p8(&d), p16(&r), p16(&d));
            let sizes: Vec<(usize, usize)> = r.iter().map(|p| (p.1, p.2)).collect();
            fn build<'a>(
                fmt: PictureFormat,
                sizes: &[(usize, usize)],
                p8: &'a [Vec<u8>],
                p16: &'a [Vec<u16>],
            ) -> Picture<'a> {
                let make = |k: usize| {
                    let (w, h) = sizes[k];
                    if fmt.bpc == 8 {
                        Plane::new_u8(&p8[k], w, h, w).unwrap()
                    } else {
                        Plane::new_u16(&p16[k], w, h, w).unwrap()
                    }
                };
                let p = Picture::new(fmt, make(0)).unwrap();
                if sizes.len() == 1 {
                    p
                } else {
                    p.with_chroma(vmaf_rs::Chroma::Planar(make(1), make(2)))
                        .unwrap()
                }
            }
            let (pr, pd) = (build(fmt, &sizes, &r8, &r16), build(fmt, &sizes, &d8, &d16));
            cpu.send(&pr, &pd).unwrap();
            eng.send(&pr, &pd).unwrap();
            if t == 0 {
                placement = eng
                    .take_placement()
                    .expect("placement after the first frame");
            }
        }
        cpu.flush().unwrap();
        eng.flush().unwrap();
        assert_eq!(cpu.columns(), eng.columns());
        let mut n = 0;
        while let Some(a) = cpu.receive() {
            let b = eng.receive().expect("as many frames");
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(
                bits(&a.values),
                bits(&b.values),
                "{fmt:?}: frame {}: cpu {:?} cuda {:?}",
                a.index,
                a.values,
                b.values
            );
            n += 1;
        }
        assert_eq!(cpu.aggregates(), eng.aggregates(), "{fmt:?}: aggregates");
        (n, placement)
    }

    /// cambi's kernels against the CPU, f64 bit for bit through the whole engine (host frames
    /// uploaded by `backend=cuda`), on banded pictures: 8, 10, 12 and 16 bits, 4:2:0 and gray,
    /// odd sizes, identical frames, n_subsample 2, the v1.0.16 models' options at 1080p and 4K
    /// (`cambi_high_res_speedup` 1080 halves 4K before scale 0), every option (encoding size and
    /// depth: resampling and anti-dithering; full_ref with a larger source: libvmaf's shifted
    /// 10-bit rows; window, topk, tvi, eotf, max_log_contrast, heatmaps compared byte for byte);
    /// and MSB-aligned, padded CUDA frames through the scorer directly.
    #[test]
    fn cambi_kernel_every_depth_and_option() {
        let _s = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let Some(_gpu) = Gpu::new(false) else { return };
        let v1016: &[(&str, &str)] = &[
            ("cambi_high_res_speedup", "1080"),
            ("cambi_vis_lum_threshold", "0.06"),
            ("cambi_max_val", "17.0"),
        ];
        // (layout, bits, width, height, options, n_subsample, distorted == reference, frames)
        type CambiCase<'a> = (
            ChromaLayout,
            u8,
            usize,
            usize,
            &'a [(&'a str, &'a str)],
            u32,
            bool,
            u32,
        );
        let cases: &[CambiCase] = &[
            (ChromaLayout::Yuv420, 8, 333, 217, &[], 1, false, 3),
            (ChromaLayout::Gray, 8, 217, 16, &[], 1, false, 2),
            (
                ChromaLayout::Yuv420,
                10,
                301,
                229,
                &[("full_ref", "true")],
                2,
                false,
                4,
            ),
            (
                ChromaLayout::Gray,
                10,
                303,
                231,
                &[("full_ref", "true")],
                1,
                true,
                2,
            ),
            (
                ChromaLayout::Gray,
                10,
                320,
                240,
                &[
                    ("full_ref", "true"),
                    ("src_width", "400"),
                    ("src_height", "300"),
                ],
                1,
                false,
                3,
            ),
            (
                ChromaLayout::Yuv420,
                12,
                400,
                250,
                &[
                    ("enc_width", "350"),
                    ("enc_height", "220"),
                    ("enc_bitdepth", "8"),
                ],
                1,
                false,
                3,
            ),
            (
                ChromaLayout::Gray,
                16,
                256,
                230,
                &[("max_log_contrast", "5"), ("topk", "0.2")],
                1,
                false,
                2,
            ),
            (
                ChromaLayout::Yuv420,
                10,
                261,
                219,
                &[
                    ("eotf", "pq"),
                    ("tvi_threshold", "0.03"),
                    ("cambi_topk", "0.1"),
                ],
                1,
                false,
                2,
            ),
            (
                ChromaLayout::Gray,
                8,
                263,
                221,
                &[
                    ("cambi_eotf", "pq"),
                    ("window_size", "31"),
                    ("max_log_contrast", "0"),
                ],
                1,
                false,
                2,
            ),
            (ChromaLayout::Yuv420, 10, 262, 218, v1016, 1, false, 2),
            (ChromaLayout::Yuv420, 8, 1920, 1080, v1016, 1, false, 2),
            (ChromaLayout::Gray, 10, 1921, 1081, &[], 2, false, 3),
            (ChromaLayout::Yuv420, 8, 3840, 2160, v1016, 1, false, 2),
            (ChromaLayout::Gray, 10, 3840, 2160, &[], 1, false, 1),
        ];
        // Under compute-sanitizer's racecheck (gpu-check) the large pictures take minutes.
        let small_only = std::env::var("VMAF_RS_GPU_SMALL_CASES").as_deref() == Ok("1");
        for &(layout, bpc, w, h, opts, sub, same, frames) in cases {
            if small_only && w * h > 1 << 18 {
                println!("{w}x{h}: not run (VMAF_RS_GPU_SMALL_CASES=1)");
                continue;
            }
            let fmt = PictureFormat {
                width: w,
                height: h,
                bpc,
                layout,
            };
            let (n, p) = cambi_vs_cpu(fmt, vec![feat("cambi", opts)], sub, frames, same);
            let (gpu, cpu_side) = placement(&p);
            assert!(gpu.iter().any(|f| f == "cambi"), "{p}");
            assert!(!cpu_side.iter().any(|f| f == "cambi"), "{p}");
            println!(
                "bit-identical: cambi {layout:?} {bpc}-bit {w}x{h} {opts:?} n_subsample={sub}{}: \
                 {n} frames",
                if same { " (identical frames)" } else { "" }
            );
        }
        // Heatmaps: the CPU's and the GPU's files, byte for byte (n_subsample 2 leaves holes).
        let base = std::env::temp_dir().join(format!("vmaf_rs_cambi_hm_{}", std::process::id()));
        let (da, db) = (base.join("cpu"), base.join("cuda"));
        let fmt = PictureFormat {
            width: 331,
            height: 223,
            bpc: 8,
            layout: ChromaLayout::Gray,
        };
        let mut cfg = EngineConfig::new(fmt);
        cfg.n_subsample = 2;
        let run = |dir: &std::path::Path, cuda: bool| {
            let mut c = cfg.clone();
            c.features = vec![feat("cambi", &[("heatmaps_path", dir.to_str().unwrap())])];
            if cuda {
                c.backend = vmaf_rs::backend::Backend::Cuda;
            }
            let mut e = Engine::new(c).unwrap();
            for t in 0..5 {
                let r: Vec<u8> = cambi_picture(331, 223, t, 8, false)
                    .iter()
                    .map(|&v| v as u8)
                    .collect();
                let d: Vec<u8> = cambi_picture(331, 223, t, 8, true)
                    .iter()
                    .map(|&v| v as u8)
                    .collect();
                let pr = Picture::new(fmt, Plane::new_u8(&r, 331, 223, 331).unwrap()).unwrap();
                let pd = Picture::new(fmt, Plane::new_u8(&d, 331, 223, 331).unwrap()).unwrap();
                e.send(&pr, &pd).unwrap();
            }
            e.flush().unwrap();
            let mut v = Vec::new();
            while let Some(f) = e.receive() {
                v.push(f.values.iter().map(|x| x.to_bits()).collect::<Vec<_>>());
            }
            v
        };
        let (a, b) = (run(&da, false), run(&db, true));
        assert_eq!(a, b, "cambi with heatmaps_path");
        let mut names: Vec<_> = std::fs::read_dir(&da)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        names.sort();
        assert_eq!(names.len(), 5);
        for name in &names {
            let (x, y) = (
                std::fs::read(da.join(name)).unwrap(),
                std::fs::read(db.join(name)).unwrap(),
            );
            assert!(x == y, "heatmap {name:?} differs");
        }
        std::fs::remove_dir_all(&base).ok();
        println!("bit-identical: cambi heatmaps_path 331x223 n_subsample=2: 5 files identical");
        // CUDA frames as decoders give them: MSB-aligned samples, pitch above the width, garbage
        // in the padding and in coded rows below the picture.
        let layouts = [(333, 219, 10, 6, 384, 224), (1920, 1080, 8, 0, 2048, 1088)];
        for (w, h, bpc, shift, stride, rows) in layouts {
            if small_only && w * h > 1 << 18 {
                println!("{w}x{h} frames: not run (VMAF_RS_GPU_SMALL_CASES=1)");
                continue;
            }
            let gpu = Gpu::new(false).unwrap();
            let l = Layout {
                w,
                h,
                bpc,
                shift,
                stride,
                rows,
            };
            let fmt = PictureFormat {
                width: w,
                height: h,
                bpc,
                layout: ChromaLayout::Yuv420,
            };
            let mut cfg = EngineConfig::new(fmt);
            cfg.models = Vec::new();
            cfg.features = vec![feat("cambi", v1016), feat("cambi", &[("full_ref", "true")])];
            let mut cpu = Engine::new(cfg.clone()).unwrap();
            let mut eng = Engine::new(cfg).unwrap();
            let mut scorer = CudaScorer::for_engine(
                gpu.ctx as *mut c_void,
                gpu.stream as *mut c_void,
                &eng,
                l.shift,
            )
            .unwrap();
            assert!(
                !scorer.placement().contains("no CUDA kernel yet): cambi"),
                "{}",
                scorer.placement()
            );
            let mut planes = Vec::new();
            let mut row = Vec::new();
            for t in 0..3 {
                let r = host_plane(&l, &cambi_picture(w, h, t, bpc, false));
                let d = host_plane(&l, &cambi_picture(w, h, t, bpc, true));
                let (rw, dw) = (words(&r), words(&d));
                cpu.send(
                    &cpu_picture(&l, fmt, &r, &rw),
                    &cpu_picture(&l, fmt, &d, &dw),
                )
                .unwrap();
                gpu.current();
                let (dr, dd) = (DevPlane::upload(&r), DevPlane::upload(&d));
                let pitch = l.stride * if bpc > 8 { 2 } else { 1 };
                scorer
                    .submit(CudaFrame::new(dr.ptr, pitch), CudaFrame::new(dd.ptr, pitch))
                    .unwrap();
                planes.push((dr, dd));
                while scorer.poll(&mut row).unwrap() {
                    eng.push_spatial(&row).unwrap();
                }
            }
            scorer
                .drain(&mut |row| eng.push_spatial(row).unwrap())
                .unwrap();
            drop(scorer);
            cpu.flush().unwrap();
            eng.flush().unwrap();
            let mut n = 0;
            while let Some(a) = cpu.receive() {
                let b = eng.receive().unwrap();
                let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(&a.values), bits(&b.values), "{l:?} frame {}", a.index);
                n += 1;
            }
            drop(planes);
            println!(
                "bit-identical: cambi CUDA frames {bpc}-bit {w}x{h} shift {shift} pitch {stride}: \
                 {n} frames"
            );
        }
    }

    /// float_ansnr's kernels against the CPU, f64 bit for bit through the whole engine (host
    /// frames uploaded by `backend=cuda`): 8, 10, 12 and 16 bits, 4:2:0, 4:4:4 and gray, odd
    /// sizes, identical frames (noise 0: the capped values), n_subsample 2, a 1080p picture
    /// (it has no options); and MSB-aligned, padded CUDA frames through the scorer directly.
    #[test]
    fn float_ansnr_kernel_every_depth_and_option() {
        let _s = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let Some(_gpu) = Gpu::new(false) else { return };
        // (layout, bits, width, height, n_subsample, distorted == reference, frames)
        type AnsnrCase = (ChromaLayout, u8, usize, usize, u32, bool, u32);
        let cases: &[AnsnrCase] = &[
            (ChromaLayout::Yuv420, 8, 161, 91, 1, false, 5),
            (ChromaLayout::Yuv444, 8, 64, 48, 2, true, 4),
            (ChromaLayout::Yuv420, 10, 163, 90, 2, false, 6),
            (ChromaLayout::Gray, 10, 129, 72, 1, false, 4),
            (ChromaLayout::Yuv444, 12, 97, 65, 1, false, 4),
            (ChromaLayout::Yuv420, 12, 401, 387, 2, false, 4),
            (ChromaLayout::Yuv420, 16, 130, 67, 1, false, 4),
            (ChromaLayout::Gray, 16, 64, 48, 1, true, 3),
            (ChromaLayout::Yuv420, 8, 17, 16, 1, false, 3),
            (ChromaLayout::Yuv420, 8, 1920, 1080, 1, false, 3),
            (ChromaLayout::Gray, 16, 2050, 1024, 1, false, 2),
        ];
        // Under compute-sanitizer's racecheck (gpu-check) the large pictures take minutes.
        let small_only = std::env::var("VMAF_RS_GPU_SMALL_CASES").as_deref() == Ok("1");
        for &(layout, bpc, w, h, sub, same, frames) in cases {
            if small_only && w * h > 1 << 18 {
                println!("{w}x{h}: not run (VMAF_RS_GPU_SMALL_CASES=1)");
                continue;
            }
            let fmt = PictureFormat {
                width: w,
                height: h,
                bpc,
                layout,
            };
            // Two instances: they share the scratch.
            let features = vec![feat("float_ansnr", &[]), feat("float_ansnr", &[])];
            let (n, p) = upload_vs_cpu(fmt, features, sub, frames, same);
            let (mut gpu, cpu_side) = placement(&p);
            gpu.dedup(); // one entry per instance
            assert_eq!(gpu, ["adm", "float_ansnr", "motion", "vif"], "{p}");
            assert!(cpu_side.is_empty(), "{p}");
            println!(
                "bit-identical: float_ansnr {layout:?} {bpc}-bit {w}x{h} n_subsample={sub}{}: \
                 {n} frames",
                if same { " (identical frames)" } else { "" },
            );
        }
        // CUDA frames as decoders give them: MSB-aligned samples, pitch above the width, garbage
        // in the padding and in coded rows below the picture.
        let layouts = [
            (163, 91, 10, 6, 192, 96),
            (321, 243, 12, 4, 384, 256),
            (161, 90, 8, 0, 256, 96),
        ];
        for (w, h, bpc, shift, stride, rows) in layouts {
            let l = Layout {
                w,
                h,
                bpc,
                shift,
                stride,
                rows,
            };
            let name = format!("float_ansnr {bpc}-bit {w}x{h} shift {shift} pitch {stride}").leak();
            let mut c = case(name, l, 3);
            c.features = vec![feat("float_ansnr", &[])];
            c.n_subsample = 2;
            run_case(&c);
            println!("bit-identical: {name}");
        }
    }

    /// psnr_hvs's kernels against the CPU, f64 bit for bit through the whole engine (host frames
    /// uploaded by `backend=cuda`): 8, 10 and 12 bits (libvmaf refuses more, and gray), 4:2:0,
    /// 4:2:2 and 4:4:4, odd sizes (chroma rounded down), the smallest picture with whole chroma
    /// blocks, identical frames (the infinite values), n_subsample 2, two instances sharing the
    /// scratch, a 1080p picture (it has no options); and CUDA frames through the scorer directly
    /// with chroma read from the frames: planar and padded with MSB-aligned samples, and one
    /// interleaved CbCr plane (nv12, p010).
    #[test]
    fn psnr_hvs_kernel_every_depth_and_option() {
        let _s = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let Some(gpu) = Gpu::new(false) else { return };
        // (layout, bits, width, height, n_subsample, distorted == reference, frames)
        type HvsCase = (ChromaLayout, u8, usize, usize, u32, bool, u32);
        let cases: &[HvsCase] = &[
            (ChromaLayout::Yuv420, 8, 161, 91, 1, false, 5),
            (ChromaLayout::Yuv444, 8, 64, 48, 2, true, 4),
            (ChromaLayout::Yuv420, 10, 163, 90, 2, false, 6),
            (ChromaLayout::Yuv422, 10, 97, 65, 1, false, 4),
            (ChromaLayout::Yuv444, 12, 97, 65, 1, false, 4),
            (ChromaLayout::Yuv420, 12, 401, 387, 2, false, 4),
            (ChromaLayout::Yuv420, 8, 16, 16, 1, false, 3),
            (ChromaLayout::Yuv422, 8, 17, 23, 1, false, 3),
            (ChromaLayout::Yuv420, 8, 1920, 1080, 1, false, 3),
            (ChromaLayout::Yuv420, 10, 1920, 1080, 2, false, 3),
        ];
        // Under compute-sanitizer's racecheck (gpu-check) the large pictures take minutes.
        let small_only = std::env::var("VMAF_RS_GPU_SMALL_CASES").as_deref() == Ok("1");
        for &(layout, bpc, w, h, sub, same, frames) in cases {
            if small_only && w * h > 1 << 18 {
                println!("{w}x{h}: not run (VMAF_RS_GPU_SMALL_CASES=1)");
                continue;
            }
            let fmt = PictureFormat {
                width: w,
                height: h,
                bpc,
                layout,
            };
            let features = vec![feat("psnr_hvs", &[]), feat("psnr_hvs", &[])];
            let (n, p) = upload_vs_cpu(fmt, features, sub, frames, same);
            let (mut gpu_side, cpu_side) = placement(&p);
            gpu_side.dedup(); // one entry per instance
            assert_eq!(gpu_side, ["adm", "motion", "psnr_hvs", "vif"], "{p}");
            assert!(cpu_side.is_empty(), "{p}");
            println!(
                "bit-identical: psnr_hvs {layout:?} {bpc}-bit {w}x{h} n_subsample={sub}{}: \
                 {n} frames",
                if same { " (identical frames)" } else { "" },
            );
        }

        let fmt = |layout, bpc, width, height| PictureFormat {
            width,
            height,
            bpc,
            layout,
        };
        let frames_vs_cpu = |fmt, shift, interleaved, sub| {
            chroma_frames_vs_cpu(&gpu, "psnr_hvs", fmt, shift, interleaved, sub)
        };
        frames_vs_cpu(fmt(ChromaLayout::Yuv420, 8, 161, 91), 0, true, 1); // nv12
        frames_vs_cpu(fmt(ChromaLayout::Yuv420, 10, 163, 90), 6, true, 2); // p010
        frames_vs_cpu(fmt(ChromaLayout::Yuv420, 10, 163, 90), 6, false, 1);
        frames_vs_cpu(fmt(ChromaLayout::Yuv444, 12, 97, 65), 4, false, 1);
        frames_vs_cpu(fmt(ChromaLayout::Yuv422, 8, 130, 67), 0, false, 2);
    }

    /// ciede's kernels against the CPU, f64 bit for bit through the whole engine (host frames
    /// uploaded by `backend=cuda`): 8, 10, 12 and 16 bits; 4:2:0, 4:2:2 and 4:4:4; odd sizes,
    /// among them those where libvmaf's upsampling reads past its rows or its buffer (4:2:2's
    /// spill into the next rows, 4:2:0 with an odd height: zeros on both paths); identical frames;
    /// n_subsample 2; two instances; 1080p; and MSB-aligned, padded CUDA frames with planar and
    /// interleaved chroma through the scorer directly.
    #[test]
    fn ciede_kernel_every_depth_and_layout() {
        let _s = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let Some(gpu) = Gpu::new(false) else { return };
        // (layout, bits, width, height, n_subsample, distorted == reference, frames)
        type CiedeCase = (ChromaLayout, u8, usize, usize, u32, bool, u32);
        let cases: &[CiedeCase] = &[
            (ChromaLayout::Yuv420, 8, 161, 91, 1, false, 4),
            (ChromaLayout::Yuv420, 8, 97, 60, 2, false, 5),
            (ChromaLayout::Yuv444, 8, 64, 48, 1, true, 3),
            (ChromaLayout::Yuv422, 8, 101, 75, 1, false, 3),
            (ChromaLayout::Yuv420, 10, 131, 68, 1, false, 3),
            (ChromaLayout::Yuv422, 10, 65, 75, 2, false, 4),
            (ChromaLayout::Yuv444, 12, 97, 65, 1, false, 3),
            (ChromaLayout::Yuv420, 16, 67, 41, 1, false, 3),
            (ChromaLayout::Yuv420, 8, 16, 16, 1, false, 2),
            (ChromaLayout::Yuv420, 8, 1920, 1080, 1, false, 3),
            (ChromaLayout::Yuv420, 10, 1920, 1080, 2, false, 3),
        ];
        let small_only = std::env::var("VMAF_RS_GPU_SMALL_CASES").as_deref() == Ok("1");
        for &(layout, bpc, w, h, sub, same, frames) in cases {
            if small_only && w * h > 1 << 18 {
                println!("{w}x{h}: not run (VMAF_RS_GPU_SMALL_CASES=1)");
                continue;
            }
            let fmt = PictureFormat {
                width: w,
                height: h,
                bpc,
                layout,
            };
            let features = vec![feat("ciede", &[]), feat("ciede", &[])];
            let (n, p) = upload_vs_cpu(fmt, features, sub, frames, same);
            let (mut gpu_side, cpu_side) = placement(&p);
            gpu_side.dedup(); // one entry per instance
            assert_eq!(gpu_side, ["adm", "ciede", "motion", "vif"], "{p}");
            assert!(cpu_side.is_empty(), "{p}");
            println!(
                "bit-identical: ciede {layout:?} {bpc}-bit {w}x{h} n_subsample={sub}{}: \
                 {n} frames",
                if same { " (identical frames)" } else { "" },
            );
        }
        let fmt = |layout, bpc, width, height| PictureFormat {
            width,
            height,
            bpc,
            layout,
        };
        let frames_vs_cpu = |fmt, shift, interleaved, sub| {
            chroma_frames_vs_cpu(&gpu, "ciede", fmt, shift, interleaved, sub)
        };
        frames_vs_cpu(fmt(ChromaLayout::Yuv420, 8, 161, 91), 0, true, 1); // nv12
        frames_vs_cpu(fmt(ChromaLayout::Yuv420, 10, 163, 90), 6, true, 2); // p010
        frames_vs_cpu(fmt(ChromaLayout::Yuv420, 10, 163, 90), 6, false, 1);
        frames_vs_cpu(fmt(ChromaLayout::Yuv444, 12, 97, 65), 4, false, 1);
        frames_vs_cpu(fmt(ChromaLayout::Yuv422, 8, 130, 67), 0, false, 2);
    }

    /// One feature that reads chroma (`name`, default options) on CUDA frames as decoders give
    /// them, through the scorer directly, against the CPU, f64 bit for bit: samples `shift` bits
    /// up, pitches above the width with garbage in the padding and in rows below the picture;
    /// chroma planar or one interleaved CbCr plane.
    fn chroma_frames_vs_cpu(
        gpu: &Gpu,
        name: &str,
        fmt: PictureFormat,
        shift: u8,
        interleaved: bool,
        sub: u32,
    ) {
        let mut cfg = EngineConfig::new(fmt);
        cfg.features = vec![feat(name, &[])];
        cfg.n_subsample = sub;
        let mut cpu = Engine::new(cfg.clone()).unwrap();
        let mut eng = Engine::new(cfg).unwrap();
        let mut scorer = CudaScorer::for_engine(
            gpu.ctx as *mut c_void,
            gpu.stream as *mut c_void,
            &eng,
            shift,
        )
        .unwrap();
        let (w, h, bpc) = (fmt.width, fmt.height, fmt.bpc);
        let (cw, ch) = fmt.layout.chroma_size(w, h);
        let bps = if bpc > 8 { 2 } else { 1 };
        let luma = Layout {
            w,
            h,
            bpc,
            shift,
            stride: w + 37,
            rows: h + 5,
        };
        let cwide = if interleaved { 2 * cw } else { cw };
        let chroma = Layout {
            w: cwide,
            h: ch,
            bpc,
            shift,
            stride: cwide + 19,
            rows: ch + 3,
        };
        let mut keep = Vec::new();
        let mut row = Vec::new();
        let frames = 5;
        for t in 0..frames {
            // Host buffers: luma, then Cb and Cr (planar) or CbCr (interleaved).
            let bufs = |distorted: bool| -> Vec<Vec<u8>> {
                let u = picture(cw, ch, t + 100, bpc, distorted);
                let v = picture(cw, ch, t + 200, bpc, distorted);
                let mut b = vec![host_plane(&luma, &picture(w, h, t, bpc, distorted))];
                if interleaved {
                    let uv: Vec<u32> = u.iter().zip(&v).flat_map(|(&a, &b)| [a, b]).collect();
                    b.push(host_plane(&chroma, &uv));
                } else {
                    b.push(host_plane(&chroma, &u));
                    b.push(host_plane(&chroma, &v));
                }
                b
            };
            let (rb, db) = (bufs(false), bufs(true));
            let (rw, dw): (Vec<Vec<u16>>, Vec<Vec<u16>>) = (
                rb.iter().map(|b| words(b)).collect(),
                db.iter().map(|b| words(b)).collect(),
            );
            /// The CPU's picture over the host buffers (bytes or words).
            fn pic<'a>(
                fmt: PictureFormat,
                shift: u8,
                interleaved: bool,
                layouts: [&Layout; 2],
                b: &'a [Vec<u8>],
                wd: &'a [Vec<u16>],
            ) -> Picture<'a> {
                let plane = |k: usize| {
                    let l = layouts[k.min(1)];
                    if fmt.bpc > 8 {
                        Plane::new_u16(&wd[k], l.w, l.h, l.stride).unwrap()
                    } else {
                        Plane::new_u8(&b[k], l.w, l.h, l.stride).unwrap()
                    }
                };
                let p = Picture::with_shift(fmt, plane(0), shift).unwrap();
                let c = if interleaved {
                    vmaf_rs::Chroma::Interleaved(plane(1))
                } else {
                    vmaf_rs::Chroma::Planar(plane(1), plane(2))
                };
                p.with_chroma(c).unwrap()
            }
            let ls = [&luma, &chroma];
            cpu.send(
                &pic(fmt, shift, interleaved, ls, &rb, &rw),
                &pic(fmt, shift, interleaved, ls, &db, &dw),
            )
            .unwrap();
            gpu.current();
            let frame = |b: &[Vec<u8>]| {
                let d: Vec<DevPlane> = b.iter().map(|x| DevPlane::upload(x)).collect();
                let cp = chroma.stride * bps;
                let c = [d[1].ptr, if interleaved { 0 } else { d[2].ptr }];
                let f = CudaFrame::new(d[0].ptr, luma.stride * bps).with_chroma(
                    c,
                    [cp, cp],
                    interleaved,
                );
                (f, d)
            };
            let ((fr, dr), (fd, dd)) = (frame(&rb), frame(&db));
            scorer.submit(fr, fd).unwrap();
            keep.push((dr, dd));
            while scorer.poll(&mut row).unwrap() {
                eng.push_spatial(&row).unwrap();
            }
        }
        let mut err = None;
        scorer
            .drain(&mut |row| {
                if let Err(e) = eng.push_spatial(row) {
                    err.get_or_insert(e);
                }
            })
            .unwrap();
        assert!(err.is_none(), "{err:?}");
        let line = scorer.placement();
        drop(scorer);
        drop(keep);
        cpu.flush().unwrap();
        eng.flush().unwrap();
        assert_eq!(cpu.columns(), eng.columns());
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        let mut n = 0;
        while let Some(a) = cpu.receive() {
            let b = eng.receive().expect("as many frames");
            assert_eq!(
                bits(&a.values),
                bits(&b.values),
                "{fmt:?} shift {shift} interleaved {interleaved}: frame {}: cpu {:?} cuda {:?}",
                a.index,
                a.values,
                b.values
            );
            n += 1;
        }
        assert_eq!(
            n,
            frames.div_ceil(sub) as usize,
            "{fmt:?}: every scored frame"
        );
        let (gpu_side, cpu_side) = placement(&line);
        let mut want = vec!["adm", "motion", name, "vif"];
        want.sort();
        assert_eq!(gpu_side, want, "{line}");
        assert!(cpu_side.is_empty(), "{line}");
        println!(
            "bit-identical: {name} {:?} {bpc}-bit {w}x{h} CUDA frames, shift {shift}, \
             padded, {} chroma, n_subsample={sub}: {n} frames",
            fmt.layout,
            if interleaved { "interleaved" } else { "planar" }
        );
    }

    /// float_adm's kernels against the CPU, f64 bit for bit through the whole engine (host frames
    /// uploaded by `backend=cuda`): 8, 10, 12 and 16 bits, 4:2:0, 4:4:4 and gray, odd and tiny
    /// sizes (scale 3's band one sample wide), identical frames, n_subsample 2, 1080p, every
    /// option that changes the computation (gain limit, viewing distance, display height, the
    /// three CSF modes with their scales, per-scale factor overrides, noise weight, bypassed
    /// masking, the harmonic mean, DLM weight, minimum, skipped AIM scale, skipped scale 0,
    /// debug values), several instances sharing the scratch; `adm_p_norm` other than 3 on the
    /// CPU fallback (per-sample powf), still identical; and MSB-aligned, padded CUDA frames
    /// through the scorer directly.
    #[test]
    fn float_adm_kernel_every_depth_and_option() {
        let _s = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let Some(_gpu) = Gpu::new(false) else { return };
        let debug = ("debug", "true");
        // (layout, bits, width, height, instances' options, n_subsample, distorted == reference,
        // frames)
        type AdmCase<'a> = (
            ChromaLayout,
            u8,
            usize,
            usize,
            &'a [&'a [(&'a str, &'a str)]],
            u32,
            bool,
            u32,
        );
        let cases: &[AdmCase] = &[
            (
                ChromaLayout::Yuv420,
                8,
                161,
                91,
                &[&[], &[debug]],
                1,
                false,
                4,
            ),
            (ChromaLayout::Yuv420, 8, 64, 48, &[&[debug]], 2, true, 4),
            (
                ChromaLayout::Yuv420,
                10,
                163,
                90,
                &[&[debug, ("adm_enhn_gain_limit", "1.2")]],
                2,
                false,
                5,
            ),
            (
                ChromaLayout::Yuv444,
                12,
                97,
                65,
                &[
                    &[
                        debug,
                        ("adm_norm_view_dist", "1.5"),
                        ("adm_ref_display_height", "720"),
                    ],
                    &[
                        debug,
                        ("adm_csf_mode", "1"),
                        ("adm_csf_scale", "2"),
                        ("adm_csf_diag_scale", "0.5"),
                    ],
                ],
                1,
                false,
                3,
            ),
            (
                ChromaLayout::Gray,
                16,
                130,
                67,
                &[
                    &[debug, ("adm_csf_mode", "2"), ("adm_noise_weight", "0.5")],
                    &[
                        debug,
                        ("adm_f1s0", "0.5"),
                        ("adm_f2s3", "2"),
                        ("adm_f1s2", "0"),
                        ("adm_csf_mode", "5"),
                    ],
                ],
                1,
                false,
                3,
            ),
            (
                ChromaLayout::Yuv420,
                10,
                129,
                72,
                &[
                    &[debug, ("adm_bypass_cm", "1")],
                    &[debug, ("adm_adm3_apply_hm", "true"), ("adm_min_val", "0.5")],
                    &[("adm_dlm_weight", "0.3"), ("adm_enhn_gain_limit", "1")],
                ],
                1,
                false,
                3,
            ),
            (
                ChromaLayout::Yuv420,
                8,
                161,
                91,
                &[
                    &[debug, ("adm_skip_scale0", "true")],
                    &[debug, ("adm_skip_aim_scale", "2")],
                    &[("adm_skip_aim_scale", "0"), ("adm_noise_weight", "0")],
                ],
                2,
                false,
                4,
            ),
            (ChromaLayout::Gray, 12, 33, 17, &[&[debug]], 1, false, 3),
            (ChromaLayout::Yuv420, 8, 17, 23, &[&[debug]], 1, false, 3),
            (ChromaLayout::Yuv444, 8, 16, 16, &[&[debug]], 1, true, 3),
            (ChromaLayout::Yuv420, 16, 401, 387, &[&[debug]], 1, false, 3),
            (
                ChromaLayout::Yuv420,
                8,
                1920,
                1080,
                &[&[], &[debug]],
                1,
                false,
                3,
            ),
            (
                ChromaLayout::Yuv420,
                10,
                1920,
                1080,
                &[&[debug, ("adm_enhn_gain_limit", "1.1")]],
                2,
                false,
                3,
            ),
        ];
        // Under compute-sanitizer's racecheck (gpu-check) the large pictures take minutes.
        let small_only = std::env::var("VMAF_RS_GPU_SMALL_CASES").as_deref() == Ok("1");
        for &(layout, bpc, w, h, instances, sub, same, frames) in cases {
            if small_only && w * h > 1 << 18 {
                println!("{w}x{h}: not run (VMAF_RS_GPU_SMALL_CASES=1)");
                continue;
            }
            let fmt = PictureFormat {
                width: w,
                height: h,
                bpc,
                layout,
            };
            let features = instances.iter().map(|o| feat("float_adm", o)).collect();
            let (n, p) = upload_vs_cpu(fmt, features, sub, frames, same);
            let (mut gpu, cpu_side) = placement(&p);
            gpu.dedup(); // one entry per instance
            assert_eq!(gpu, ["adm", "float_adm", "motion", "vif"], "{p}");
            assert!(cpu_side.is_empty(), "{p}");
            println!(
                "bit-identical: float_adm kernels {layout:?} {bpc}-bit {w}x{h} {instances:?} \
                 n_subsample={sub}{}: {n} frames",
                if same { " (identical frames)" } else { "" }
            );
        }

        // adm_p_norm other than 3 (a powf per sample) on the CPU fallback, next to an instance
        // on CUDA: both identical.
        let fmt = PictureFormat {
            width: 161,
            height: 91,
            bpc: 10,
            layout: ChromaLayout::Yuv420,
        };
        let features = vec![
            feat("float_adm", &[debug, ("adm_p_norm", "2.5")]),
            feat("float_adm", &[debug]),
        ];
        let (n, p) = upload_vs_cpu(fmt, features, 1, 3, false);
        let (mut gpu, cpu_side) = placement(&p);
        gpu.dedup();
        assert_eq!(gpu, ["adm", "float_adm", "motion", "vif"], "{p}");
        assert_eq!(cpu_side, ["float_adm"], "{p}");
        println!(
            "bit-identical: float_adm adm_p_norm=2.5 on the CPU fallback, next to CUDA: {n} frames"
        );

        // CUDA frames as decoders give them: MSB-aligned samples, pitch above the width, garbage
        // in the padding and in coded rows below the picture.
        let layouts = [(163, 91, 10, 6, 192, 96), (1920, 1080, 8, 0, 2048, 1088)];
        for (w, h, bpc, shift, stride, rows) in layouts {
            if small_only && w * h > 1 << 18 {
                println!("{w}x{h} frames: not run (VMAF_RS_GPU_SMALL_CASES=1)");
                continue;
            }
            let l = Layout {
                w,
                h,
                bpc,
                shift,
                stride,
                rows,
            };
            let name = format!("float_adm {bpc}-bit {w}x{h} shift {shift} pitch {stride}").leak();
            let mut c = case(name, l, 3);
            c.features = vec![
                feat("float_adm", &[debug]),
                feat("float_adm", &[("adm_skip_scale0", "true")]),
            ];
            c.n_subsample = 2;
            run_case(&c);
        }
    }

    /// One SpEED stream through the scorer directly, from CUDA frames as decoders give them:
    /// MSB-aligned samples (`shift`), pitches above the widths and coded rows below the picture
    /// with garbage there, chroma planar or one interleaved CbCr plane (nv12, p010); every
    /// frame's values as f64 bits against the CPU engine fed the same pictures. Returns the
    /// frames compared.
    #[allow(clippy::too_many_arguments)]
    fn speed_frames_vs_cpu(
        fmt: PictureFormat,
        shift: u8,
        interleaved: bool,
        features: Vec<FeatureSpec>,
        n_subsample: u32,
        frames: u32,
        same: bool,
        isa: LibvmafIsa,
    ) -> Option<usize> {
        let gpu = Gpu::new(false)?;
        let (w, h, bpc) = (fmt.width, fmt.height, fmt.bpc);
        let (cw, ch) = fmt.layout.chroma_size(w, h);
        let mut cfg = EngineConfig::new(fmt);
        cfg.features = features;
        cfg.n_subsample = n_subsample;
        cfg.libvmaf_isa = LibvmafIsaMode::Fixed(isa);
        let mut cpu = Engine::new(cfg.clone()).unwrap();
        let mut eng = Engine::new(cfg).unwrap();
        let mut scorer = CudaScorer::for_engine(
            gpu.ctx as *mut c_void,
            gpu.stream as *mut c_void,
            &eng,
            shift,
        )
        .unwrap();
        let bps = if bpc > 8 { 2 } else { 1 };
        let luma = Layout {
            w,
            h,
            bpc,
            shift,
            stride: w + 37,
            rows: h + 9,
        };
        let k = if interleaved { 2 } else { 1 };
        let chroma = Layout {
            w: k * cw,
            h: ch,
            bpc,
            shift,
            stride: k * (cw + 19),
            rows: ch + 5,
        };
        let released = Arc::new(AtomicUsize::new(0));
        let mut held = Vec::new();
        let mut row = Vec::new();
        for t in 0..frames {
            // (luma, chroma planes) host buffers of one side.
            let side = |dist: bool| -> Vec<Vec<u8>> {
                let (u, v) = (
                    picture(cw, ch, t + 100, bpc, dist),
                    picture(cw, ch, t + 200, bpc, dist),
                );
                let mut out = vec![host_plane(&luma, &picture(w, h, t, bpc, dist))];
                if interleaved {
                    let uv: Vec<u32> = u.iter().zip(&v).flat_map(|(&a, &b)| [a, b]).collect();
                    out.push(host_plane(&chroma, &uv));
                } else {
                    out.push(host_plane(&chroma, &u));
                    out.push(host_plane(&chroma, &v));
                }
                out
            };
            let (r, d) = (side(false), side(same));
            let (rw, dw): (Vec<Vec<u16>>, Vec<Vec<u16>>) = (
                r.iter().map(|b| words(b)).collect(),
                d.iter().map(|b| words(b)).collect(),
            );
            /// The CPU's picture of one side's buffers.
            fn pic<'a>(
                fmt: PictureFormat,
                shift: u8,
                [luma, chroma]: [&Layout; 2],
                interleaved: bool,
                b: &'a [Vec<u8>],
                wd: &'a [Vec<u16>],
            ) -> Picture<'a> {
                let plane = |i: usize, l: &Layout| {
                    if fmt.bpc > 8 {
                        Plane::new_u16(&wd[i], l.w, l.h, l.stride).unwrap()
                    } else {
                        Plane::new_u8(&b[i], l.w, l.h, l.stride).unwrap()
                    }
                };
                let p = Picture::with_shift(fmt, plane(0, luma), shift).unwrap();
                let c = if interleaved {
                    vmaf_rs::Chroma::Interleaved(plane(1, chroma))
                } else {
                    vmaf_rs::Chroma::Planar(plane(1, chroma), plane(2, chroma))
                };
                p.with_chroma(c).unwrap()
            }
            let ls = [&luma, &chroma];
            cpu.send(
                &pic(fmt, shift, ls, interleaved, &r, &rw),
                &pic(fmt, shift, ls, interleaved, &d, &dw),
            )
            .unwrap();
            gpu.current();
            let up = |planes: &[Vec<u8>]| -> Vec<DevPlane> {
                planes.iter().map(|b| DevPlane::upload(b)).collect()
            };
            let (dr, dd) = (up(&r), up(&d));
            let mk = |p: &[DevPlane]| {
                let n = released.clone();
                let cp = chroma.stride * bps;
                let c1 = if interleaved { 0 } else { p[2].ptr };
                CudaFrame::with_release(p[0].ptr, luma.stride * bps, move || {
                    n.fetch_add(1, Ordering::SeqCst);
                })
                .with_chroma([p[1].ptr, c1], [cp, cp], interleaved)
            };
            scorer.submit(mk(&dr), mk(&dd)).unwrap();
            held.push((dr, dd));
            while scorer.poll(&mut row).unwrap() {
                eng.push_spatial(&row).unwrap();
            }
        }
        let mut err = None;
        scorer
            .drain(&mut |row| {
                if let Err(e) = eng.push_spatial(row) {
                    err.get_or_insert(e);
                }
            })
            .unwrap();
        assert!(err.is_none(), "{err:?}");
        drop(scorer);
        assert_eq!(released.load(Ordering::SeqCst), 2 * frames as usize);
        cpu.flush().unwrap();
        eng.flush().unwrap();
        assert_eq!(cpu.columns(), eng.columns());
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        let mut n = 0;
        while let Some(a) = cpu.receive() {
            let b = eng.receive().expect("as many frames");
            assert_eq!(
                bits(&a.values),
                bits(&b.values),
                "{fmt:?} shift {shift} interleaved {interleaved} {isa:?}: frame {}: cpu {:?} \
                 cuda {:?} (columns {:?})",
                a.index,
                a.values,
                b.values,
                cpu.columns()
            );
            n += 1;
        }
        assert!(eng.receive().is_none());
        drop(held);
        Some(n)
    }

    /// speed_chroma's and speed_temporal's kernels against the CPU, f64 bit for bit through the
    /// whole engine (host frames uploaded by `backend=cuda`): the option sets of the v1.0.16
    /// models (speed_sigma_nn 0.19, speed_nn_floor 0.1, speed_weight_var_mode 5, speed_max_val
    /// 45; speed_prescale 1, or 0.5 / 0.6 bilinear), every other option (kernel scales 0.5, 2 and
    /// 360/97, nearest / bicubic / lanczos4 at 1.5 and 0.75, every weighting mode, speed_max_val
    /// clipping, speed_use_ref_diff), 8, 10, 12 and 16 bits, 4:2:0 / 4:2:2 / 4:4:4 (gray for
    /// speed_temporal), odd sizes, identical frames, n_subsample 2 (speed_temporal keeps every
    /// frame's luma for the next), several instances at once, 1080p; and CUDA frames through the
    /// scorer directly: MSB-aligned, padded, planar and interleaved (nv12 / p010) chroma, each
    /// libvmaf covariance family (C, AVX2, AVX-512).
    #[test]
    fn speed_kernel_every_depth_and_option() {
        let _s = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let Some(_gpu) = Gpu::new(false) else { return };
        let v16: &[(&str, &str)] = &[
            ("speed_kernelscale", "1.0"),
            ("speed_sigma_nn", "0.19"),
            ("speed_nn_floor", "0.1"),
            ("speed_weight_var_mode", "5"),
            ("speed_max_val", "45.0"),
        ];
        let with = |extra: &[(&'static str, &'static str)]| -> Vec<(&'static str, &'static str)> {
            let mut v: Vec<(&str, &str)> = v16.to_vec();
            v.extend_from_slice(extra);
            v
        };
        let a = with(&[]);
        let b = with(&[
            ("speed_prescale", "0.5"),
            ("speed_prescale_method", "bilinear"),
        ]);
        let c = with(&[
            ("speed_prescale", "0.6"),
            ("speed_prescale_method", "bilinear"),
        ]);
        let o1: &[(&str, &str)] = &[
            ("speed_kernelscale", "0.5"),
            ("speed_prescale", "1.5"),
            ("speed_prescale_method", "nearest"),
            ("speed_weight_var_mode", "3"),
            ("speed_max_val", "0.5"),
        ];
        let o2: &[(&str, &str)] = &[
            ("speed_kernelscale", "2.0"),
            ("speed_prescale", "0.75"),
            ("speed_prescale_method", "bicubic"),
            ("speed_sigma_nn", "0.5"),
            ("speed_weight_var_mode", "1"),
        ];
        let o3: &[(&str, &str)] = &[
            ("speed_kernelscale", "3.711340"),
            ("speed_prescale", "1.5"),
            ("speed_prescale_method", "lanczos4"),
            ("speed_nn_floor", "0.3"),
            ("speed_weight_var_mode", "6"),
        ];
        let modes: Vec<Vec<(&str, &str)>> = ["0", "2", "4"]
            .iter()
            .map(|m| vec![("speed_weight_var_mode", *m), ("speed_max_val", "1000")])
            .collect();
        let modes: Vec<&[(&str, &str)]> = modes.iter().map(|v| &v[..]).collect();
        let (a, b, c) = (&a[..], &b[..], &c[..]);
        // (feature, layout, bits, width, height, option sets, n_subsample, identical frames)
        type SpeedCase<'a> = (
            &'a str,
            ChromaLayout,
            u8,
            usize,
            usize,
            Vec<&'a [(&'a str, &'a str)]>,
            u32,
            bool,
        );
        let ch = "speed_chroma";
        let tp = "speed_temporal";
        let urd: &[(&str, &str)] = &[("speed_use_ref_diff", "true")];
        let tp_b: &[(&str, &str)] = &[
            ("speed_prescale", "0.5"),
            ("speed_prescale_method", "bilinear"),
            ("speed_sigma_nn", "0.19"),
        ];
        // o2 without the weighting mode (not a speed_temporal option).
        let o2t = &o2[..4];
        let cases: Vec<SpeedCase> = vec![
            (ch, ChromaLayout::Yuv420, 8, 341, 333, vec![a], 1, false),
            (ch, ChromaLayout::Yuv420, 8, 341, 333, vec![a], 1, true),
            (ch, ChromaLayout::Yuv420, 10, 661, 401, vec![b, a], 2, false),
            (ch, ChromaLayout::Yuv444, 12, 331, 245, vec![c], 1, false),
            (
                ch,
                ChromaLayout::Yuv422,
                16,
                401,
                171,
                vec![a, &[]],
                1,
                false,
            ),
            (
                ch,
                ChromaLayout::Yuv444,
                8,
                197,
                181,
                vec![o1, o2],
                2,
                false,
            ),
            (ch, ChromaLayout::Yuv444, 10, 171, 163, vec![o3], 1, false),
            (
                ch,
                ChromaLayout::Yuv444,
                8,
                203,
                166,
                modes.clone(),
                1,
                false,
            ),
            (
                tp,
                ChromaLayout::Yuv420,
                8,
                181,
                163,
                vec![&[], urd],
                1,
                false,
            ),
            (
                tp,
                ChromaLayout::Gray,
                10,
                245,
                171,
                vec![tp_b, o2t],
                2,
                false,
            ),
            (tp, ChromaLayout::Yuv444, 12, 163, 161, vec![&[]], 1, true),
            (tp, ChromaLayout::Yuv420, 16, 170, 166, vec![urd], 2, false),
            (
                ch,
                ChromaLayout::Yuv420,
                8,
                1920,
                1080,
                vec![a, b, c],
                1,
                false,
            ),
            (
                tp,
                ChromaLayout::Yuv420,
                10,
                1920,
                1080,
                vec![&[], tp_b],
                1,
                false,
            ),
        ];
        let small_only = std::env::var("VMAF_RS_GPU_SMALL_CASES").as_deref() == Ok("1");
        for (name, layout, bpc, w, h, sets, sub, same) in cases {
            if small_only && w * h > 1 << 18 {
                println!("{w}x{h}: not run (VMAF_RS_GPU_SMALL_CASES=1)");
                continue;
            }
            let fmt = PictureFormat {
                width: w,
                height: h,
                bpc,
                layout,
            };
            let features = sets.iter().map(|o| feat(name, o)).collect();
            let (n, p) = upload_vs_cpu(fmt, features, sub, 5, same);
            let (mut gpu, cpu_side) = placement(&p);
            gpu.dedup(); // one entry per instance
            let mut want = vec!["adm", "motion", name, "vif"];
            want.sort();
            assert_eq!(gpu, want, "{p}");
            assert!(cpu_side.is_empty(), "{p}");
            println!(
                "bit-identical: {name} {layout:?} {bpc}-bit {w}x{h} {sets:?} n_subsample={sub}{}: \
                 {n} frames",
                if same { " (identical frames)" } else { "" }
            );
        }

        // CUDA frames through the scorer: MSB-aligned (p010-like), padded, planar and
        // interleaved chroma, each covariance family.
        type FramesCase<'a> = (
            &'a str,
            ChromaLayout,
            u8,
            u8,
            bool,
            usize,
            usize,
            &'a [(&'a str, &'a str)],
            u32,
            LibvmafIsa,
        );
        let frames_cases: &[FramesCase] = &[
            (
                ch,
                ChromaLayout::Yuv420,
                8,
                0,
                true,
                341,
                333,
                a,
                1,
                LibvmafIsa::C,
            ),
            (
                ch,
                ChromaLayout::Yuv420,
                10,
                6,
                true,
                661,
                401,
                b,
                2,
                LibvmafIsa::Avx2,
            ),
            (
                ch,
                ChromaLayout::Yuv420,
                10,
                6,
                false,
                401,
                343,
                a,
                1,
                LibvmafIsa::Avx512,
            ),
            (
                ch,
                ChromaLayout::Yuv444,
                12,
                4,
                false,
                331,
                245,
                c,
                1,
                LibvmafIsa::C,
            ),
            (
                ch,
                ChromaLayout::Yuv444,
                8,
                0,
                false,
                171,
                163,
                o3,
                1,
                LibvmafIsa::Avx2,
            ),
            (
                tp,
                ChromaLayout::Yuv420,
                10,
                6,
                true,
                181,
                163,
                &[],
                2,
                LibvmafIsa::Avx512,
            ),
            (
                tp,
                ChromaLayout::Yuv420,
                8,
                0,
                false,
                245,
                171,
                urd,
                1,
                LibvmafIsa::C,
            ),
            (
                tp,
                ChromaLayout::Yuv420,
                12,
                4,
                false,
                245,
                171,
                tp_b,
                1,
                LibvmafIsa::Avx2,
            ),
            (
                ch,
                ChromaLayout::Yuv420,
                8,
                0,
                true,
                1920,
                1080,
                b,
                1,
                LibvmafIsa::Avx512,
            ),
        ];
        for &(name, layout, bpc, shift, inter, w, h, opts, sub, isa) in frames_cases {
            if small_only && w * h > 1 << 18 {
                println!("{w}x{h}: not run (VMAF_RS_GPU_SMALL_CASES=1)");
                continue;
            }
            let fmt = PictureFormat {
                width: w,
                height: h,
                bpc,
                layout,
            };
            let n = speed_frames_vs_cpu(
                fmt,
                shift,
                inter,
                vec![feat(name, opts)],
                sub,
                6,
                false,
                isa,
            )
            .expect("a GPU");
            assert_eq!(
                n,
                6usize.div_ceil(sub as usize),
                "{name}: every scored frame"
            );
            println!(
                "bit-identical: {name} CUDA frames {layout:?} {bpc}-bit shift {shift} {w}x{h} \
                 padded, {} chroma, {opts:?}, {isa:?}, n_subsample={sub}: {n} frames",
                if inter { "interleaved" } else { "planar" }
            );
        }
    }
}
