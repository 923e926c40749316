//! The kernel ABI (mirrors of the parameter structs in `kernels/*.cu`, see kernels/README.md)
//! and the kernel handles of a loaded module. Each struct is `#[repr(C)]` with the field order,
//! types and padding of its C++ twin; `launch` in driver.rs passes one struct per kernel.

use super::driver::Module;
use crate::error::Result;
use cudarc::driver::sys;

/// A plane read by a kernel: pointer, pitch in bytes, right shift of every sample.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct SrcPlane {
    pub ptr: u64,
    pub pitch: u64,
    pub shift: i32,
    pub pad_: i32,
}

/// `MotionArgs` (motion.cu).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub(crate) struct MotionArgs {
    pub prev: SrcPlane,
    pub cur: SrcPlane,
    pub row_sums: u64,
    pub w: i32,
    pub h: i32,
    pub bpc: i32,
    pub pad_: i32,
}

/// `MotionFinishArgs` (motion.cu).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub(crate) struct MotionFinishArgs {
    pub row_sums: u64,
    pub out: u64,
    pub h: i32,
    pub pad_: i32,
}

/// `VifStatArgs` (vif.cu).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub(crate) struct VifStatArgs {
    pub reference: SrcPlane,
    pub distorted: SrcPlane,
    pub log2_table: u64,
    pub sums: u64,
    pub gain_limit: f64,
    pub eps: f64,
    pub sq_round: u64,
    pub w: i32,
    pub h: i32,
    pub mu_round: u32,
    pub mu_shift: u32,
    pub sq_shift: u32,
    pub pad_: u32,
}

/// `VifDownArgs` (vif.cu).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub(crate) struct VifDownArgs {
    pub reference: SrcPlane,
    pub distorted: SrcPlane,
    pub out_ref: u64,
    pub out_dis: u64,
    pub w: i32,
    pub h: i32,
    pub round: u32,
    pub shift: u32,
}

/// `AdmDwtArgs` (adm.cu).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub(crate) struct AdmDwtArgs {
    pub reference: SrcPlane,
    pub distorted: SrcPlane,
    pub out_a_ref: u64,
    pub out_a_dis: u64,
    pub r: [u64; 3],
    pub a: [u64; 3],
    pub den_rows: u64,
    pub div_lookup: u64,
    pub gain_limit: f64,
    pub cos1_sq: f32,
    pub w: i32,
    pub h: i32,
    pub ow: i32,
    pub oh: i32,
    pub vp_add: i32,
    pub vp_shift: i32,
    pub hp_add: i32,
    pub hp_shift: i32,
    pub den_left: i32,
    pub den_right: i32,
    pub den_top: i32,
    pub den_bottom: i32,
    pub den_add_sq: u32,
    pub den_shift_sq: u32,
    pub den_add_cub: u32,
    pub den_shift_cub: u32,
    pub scale: i32,
    pub s0_unmirrored: i32,
}

/// `AdmCmArgs` (adm.cu).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub(crate) struct AdmCmArgs {
    pub r: [u64; 3],
    pub a: [u64; 3],
    pub rows: u64,
    pub w: i32,
    pub h: i32,
    pub left: i32,
    pub right: i32,
    pub top: i32,
    pub bottom: i32,
    pub rfactor: [u32; 3],
    pub add_cub: [u32; 3],
    pub shift_cub: [u32; 3],
    pub scale: i32,
    pub pad_: i32,
}

/// `AdmFinishArgs` (adm.cu).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub(crate) struct AdmFinishArgs {
    pub rows: [u64; 4],
    pub out: u64,
    pub h: [i32; 4],
    pub shift: [[u32; 9]; 4],
    pub add: [[u32; 9]; 4],
}

/// `PsnrArgs` (psnr.cu).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub(crate) struct PsnrArgs {
    pub reference: SrcPlane,
    pub distorted: SrcPlane,
    pub out: u64,
    pub w: i32,
    pub h: i32,
    pub step: i32,
    pub pad_: i32,
}

/// Rows each block of `vmaf_psnr_sse_*` covers (`PSNR_ROWS` in psnr.cu).
pub(crate) const PSNR_ROWS: usize = 8;

/// `FloatSsimDecimateArgs` (ssim.cu).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub(crate) struct FloatSsimDecimateArgs {
    pub reference: SrcPlane,
    pub distorted: SrcPlane,
    pub out_ref: u64,
    pub out_dis: u64,
    pub w: i32,
    pub h: i32,
    pub sw: i32,
    pub sh: i32,
    pub factor: i32,
    pub pad_: i32,
    pub divisor: f32,
    pub tap: f32,
}

/// `FloatSsimTermsArgs` (ssim.cu).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub(crate) struct FloatSsimTermsArgs {
    pub reference: SrcPlane,
    pub distorted: SrcPlane,
    pub terms: u64,
    pub w: i32,
    pub h: i32,
    pub y0: i32,
    pub rows: i32,
    pub cap: i32,
    pub divisor: f32,
    pub c1: f32,
    pub c2: f32,
    pub c3: f32,
    pub gauss: [f32; 11],
}

/// `FloatSsimSumArgs` (ssim.cu).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub(crate) struct FloatSsimSumArgs {
    pub terms: u64,
    pub out: u64,
    pub n: i32,
    pub cap: i32,
}

