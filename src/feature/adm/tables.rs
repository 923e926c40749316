//! Constants and tables of libvmaf's integer ADM, with where each one comes from.
//!
//! Everything here is data: filter taps, fixed-point reciprocals, the Watson et al. noise-floor
//! model, Barten CSF parameters and the blended CSF tables. Float tables are `f32` because
//! libvmaf stores them as C `float`.

/// Daubechies-2 low-pass analysis taps in Q15 (libvmaf `integer_adm.h`, `dwt2_db2_coeffs_lo`).
pub const DB2_LO: [i32; 4] = [15826, 27411, 7345, -4240];
/// Daubechies-2 high-pass analysis taps in Q15 (libvmaf `integer_adm.h`, `dwt2_db2_coeffs_hi`).
pub const DB2_HI: [i32; 4] = [-4240, -7345, 27411, -15826];
/// Sum of the low-pass taps, used to centre scale-0 input (libvmaf `dwt2_db2_coeffs_lo_sum`).
pub const DB2_LO_SUM: i32 = 46342;
/// Sum of the high-pass taps (libvmaf `dwt2_db2_coeffs_hi_sum`).
pub const DB2_HI_SUM: i32 = 0;

/// 1/15 in Q17 used by the scale-0 masking threshold (libvmaf `ONE_BY_15`).
pub const ONE_BY_15: i32 = 8738;
/// 1/15 in Q32 used by the scale-1..3 masking threshold (libvmaf `I4_ONE_BY_15`).
pub const I4_ONE_BY_15: i64 = 286_331_153;
/// 1/30 in Q17 used by the scale-0 CSF filter band (libvmaf `adm_csf`, `FIX_ONE_BY_30`).
pub const FIX_ONE_BY_30: i32 = 4369;
/// 1/30 in Q32 used by the scale-1..3 CSF filter band (libvmaf `i4_adm_csf`, `FIX_ONE_BY_30`).
pub const I4_FIX_ONE_BY_30: i64 = 143_165_577;

/// Fraction of the band discarded on each side (libvmaf `ADM_BORDER_FACTOR`).
pub const BORDER_FACTOR: f64 = 0.1;

/// Default enhancement gain limit (libvmaf `DEFAULT_ADM_ENHN_GAIN_LIMIT`).
pub const DEFAULT_ENHN_GAIN_LIMIT: f64 = 100.0;
/// Default normalised viewing distance (libvmaf `DEFAULT_ADM_NORM_VIEW_DIST`).
pub const DEFAULT_NORM_VIEW_DIST: f64 = 3.0;
/// Default reference display height in pixels (libvmaf `DEFAULT_ADM_REF_DISPLAY_HEIGHT`).
pub const DEFAULT_REF_DISPLAY_HEIGHT: i64 = 1080;
/// Default noise weight (libvmaf `DEFAULT_ADM_NOISE_WEIGHT`).
pub const DEFAULT_NOISE_WEIGHT: f64 = 0.03125;
/// Default CSF luminance in cd/m² (libvmaf `DEFAULT_ADM_CSF_LUM`).
pub const DEFAULT_CSF_LUM: f64 = 100.0;

/// The scale-0 fixed-point CSF weights libvmaf hard-codes for the default viewing geometry with
/// the Watson CSF: h, v in Q21 and d in Q23 (libvmaf `adm_csf` / `adm_cm`, `i_rfactor`).
pub const DEFAULT_I_RFACTOR_S0: [u16; 3] = [36453, 36453, 49417];

/// `(float)(cos(1°) * cos(1°))`, the angle test constant of libvmaf's `adm_decouple`
/// (bits 0x3F7FEC0A; checked against the C expression in the unit tests).
pub const COS_1DEG_SQ: f32 = 0.999_695_4;

/// 2^30, numerator of the reciprocal table (libvmaf `div_Q_factor`).
const DIV_Q_FACTOR: i32 = 1 << 30;

