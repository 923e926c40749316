//! libFuzzer entry point; the body is `vmaf_rs_fuzz::model_json`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| vmaf_rs_fuzz::model_json(data));