/// Output tile of `vmaf_float_ssim_terms_*` (`SSIM_TW` x `SSIM_TH` in ssim.cu).
pub(crate) const SSIM_TILE: usize = 32;
/// Threads per block of `vmaf_float_ssim_terms_*` and `vmaf_float_ssim_sum`.
pub(crate) const SSIM_THREADS: u32 = 256;

/// float_ssim's kernels (ssim.cu).
pub(crate) struct FloatSsimKernels {
    /// `[u8, u16]`: the box low-pass decimation of both frames.
    pub decimate: [sys::CUfunction; 2],
    /// `[u8, u16, f32]`: SSIM terms of frames (scale 1) or of the decimated pictures.
    pub terms: [sys::CUfunction; 3],
    pub sum: sys::CUfunction,
}

impl FloatSsimKernels {
    fn resolve(m: &Module) -> Result<Self> {
        Ok(FloatSsimKernels {
            decimate: [
                m.function("vmaf_float_ssim_decimate_u8")?,
                m.function("vmaf_float_ssim_decimate_u16")?,
            ],
            terms: [
                m.function("vmaf_float_ssim_terms_u8")?,
                m.function("vmaf_float_ssim_terms_u16")?,
                m.function("vmaf_float_ssim_terms_f32")?,
            ],
            sum: m.function("vmaf_float_ssim_sum")?,
        })
    }
}

/// `FloatMsSsimDecimateArgs` (ssim.cu).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub(crate) struct FloatMsSsimDecimateArgs {
    pub reference: SrcPlane,
    pub distorted: SrcPlane,
    pub out_ref: u64,
    pub out_dis: u64,
    pub w: i32,
    pub h: i32,
    pub sw: i32,
    pub sh: i32,
    pub divisor: f32,
    pub pad_: i32,
    pub lpf: [f32; 81],
    pub pad2_: i32,
}

/// float_ms_ssim's kernels (ssim.cu; its SSIM maps use [`FloatSsimKernels`]' terms and sum).
pub(crate) struct FloatMsSsimKernels {
    /// `[u8, u16, f32]`: the 9x9 low-pass decimation from the frames (into scale 1) or from our
    /// `f32` pictures (into scales 2 to 4).
    pub decimate: [sys::CUfunction; 3],
}

impl FloatMsSsimKernels {
    fn resolve(m: &Module) -> Result<Self> {
        Ok(FloatMsSsimKernels {
            decimate: [
                m.function("vmaf_float_ms_ssim_decimate_u8")?,
                m.function("vmaf_float_ms_ssim_decimate_u16")?,
                m.function("vmaf_float_ms_ssim_decimate_f32")?,
            ],
        })
    }
}

#[cfg(test)]
#[test]
fn float_ms_ssim_abi_sizes() {
    // The size ssim.cu pins with static_assert.
    assert_eq!(
        std::mem::size_of::<FloatMsSsimDecimateArgs>(),
        48 + 16 + 16 + 8 + 324 + 4
    );
}

/// `FloatMotionBlurArgs` (float_motion.cu).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub(crate) struct FloatMotionBlurArgs {
    pub src: SrcPlane,
    pub tmp: u64,
    pub dst: u64,
    pub filter: [f32; 5],
    pub ntaps: i32,
    pub w: i32,
    pub h: i32,
    pub step: i32,
    pub bpc: i32,
}

/// `FloatMotionSadArgs` (float_motion.cu).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub(crate) struct FloatMotionSadArgs {
    pub prev: u64,
    pub cur: u64,
    pub out: u64,
    pub w: i32,
    pub h: i32,
}

/// `FloatMotionHalfArgs` (float_motion.cu).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub(crate) struct FloatMotionHalfArgs {
    pub src: u64,
    pub dst: u64,
    pub ratio_x: f32,
    pub ratio_y: f32,
    pub w: i32,
    pub h: i32,
    pub sw: i32,
    pub sh: i32,
}

/// Rows one block of `vmaf_float_motion_sad` sums (`FMOTION_BX`: one per thread).
pub(crate) const FLOAT_MOTION_SAD_ROWS: usize = 128;

/// float_motion's kernels (float_motion.cu).
pub(crate) struct FloatMotionKernels {
    /// Vertical pass from 8-bit samples.
    pub vblur_u8: sys::CUfunction,
    /// Vertical pass from 16-bit samples.
    pub vblur_u16: sys::CUfunction,
    /// Horizontal pass into the blurred frame.
    pub hblur: sys::CUfunction,
    /// Per-row sums of the absolute differences of two blurred (or halved) frames.
    pub sad: sys::CUfunction,
    /// `motion_add_scale1`'s bilinear halving of a blurred frame.
    pub half: sys::CUfunction,
}

impl FloatMotionKernels {
    fn resolve(m: &Module) -> Result<Self> {
        Ok(FloatMotionKernels {
            vblur_u8: m.function("vmaf_float_motion_vblur_u8")?,
            vblur_u16: m.function("vmaf_float_motion_vblur_u16")?,
            hblur: m.function("vmaf_float_motion_hblur")?,
            sad: m.function("vmaf_float_motion_sad")?,
            half: m.function("vmaf_float_motion_half")?,
        })
    }
}