/// Reciprocal table `table[32768 + i] = 2^30 / i`, `table[32768 - i] = -(2^30 / i)` for
/// `i` in 1..=32768, `table[32768] = 0` (libvmaf `div_lookup_generator`).
pub static DIV_LOOKUP: [i32; 65537] = build_div_lookup();

const fn build_div_lookup() -> [i32; 65537] {
    let mut t = [0i32; 65537];
    let mut i = 1;
    while i <= 32768 {
        let recip = DIV_Q_FACTOR / i as i32;
        t[32768 + i] = recip;
        t[32768 - i] = -recip;
        i += 1;
    }
    t
}

/// Watson et al. 1997 noise-floor model parameters for luma (libvmaf `dwt_7_9_YCbCr_threshold[0]`,
/// from "Visibility of Wavelet Quantization Noise", Table IV, subject "sfl").
pub struct DwtModelParams {
    /// Parameter `a`.
    pub a: f32,
    /// Parameter `k`.
    pub k: f32,
    /// Parameter `f0`.
    pub f0: f32,
    /// Per-orientation gain `g[theta]`.
    pub g: [f32; 4],
}

/// Luma entry of libvmaf's `dwt_7_9_YCbCr_threshold`.
pub const WATSON_Y: DwtModelParams = DwtModelParams {
    a: 0.495,
    k: 0.466,
    f0: 0.401,
    g: [1.501, 1.0, 0.534, 1.0],
};

/// DWT basis-function amplitudes `A[lambda][theta]` (libvmaf `dwt_7_9_basis_function_amplitudes`,
/// Watson et al. 1997, Table V, transposed).
pub const BASIS_AMPLITUDES: [[f32; 4]; 6] = [
    [0.62171, 0.67234, 0.72709, 0.67234],
    [0.34537, 0.41317, 0.49428, 0.41317],
    [0.18004, 0.22727, 0.28688, 0.22727],
    [0.091401, 0.11792, 0.15214, 0.11792],
    [0.045943, 0.059758, 0.077727, 0.059758],
    [0.023013, 0.030018, 0.039156, 0.030018],
];

/// Luminance anchors (cd/m²) of the Barten CSF parameters (libvmaf `barten_csf_tools.h`,
/// `barten_csf_param_anchors`, from HDR-VDP 2.2.1).
pub const BARTEN_PARAM_ANCHORS: [f32; 6] = [0.002, 0.02, 0.2, 2.0, 20.0, 150.0];

/// Barten CSF parameters per anchor (libvmaf `barten_csf_params`, from HDR-VDP 2.2.1).
pub const BARTEN_PARAMS: [[f32; 5]; 6] = [
    [0.0160737, 0.991265, 3.74038, 0.50722, 4.46044],
    [0.383873, 0.800889, 3.54104, 0.682505, 4.94958],
    [0.929301, 0.476505, 4.37453, 0.750315, 5.28678],
    [1.29776, 0.405782, 4.40602, 0.935314, 5.61425],
    [1.49222, 0.334278, 3.79542, 1.07327, 6.4635],
    [1.46213, 0.394533, 2.7755, 1.16577, 7.45665],
];

/// Rod/cone sensitivity parameters (libvmaf `barten_csf_sa`).
pub const BARTEN_SA: [f32; 4] = [30.162, 4.0627, 1.6596, 0.2712];
/// Optical MTF weights (libvmaf `barten_mtf_params_a`, digits as written there).
#[allow(clippy::excessive_precision)]
pub const BARTEN_MTF_A: [f32; 4] = [
    0.424_838_596_301_290,
    0.572_435_103_936_480,
    0.000_167_576_239_164_937,
    0.002_558_723_523_064_33,
];
/// Optical MTF decay rates (libvmaf `barten_mtf_params_b`).
pub const BARTEN_MTF_B: [f32; 4] = [0.028, 0.37, 37.0, 360.0];

/// A blended Barten/Watson CSF table, `[theta][scale]` (theta 0 = h/v, 1 = d).
pub type BlendTable = [[f32; 4]; 2];

