//! libvmaf's reciprocal table for the c-value (`reciprocal_lut` in `cambi.h`): entry `n` is
//! `1 / n` written with 9 significant digits and read back as a `float` (0 for `n = 0`). The
//! decimal step matters: for 42 of the entries (82, 83, 244, …) the `float` nearest the 9-digit
//! text is not the `float` nearest `1 / n`.

use super::setup::LUT_SIZE;
use std::sync::OnceLock;

/// The table, made once per process.
pub fn reciprocals() -> &'static [f32] {
    static LUT: OnceLock<Vec<f32>> = OnceLock::new();
    LUT.get_or_init(|| {
        (0..LUT_SIZE)
            .map(|n| {
                if n == 0 {
                    0.0
                } else {
                    // `{:.8e}`: 9 significant digits, rounded as C's "%.9g" rounds.
                    format!("{:.8e}", 1.0f64 / n as f64)
                        .parse::<f32>()
                        .expect("a formatted float parses")
                }
            })
            .collect()
    })
}