#[cfg(test)]
#[test]
fn float_motion_abi_sizes() {
    // The sizes float_motion.cu pins with static_assert.
    assert_eq!(
        std::mem::size_of::<FloatMotionBlurArgs>(),
        24 + 16 + 20 + 20
    );
    assert_eq!(std::mem::size_of::<FloatMotionSadArgs>(), 32);
    assert_eq!(std::mem::size_of::<FloatMotionHalfArgs>(), 40);
}

/// `FloatMomentArgs` (float_moment.cu).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub(crate) struct FloatMomentArgs {
    pub reference: SrcPlane,
    pub distorted: SrcPlane,
    /// First of the 4 result slots: ref Σ v, dis Σ v, ref Σ v², dis Σ v² (in units).
    pub out: u64,
    pub w: i32,
    pub h: i32,
    /// `k`: `picture_copy` divides the samples by `2^k`.
    pub scale_log2: i32,
    pub pad_: i32,
}

/// Rows each block of `vmaf_float_moment_*` covers (`FMOMENT_ROWS` in float_moment.cu).
pub(crate) const FLOAT_MOMENT_ROWS: usize = 8;

/// float_moment's kernels (float_moment.cu).
pub(crate) struct FloatMomentKernels {
    /// The four sums from 8-bit samples.
    pub u8: sys::CUfunction,
    /// The four sums from 16-bit samples.
    pub u16: sys::CUfunction,
}

impl FloatMomentKernels {
    fn resolve(m: &Module) -> Result<Self> {
        Ok(FloatMomentKernels {
            u8: m.function("vmaf_float_moment_u8")?,
            u16: m.function("vmaf_float_moment_u16")?,
        })
    }
}

#[cfg(test)]
#[test]
fn float_moment_abi_sizes() {
    // The size float_moment.cu pins with static_assert.
    assert_eq!(std::mem::size_of::<FloatMomentArgs>(), 48 + 8 + 16);
}

/// `FloatVifConvertArgs` (float_vif.cu).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub(crate) struct FloatVifConvertArgs {
    pub reference: SrcPlane,
    pub distorted: SrcPlane,
    pub out_ref: u64,
    pub out_dis: u64,
    pub w: i32,
    pub h: i32,
    pub bpc: i32,
    pub pad_: i32,
}

/// `FloatVifScaleArgs` (float_vif.cu).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub(crate) struct FloatVifScaleArgs {
    pub src: u64,
    pub dst: u64,
    pub col_idx: u64,
    pub col_wt: u64,
    pub row_idx: u64,
    pub row_wt: u64,
    pub w: i32,
    pub h: i32,
    pub sw: i32,
    pub sh: i32,
    /// 0 nearest, 1 bilinear, 2 bicubic, 3 lanczos4.
    pub method: i32,
    pub ntaps: i32,
}

/// The most taps a float_vif filter has (`FVIF_MAX_TAPS` in float_vif.cu).
pub(crate) const FLOAT_VIF_MAX_TAPS: usize = 72;

/// `FloatVifArgs` (float_vif.cu): every filter and statistic kernel's parameters.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub(crate) struct FloatVifArgs {
    pub reference: u64,
    pub distorted: u64,
    pub tmp: u64,
    pub out: u64,
    pub out2: u64,
    pub sums: u64,
    pub sigma_nsq: f64,
    pub filter: [f32; FLOAT_VIF_MAX_TAPS],
    pub poly: [f32; 9],
    pub gain_limit: f32,
    pub sigma_max_inv: f32,
    pub eps: f32,
    pub ntaps: i32,
    pub w: i32,
    pub h: i32,
    pub pad_: i32,
}

/// Rows one block of `vmaf_float_vif_rowsum` sums (`FVIF_BX`: one per thread).
pub(crate) const FLOAT_VIF_ROWSUM_ROWS: usize = 128;

/// float_vif's kernels (float_vif.cu).
pub(crate) struct FloatVifKernels {
    /// Both luma planes as `picture_copy`'s floats, from 8-bit samples.
    pub convert_u8: sys::CUfunction,
    /// The same from 16-bit samples.
    pub convert_u16: sys::CUfunction,
    /// `vif_prescale`'s scaler.
    pub scale: sys::CUfunction,
    /// The vertical pass of the five filtered sources.
    pub vpass: sys::CUfunction,
    /// The horizontal passes and the per-pixel statistic.
    pub stat: sys::CUfunction,
    /// Per-row `f32` sums of num and den.
    pub rowsum: sys::CUfunction,
    /// The vertical pass of the rows decimation keeps.
    pub dec_vpass: sys::CUfunction,
    /// The horizontal pass of the columns decimation keeps.
    pub dec_hpass: sys::CUfunction,
}

impl FloatVifKernels {
    fn resolve(m: &Module) -> Result<Self> {
        Ok(FloatVifKernels {
            convert_u8: m.function("vmaf_float_vif_convert_u8")?,
            convert_u16: m.function("vmaf_float_vif_convert_u16")?,
            scale: m.function("vmaf_float_vif_scale")?,
            vpass: m.function("vmaf_float_vif_vpass")?,
            stat: m.function("vmaf_float_vif_stat")?,
            rowsum: m.function("vmaf_float_vif_rowsum")?,
            dec_vpass: m.function("vmaf_float_vif_dec_vpass")?,
            dec_hpass: m.function("vmaf_float_vif_dec_hpass")?,
        })
    }
}