/// Legacy blended CSF tables keyed by (display height, viewing distance) (libvmaf
/// `barten_csf_tools.h`, `BLENDED_CSF_*`). 2160@1.5H reuses 1080@3H as libvmaf does.
pub const BLENDED_CSF: [(i32, f64, BlendTable); 9] = [
    (
        1080,
        3.0,
        [
            [0.01183, 0.025026, 0.04295, 0.058621],
            [0.004302, 0.011778, 0.023918, 0.035901],
        ],
    ),
    (
        1080,
        5.0,
        [
            [0.004212, 0.014809, 0.029642, 0.047464],
            [0.000984, 0.005852, 0.0146, 0.027574],
        ],
    ),
    (
        2160,
        1.5,
        [
            [0.01183, 0.025026, 0.04295, 0.058621],
            [0.004302, 0.011778, 0.023918, 0.035901],
        ],
    ),
    (
        2160,
        3.0,
        [
            [0.00226, 0.01183, 0.025026, 0.04295],
            [0.000479, 0.004302, 0.011778, 0.023918],
        ],
    ),
    (
        2160,
        5.0,
        [
            [0.000092, 0.004212, 0.014809, 0.029642],
            [0.000050, 0.000984, 0.005852, 0.0146],
        ],
    ),
    (
        720,
        3.0,
        [
            [0.018715, 0.035637, 0.052798, 0.061509],
            [0.007999, 0.018396, 0.031851, 0.037718],
        ],
    ),
    (
        720,
        5.0,
        [
            [0.010144, 0.022561, 0.040309, 0.05672],
            [0.003463, 0.010282, 0.021839, 0.034641],
        ],
    ),
    (
        480,
        3.0,
        [
            [0.027961, 0.045875, 0.060275, 0.056234],
            [0.013572, 0.026277, 0.036959, 0.034511],
        ],
    ),
    (
        480,
        5.0,
        [
            [0.016781, 0.032822, 0.05032, 0.061594],
            [0.00691, 0.016545, 0.029917, 0.037777],
        ],
    ),
];

/// Blended CSF tables with the v1.0.17 L1 fix (libvmaf `barten_csf_tools.h`, `BLENDED_CSF_*_MAE`).
pub const BLENDED_CSF_MAE: [(i32, f64, BlendTable); 9] = [
    (
        1080,
        3.0,
        [
            [0.011249, 0.022606, 0.035930, 0.045673],
            [0.004097, 0.010921, 0.021430, 0.031313],
        ],
    ),
    (
        1080,
        5.0,
        [
            [0.004052, 0.013939, 0.026298, 0.038833],
            [0.000927, 0.005544, 0.013415, 0.024515],
        ],
    ),
    (
        2160,
        1.5,
        [
            [0.011249, 0.022606, 0.035930, 0.045673],
            [0.004097, 0.010921, 0.021430, 0.031313],
        ],
    ),
    (
        2160,
        3.0,
        [
            [0.002166, 0.011249, 0.022606, 0.035930],
            [0.000447, 0.004097, 0.010921, 0.021430],
        ],
    ),
    (
        2160,
        5.0,
        [
            [0.000077, 0.004052, 0.013939, 0.026298],
            [0.000045, 0.000927, 0.005544, 0.013415],
        ],
    ),
    (
        720,
        3.0,
        [
            [0.017329, 0.030870, 0.042134, 0.047410],
            [0.007509, 0.016707, 0.028072, 0.032722],
        ],
    ),
    (
        720,
        5.0,
        [
            [0.009689, 0.020577, 0.034162, 0.044523],
            [0.003302, 0.009579, 0.019661, 0.030318],
        ],
    ),
    (
        480,
        3.0,
        [
            [0.024969, 0.037825, 0.046676, 0.043974],
            [0.012511, 0.023424, 0.032139, 0.030166],
        ],
    ),
    (
        480,
        5.0,
        [
            [0.015665, 0.028766, 0.040612, 0.047483],
            [0.006514, 0.015107, 0.026476, 0.032776],
        ],
    ),
];
