//! libFuzzer entry point; the body is `vmaf_rs_fuzz::options`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| vmaf_rs_fuzz::options(data));