#[cfg(test)]
#[test]
fn float_vif_abi_sizes() {
    // The sizes float_vif.cu pins with static_assert.
    assert_eq!(std::mem::size_of::<FloatVifConvertArgs>(), 48 + 16 + 16);
    assert_eq!(std::mem::size_of::<FloatVifScaleArgs>(), 48 + 24);
    assert_eq!(
        std::mem::size_of::<FloatVifArgs>(),
        48 + 8 + 4 * FLOAT_VIF_MAX_TAPS + 36 + 12 + 16
    );
}

/// `CambiPrepArgs` (cambi.cu).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub(crate) struct CambiPrepArgs {
    pub src: SrcPlane,
    /// `u16` working picture.
    pub image: u64,
    /// `i32` resampling maps (target column / row to input), 0 for none.
    pub xs: u64,
    pub ys: u64,
    /// `u64` result slot counting samples above `max`.
    pub flag: u64,
    pub in_w: i32,
    pub in_h: i32,
    pub w: i32,
    pub h: i32,
    /// Samples a row of `image` as written.
    pub dst_stride: i32,
    /// Samples written a row (those at `x >= w` are 0).
    pub row_len: i32,
    pub bpc: i32,
    pub max: i32,
}

/// `CambiPlaneArgs` (cambi.cu).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub(crate) struct CambiPlaneArgs {
    pub src: u64,
    pub dst: u64,
    pub src_stride: i32,
    pub dst_stride: i32,
    pub w: i32,
    pub h: i32,
    /// Gather step: 1 (copy) or 2 (decimation).
    pub factor: i32,
    /// The spatial mask's threshold.
    pub index: i32,
}

/// `CambiCvalArgs` (cambi.cu).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub(crate) struct CambiCvalArgs {
    pub image: u64,
    pub mask: u64,
    /// `u16 [chunks][size][w]` histograms.
    pub hist: u64,
    /// `u32 [size]` active steps per band row.
    pub active: u64,
    /// `f32` reciprocal table.
    pub lut: u64,
    /// `f32 [h][w]` c-values.
    pub out: u64,
    pub stride: i32,
    pub w: i32,
    pub h: i32,
    pub pad: i32,
    pub base: i32,
    pub size: i32,
    /// Rows per chunk (one chunk per `blockIdx.y`).
    pub rows: i32,
    pub pad_: i32,
    pub weights: [i32; 32],
}

/// cambi's kernels (cambi.cu).
pub(crate) struct CambiKernels {
    pub validate_u16: sys::CUfunction,
    /// `[u8, u16]`: the 10-bit working picture from the frame.
    pub to10: [sys::CUfunction; 2],
    pub antidither: sys::CUfunction,
    pub gather: sys::CUfunction,
    pub deriv: sys::CUfunction,
    pub mask: sys::CUfunction,
    pub filter: sys::CUfunction,
    pub cvalues: sys::CUfunction,
}

impl CambiKernels {
    fn resolve(m: &Module) -> Result<Self> {
        Ok(CambiKernels {
            validate_u16: m.function("vmaf_cambi_validate_u16")?,
            to10: [
                m.function("vmaf_cambi_to10_u8")?,
                m.function("vmaf_cambi_to10_u16")?,
            ],
            antidither: m.function("vmaf_cambi_antidither")?,
            gather: m.function("vmaf_cambi_gather")?,
            deriv: m.function("vmaf_cambi_deriv")?,
            mask: m.function("vmaf_cambi_mask")?,
            filter: m.function("vmaf_cambi_filter")?,
            cvalues: m.function("vmaf_cambi_cvalues")?,
        })
    }
}

#[cfg(test)]
#[test]
fn cambi_abi_sizes() {
    // The sizes cambi.cu pins with static_assert.
    assert_eq!(std::mem::size_of::<CambiPrepArgs>(), 24 + 32 + 32);
    assert_eq!(std::mem::size_of::<CambiPlaneArgs>(), 16 + 24);
    assert_eq!(std::mem::size_of::<CambiCvalArgs>(), 48 + 32 + 128);
}

/// `FloatAnsnrFilterArgs` (float_ansnr.cu).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub(crate) struct FloatAnsnrFilterArgs {
    pub reference: SrcPlane,
    pub distorted: SrcPlane,
    pub ref_out: u64,
    pub dis_out: u64,
    pub filter_ref: [f32; 9],
    pub filter_dis: [f32; 25],
    pub w: i32,
    pub h: i32,
    pub bpc: i32,
    pub pad_: i32,
}

/// `FloatAnsnrRowsArgs` (float_ansnr.cu).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub(crate) struct FloatAnsnrRowsArgs {
    pub reference: u64,
    pub distorted: u64,
    pub out: u64,
    pub w: i32,
    pub h: i32,
}

/// Rows one block of `vmaf_float_ansnr_rows` sums (`FANSNR_BX`: one per thread).
pub(crate) const FLOAT_ANSNR_ROWS: usize = 128;

