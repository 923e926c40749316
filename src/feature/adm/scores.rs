//! One frame's ADM values ([`AdmScores`]): libvmaf's combination of the four scales'
//! numerators and denominators, shared by the CPU extractor and the CUDA backend.

use super::AdmParams;

/// Per-frame results of [`Adm::compute`](super::Adm::compute) before they are turned into
/// features.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AdmScores {
    /// DLM (`adm2`).
    pub adm2: f64,
    /// AIM.
    pub aim: f64,
    /// `max(adm2 * w + (1 - aim) * (1 - w), min_val)`.
    pub adm3: f64,
    /// Per-scale numerator and denominator (`scores[2s]`, `scores[2s + 1]` in libvmaf).
    pub num_den: [f64; 8],
    /// Total numerator after the noise floor.
    pub num: f64,
    /// Total denominator after the noise floor.
    pub den: f64,
}

impl AdmScores {
    /// libvmaf's combination of the four scales' (numerator, denominator, AIM numerator) into
    /// the frame's values; shared by the CPU path and the CUDA backend so they cannot drift.
    pub fn from_scales(
        scales: [(f32, f32, f32); 4],
        width: usize,
        height: usize,
        prm: &AdmParams,
    ) -> Self {
        let mut num_den = [0f64; 8];
        let (mut num, mut den, mut aim_num) = (0f64, 0f64, 0f64);
        for (s, &(num_s, den_s, aim_s)) in scales.iter().enumerate() {
            // libvmaf sums the float per-scale values in double.
            num += num_s as f64;
            den += den_s as f64;
            aim_num += aim_s as f64;
            num_den[2 * s] = num_s as f64;
            num_den[2 * s + 1] = den_s as f64;
        }
        let limit = 1e-10 * (width * height) as i32 as f64 / (1920.0 * 1080.0);
        let num = if num < limit { 0.0 } else { num };
        let den = if den < limit { 0.0 } else { den };
        // libvmaf leaves the AIM score uninitialised when the denominator vanishes (only possible
        // with adm_noise_weight = 0 on flat content); 0 is used here.
        let (adm2, aim) = if den == 0.0 {
            (1.0, 0.0)
        } else {
            (num / den, aim_num / den)
        };
        let blend = adm2 * prm.dlm_weight + (1.0 - aim) * (1.0 - prm.dlm_weight);
        let adm3 = if blend > prm.min_val {
            blend
        } else {
            prm.min_val
        };
        AdmScores {
            adm2,
            aim,
            adm3,
            num_den,
            num,
            den,
        }
    }

    /// Writes the extractor's outputs, in [`DEF`](super::DEF)`.spatial` order.
    pub fn write(&self, out: &mut [f64]) {
        out[0] = self.adm2;
        out[1] = self.aim;
        out[2] = self.adm3;
        for s in 0..4 {
            out[3 + s] = self.num_den[2 * s] / self.num_den[2 * s + 1];
        }
    }
}
