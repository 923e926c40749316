//! Replays every saved input under `regressions/<target>/` (crashes the fuzzers found, kept once
//! fixed) and every seed under `seeds/<target>/` through the target bodies, in a normal build.
use std::path::Path;

fn replay(target: &str, body: fn(&[u8])) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut n = 0;
    for dir in ["regressions", "seeds"] {
        let Ok(entries) = std::fs::read_dir(root.join(dir).join(target)) else {
            continue;
        };
        for e in entries {
            let p = e.expect("dir entry").path();
            let data = std::fs::read(&p).expect("readable input");
            eprintln!("{target}: {}", p.display());
            body(&data);
            n += 1;
        }
    }
    eprintln!("{target}: {n} saved inputs replayed");
}

#[test]
fn model_json() {
    replay("model_json", vmaf_rs_fuzz::model_json);
}

#[test]
fn options() {
    replay("options", vmaf_rs_fuzz::options);
}

#[test]
fn y4m() {
    replay("y4m", vmaf_rs_fuzz::y4m);
}

#[test]
fn log_writers() {
    replay("log_writers", vmaf_rs_fuzz::log_writers);
}

#[test]
fn capi() {
    replay("capi", vmaf_rs_fuzz::capi);
}