/// float_ansnr's kernels (float_ansnr.cu).
pub(crate) struct FloatAnsnrKernels {
    /// Both filtered pictures from 8-bit samples.
    pub filter_u8: sys::CUfunction,
    /// Both filtered pictures from 16-bit samples.
    pub filter_u16: sys::CUfunction,
    /// Per-row signal and noise energies of the filtered pair.
    pub rows: sys::CUfunction,
}

impl FloatAnsnrKernels {
    fn resolve(m: &Module) -> Result<Self> {
        Ok(FloatAnsnrKernels {
            filter_u8: m.function("vmaf_float_ansnr_filter_u8")?,
            filter_u16: m.function("vmaf_float_ansnr_filter_u16")?,
            rows: m.function("vmaf_float_ansnr_rows")?,
        })
    }
}

#[cfg(test)]
#[test]
fn float_ansnr_abi_sizes() {
    // The sizes float_ansnr.cu pins with static_assert.
    assert_eq!(
        std::mem::size_of::<FloatAnsnrFilterArgs>(),
        48 + 16 + 36 + 100 + 16
    );
    assert_eq!(std::mem::size_of::<FloatAnsnrRowsArgs>(), 32);
}

/// `PsnrHvsBlockArgs` (psnr_hvs.cu).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub(crate) struct PsnrHvsBlockArgs {
    pub reference: SrcPlane,
    pub distorted: SrcPlane,
    pub terms: u64,
    pub csf: [f32; 64],
    pub mask: [f32; 64],
    pub nbx: i32,
    pub nby: i32,
    pub step_ref: i32,
    pub step_dis: i32,
}

/// `PsnrHvsSumArgs` (psnr_hvs.cu).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub(crate) struct PsnrHvsSumArgs {
    pub terms: [u64; 3],
    pub out: [u64; 3],
    pub n: [i32; 3],
    pub pad_: i32,
}

/// Threads per block of `vmaf_psnr_hvs_sum` (`PHVS_SUM_THREADS`; one block per plane).
pub(crate) const PSNR_HVS_SUM_THREADS: u32 = 256;

/// psnr_hvs's kernels (psnr_hvs.cu).
pub(crate) struct PsnrHvsKernels {
    /// Every block's 64 weighted squared errors from 8-bit samples.
    pub block_u8: sys::CUfunction,
    /// The same from 16-bit samples.
    pub block_u16: sys::CUfunction,
    /// Each plane's terms added in order.
    pub sum: sys::CUfunction,
}

impl PsnrHvsKernels {
    fn resolve(m: &Module) -> Result<Self> {
        Ok(PsnrHvsKernels {
            block_u8: m.function("vmaf_psnr_hvs_block_u8")?,
            block_u16: m.function("vmaf_psnr_hvs_block_u16")?,
            sum: m.function("vmaf_psnr_hvs_sum")?,
        })
    }
}

#[cfg(test)]
#[test]
fn psnr_hvs_abi_sizes() {
    // The sizes psnr_hvs.cu pins with static_assert.
    assert_eq!(
        std::mem::size_of::<PsnrHvsBlockArgs>(),
        48 + 8 + 256 + 256 + 16
    );
    assert_eq!(std::mem::size_of::<PsnrHvsSumArgs>(), 24 + 24 + 16);
}

/// `CiedeArgs` (ciede.cu).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub(crate) struct CiedeArgs {
    pub reference: SrcPlane,
    pub distorted: SrcPlane,
    pub ref_chroma: [SrcPlane; 2],
    pub dis_chroma: [SrcPlane; 2],
    pub terms: u64,
    pub w: i32,
    pub h: i32,
    pub cw: i32,
    pub ch: i32,
    pub pitch: i32,
    pub step_ref: i32,
    pub step_dis: i32,
    pub bpc: i32,
    pub layout: i32,
    pub pad_: i32,
}

/// `CiedeSumArgs` (ciede.cu).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub(crate) struct CiedeSumArgs {
    pub terms: u64,
    pub out: u64,
    pub n: i32,
    pub pad_: i32,
}

/// Threads per block of `vmaf_ciede_sum` (`CIEDE_SUM_THREADS`; one block).
pub(crate) const CIEDE_SUM_THREADS: u32 = 256;

/// ciede's kernels (ciede.cu).
pub(crate) struct CiedeKernels {
    /// Every position's ΔE00 from 8-bit samples.
    pub pixel_u8: sys::CUfunction,
    /// The same from 16-bit samples.
    pub pixel_u16: sys::CUfunction,
    /// The terms added in raster order into a double.
    pub sum: sys::CUfunction,
}

impl CiedeKernels {
    fn resolve(m: &Module) -> Result<Self> {
        Ok(CiedeKernels {
            pixel_u8: m.function("vmaf_ciede_u8")?,
            pixel_u16: m.function("vmaf_ciede_u16")?,
            sum: m.function("vmaf_ciede_sum")?,
        })
    }
}

#[cfg(test)]
#[test]
fn ciede_abi_sizes() {
    // The sizes ciede.cu pins with static_assert.
    assert_eq!(std::mem::size_of::<CiedeArgs>(), 144 + 8 + 40);
    assert_eq!(std::mem::size_of::<CiedeSumArgs>(), 24);
}

/// `FloatAdmDwtArgs` (float_adm.cu).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub(crate) struct FloatAdmDwtArgs {
    pub src: [SrcPlane; 2],
    pub level: [u64; 2],
    pub tlo: [u64; 2],
    pub thi: [u64; 2],
    pub a: [u64; 2],
    pub hvd: [[u64; 3]; 2],
    pub lo: [f32; 4],
    pub hi: [f32; 4],
    pub in_w: i32,
    pub in_h: i32,
    pub out_w: i32,
    pub out_h: i32,
    pub bs: i32,
    pub bpc: i32,
    pub lo_only: i32,
    pub pad_: i32,
}

/// `FloatAdmDecoupleArgs` (float_adm.cu).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub(crate) struct FloatAdmDecoupleArgs {
    pub reference: [u64; 3],
    pub distorted: [u64; 3],
    pub r: [u64; 3],
    pub a: [u64; 3],
    pub rcp_table: u64,
    pub gain_limit: f64,
    pub cos_1deg_sq: f32,
    pub eps: f32,
    pub bs: i32,
    pub left: i32,
    pub right: i32,
    pub top: i32,
    pub bottom: i32,
    pub exact_div: i32,
}

/// `FloatAdmCsfArgs` (float_adm.cu).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub(crate) struct FloatAdmCsfArgs {
    pub src: [u64; 3],
    pub dst: [u64; 3],
    pub flt: [u64; 3],
    pub one_by_30: f64,
    pub rfactor: [f32; 3],
    pub bs: i32,
    pub left: i32,
    pub right: i32,
    pub top: i32,
    pub bottom: i32,
}

/// `FloatAdmCmArgs` (float_adm.cu).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub(crate) struct FloatAdmCmArgs {
    pub src: [u64; 3],
    pub flt: [u64; 3],
    pub csf: [u64; 3],
    pub val: [u64; 3],
    pub one_by_15: f64,
    pub rfactor: [f32; 3],
    pub w: i32,
    pub h: i32,
    pub bs: i32,
    pub left: i32,
    pub right: i32,
    pub top: i32,
    pub bottom: i32,
    pub bypass: i32,
    pub pad_: i32,
}

/// `FloatAdmRowsArgs` (float_adm.cu).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub(crate) struct FloatAdmRowsArgs {
    pub src: [u64; 3],
    pub out: u64,
    pub rfactor: [f32; 3],
    pub den: i32,
    pub bs: i32,
    pub left: i32,
    pub right: i32,
    pub top: i32,
    pub bottom: i32,
    pub pad_: i32,
}

/// `FloatAdmTotalArgs` (float_adm.cu).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub(crate) struct FloatAdmTotalArgs {
    pub rows: u64,
    pub out: u64,
    pub off: [i32; 4],
    pub n: [i32; 4],
}

/// Threads of the one block of `vmaf_float_adm_total`.
pub(crate) const FLOAT_ADM_TOTAL_THREADS: u32 = 64;

/// float_adm's kernels (float_adm.cu).
pub(crate) struct FloatAdmKernels {
    /// `[u8, u16, f32]`: the DWT's vertical pass from the frames (scale 0) or from band a of
    /// the previous scale.
    pub dwt_v: [sys::CUfunction; 3],
    /// The DWT's horizontal pass into the four bands.
    pub dwt_h: sys::CUfunction,
    pub decouple: sys::CUfunction,
    pub csf: sys::CUfunction,
    /// Contrast masking: each sample's cubed value.
    pub cm: sys::CUfunction,
    /// One thread per row and band: the row's sum from left to right.
    pub rows: sys::CUfunction,
    /// The row sums' totals in row order, into the result slots.
    pub total: sys::CUfunction,
}

impl FloatAdmKernels {
    fn resolve(m: &Module) -> Result<Self> {
        Ok(FloatAdmKernels {
            dwt_v: [
                m.function("vmaf_float_adm_dwt_v_u8")?,
                m.function("vmaf_float_adm_dwt_v_u16")?,
                m.function("vmaf_float_adm_dwt_v_f32")?,
            ],
            dwt_h: m.function("vmaf_float_adm_dwt_h")?,
            decouple: m.function("vmaf_float_adm_decouple")?,
            csf: m.function("vmaf_float_adm_csf")?,
            cm: m.function("vmaf_float_adm_cm")?,
            rows: m.function("vmaf_float_adm_rows")?,
            total: m.function("vmaf_float_adm_total")?,
        })
    }
}

#[cfg(test)]
#[test]
fn float_adm_abi_sizes() {
    // The sizes float_adm.cu pins with static_assert.
    assert_eq!(
        std::mem::size_of::<FloatAdmDwtArgs>(),
        48 + 16 * 4 + 48 + 32 + 32
    );
    assert_eq!(
        std::mem::size_of::<FloatAdmDecoupleArgs>(),
        96 + 8 + 8 + 8 + 24
    );
    assert_eq!(std::mem::size_of::<FloatAdmCsfArgs>(), 72 + 8 + 12 + 20);
    assert_eq!(std::mem::size_of::<FloatAdmCmArgs>(), 96 + 8 + 12 + 36);
    assert_eq!(std::mem::size_of::<FloatAdmRowsArgs>(), 32 + 12 + 28);
    assert_eq!(std::mem::size_of::<FloatAdmTotalArgs>(), 48);
}

/// `SpeedPrepArgs` (speed.cu).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub(crate) struct SpeedPrepArgs {
    pub src: SrcPlane,
    pub a: u64,
    pub b: u64,
    pub col_idx: u64,
    pub col_w: u64,
    pub row_idx: u64,
    pub row_w: u64,
    pub dst: u64,
    pub w: i32,
    pub h: i32,
    pub sw: i32,
    pub sh: i32,
    pub step: i32,
    pub bpc: i32,
    /// 0 none (a copy), 1 nearest, 2 bilinear, 3 bicubic, 4 lanczos4.
    pub method: i32,
    pub ntaps: i32,
}

/// Taps of [`SpeedFilterArgs`] (`SPEED_MAX_TAPS` in speed.cu).
pub(crate) const SPEED_MAX_TAPS: usize = 40;

/// `SpeedFilterArgs` (speed.cu).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub(crate) struct SpeedFilterArgs {
    pub src: u64,
    pub dst: u64,
    pub sub: u64,
    pub taps: [f32; SPEED_MAX_TAPS],
    pub ntaps: i32,
    pub w: i32,
    pub h: i32,
    pub ow: i32,
    pub oh: i32,
    pub step: i32,
}

/// `SpeedCovArgs` (speed.cu).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub(crate) struct SpeedCovArgs {
    pub small: [u64; 4],
    pub sums: [u64; 4],
    pub means: u64,
    pub dw: i32,
    pub subw: i32,
    pub subh: i32,
    /// 0 C, 1 AVX2, 2 AVX-512.
    pub family: i32,
    pub n_sub: f32,
    pub pad_: i32,
}

/// Threads per block of `vmaf_speed_means` and `vmaf_speed_cov` (`SPEED_COV_BX`).
pub(crate) const SPEED_COV_BX: u32 = 32;

/// SpEED's kernels (speed.cu).
pub(crate) struct SpeedKernels {
    /// `[u8, u16, f32]`: a plane's float samples (frames; `f32`: the difference of two float
    /// pictures), rescaled with the host's tap tables or not.
    pub prep: [sys::CUfunction; 3],
    /// The vertical filter pass at every `step`-th row.
    pub vfilter: sys::CUfunction,
    /// The horizontal filter pass at every `step`-th column, optionally subtracted.
    pub hfilter: sys::CUfunction,
    /// The 25 submatrices' means.
    pub means: sys::CUfunction,
    /// The 325 covariance sums in a libvmaf family's order.
    pub cov: sys::CUfunction,
}

impl SpeedKernels {
    fn resolve(m: &Module) -> Result<Self> {
        Ok(SpeedKernels {
            prep: [
                m.function("vmaf_speed_prep_u8")?,
                m.function("vmaf_speed_prep_u16")?,
                m.function("vmaf_speed_prep_f32")?,
            ],
            vfilter: m.function("vmaf_speed_vfilter")?,
            hfilter: m.function("vmaf_speed_hfilter")?,
            means: m.function("vmaf_speed_means")?,
            cov: m.function("vmaf_speed_cov")?,
        })
    }
}

#[cfg(test)]
#[test]
fn speed_abi_sizes() {
    // The sizes speed.cu pins with static_assert.
    assert_eq!(std::mem::size_of::<SpeedPrepArgs>(), 24 + 56 + 32);
    assert_eq!(
        std::mem::size_of::<SpeedFilterArgs>(),
        24 + 4 * SPEED_MAX_TAPS + 24
    );
    assert_eq!(std::mem::size_of::<SpeedCovArgs>(), 72 + 24);
}

/// Threads per block of the row kernels (`*_BX` in the .cu files).
pub(crate) const BX: u32 = 128;

/// Threads per block of `vmaf_vif_stat_*` (`VIF_THREADS` in vif.cu): its vertical pass's
/// 128 + 16 columns in whole warps.
pub(crate) const VIF_THREADS: u32 = 160;

/// Threads per block of `vmaf_vif_down_*` (`VIF_DOWN_THREADS` in vif.cu).
pub(crate) const VIF_DOWN_THREADS: u32 = 288;

/// Output rows one block of VIF's statistic or downsampling computes at `scale` (`VifRows` in
/// vif.cu).
pub(crate) fn vif_rows(scale: usize) -> usize {
    8 >> scale
}

/// Rows one block of `vmaf_adm_cm_*` computes (`ADM_CM_ROWS` in adm.cu; `BX` threads).
pub(crate) const ADM_CM_ROWS: usize = 8;

/// Output rows one block of `vmaf_motion_sad_*` computes (`MOTION_ROWS` in motion.cu).
pub(crate) const MOTION_ROWS: usize = 8;

/// Threads per block of `vmaf_motion_sad_*` (`MOTION_THREADS` in motion.cu): its vertical
/// pass's 128 + 4 columns in whole warps.
pub(crate) const MOTION_THREADS: u32 = 160;

/// Every kernel of the module, looked up once after loading.
pub(crate) struct Kernels {
    pub motion_sad_u8: sys::CUfunction,
    pub motion_sad_u16: sys::CUfunction,
    pub motion_finish: sys::CUfunction,
    /// `[u8 s0, u16 s0, u16 s1, u16 s2, u16 s3]`
    pub vif_stat: [sys::CUfunction; 5],
    /// `[u8 s1, u16 s1, u16 s2, u16 s3]` (downsampling *into* scale s)
    pub vif_down: [sys::CUfunction; 4],
    pub adm_dwt_u8_s0: sys::CUfunction,
    pub adm_dwt_u16_s0: sys::CUfunction,
    pub adm_dwt_s123: sys::CUfunction,
    pub adm_cm_s0: sys::CUfunction,
    pub adm_cm_s123: sys::CUfunction,
    pub adm_finish: sys::CUfunction,
    pub psnr_sse_u8: sys::CUfunction,
    pub psnr_sse_u16: sys::CUfunction,
    pub float_psnr_sq_u16: sys::CUfunction,
    pub float_ssim: FloatSsimKernels,
    pub float_ms_ssim: FloatMsSsimKernels,
    pub float_motion: FloatMotionKernels,
    pub float_moment: FloatMomentKernels,
    pub float_vif: FloatVifKernels,
    pub cambi: CambiKernels,
    pub float_ansnr: FloatAnsnrKernels,
    pub psnr_hvs: PsnrHvsKernels,
    pub ciede: CiedeKernels,
    pub float_adm: FloatAdmKernels,
    pub speed: SpeedKernels,
}

impl Kernels {
    /// Resolves every kernel in `m`.
    pub(crate) fn resolve(m: &Module) -> Result<Self> {
        Ok(Kernels {
            motion_sad_u8: m.function("vmaf_motion_sad_u8")?,
            motion_sad_u16: m.function("vmaf_motion_sad_u16")?,
            motion_finish: m.function("vmaf_motion_finish")?,
            vif_stat: [
                m.function("vmaf_vif_stat_u8_s0")?,
                m.function("vmaf_vif_stat_u16_s0")?,
                m.function("vmaf_vif_stat_u16_s1")?,
                m.function("vmaf_vif_stat_u16_s2")?,
                m.function("vmaf_vif_stat_u16_s3")?,
            ],
            vif_down: [
                m.function("vmaf_vif_down_u8_s1")?,
                m.function("vmaf_vif_down_u16_s1")?,
                m.function("vmaf_vif_down_u16_s2")?,
                m.function("vmaf_vif_down_u16_s3")?,
            ],
            adm_dwt_u8_s0: m.function("vmaf_adm_dwt_u8_s0")?,
            adm_dwt_u16_s0: m.function("vmaf_adm_dwt_u16_s0")?,
            adm_dwt_s123: m.function("vmaf_adm_dwt_s123")?,
            adm_cm_s0: m.function("vmaf_adm_cm_s0")?,
            adm_cm_s123: m.function("vmaf_adm_cm_s123")?,
            adm_finish: m.function("vmaf_adm_finish")?,
            psnr_sse_u8: m.function("vmaf_psnr_sse_u8")?,
            psnr_sse_u16: m.function("vmaf_psnr_sse_u16")?,
            float_psnr_sq_u16: m.function("vmaf_float_psnr_sq_u16")?,
            float_ssim: FloatSsimKernels::resolve(m)?,
            float_ms_ssim: FloatMsSsimKernels::resolve(m)?,
            float_motion: FloatMotionKernels::resolve(m)?,
            float_moment: FloatMomentKernels::resolve(m)?,
            float_vif: FloatVifKernels::resolve(m)?,
            cambi: CambiKernels::resolve(m)?,
            float_ansnr: FloatAnsnrKernels::resolve(m)?,
            psnr_hvs: PsnrHvsKernels::resolve(m)?,
            ciede: CiedeKernels::resolve(m)?,
            float_adm: FloatAdmKernels::resolve(m)?,
            speed: SpeedKernels::resolve(m)?,
        })
    }
}

/// Number of blocks of `BX` threads covering `n` items.
pub(crate) fn blocks(n: usize) -> u32 {
    n.div_ceil(BX as usize) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    // The sizes of the C++ structs, which kernels/*.cu pin with static_assert.
    #[test]
    fn abi_sizes() {
        assert_eq!(std::mem::size_of::<SrcPlane>(), 24);
        assert_eq!(std::mem::size_of::<MotionArgs>(), 24 * 2 + 8 + 16);
        assert_eq!(std::mem::size_of::<MotionFinishArgs>(), 24);
        assert_eq!(std::mem::size_of::<VifStatArgs>(), 48 + 40 + 24);
        assert_eq!(std::mem::size_of::<VifDownArgs>(), 48 + 16 + 16);
        assert_eq!(std::mem::size_of::<AdmDwtArgs>(), 216);
        assert_eq!(std::mem::size_of::<AdmCmArgs>(), 128);
        assert_eq!(std::mem::size_of::<AdmFinishArgs>(), 32 + 8 + 16 + 144 * 2);
        assert_eq!(std::mem::size_of::<PsnrArgs>(), 48 + 8 + 16);
        assert_eq!(
            std::mem::size_of::<FloatSsimDecimateArgs>(),
            48 + 16 + 24 + 8
        );
        assert_eq!(
            std::mem::size_of::<FloatSsimTermsArgs>(),
            48 + 8 + 20 + 16 + 44
        );
        assert_eq!(std::mem::size_of::<FloatSsimSumArgs>(), 24);
    }
}
