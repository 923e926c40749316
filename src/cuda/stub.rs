//! The CUDA API without the `cuda` feature: same types and signatures, every constructor fails
//! with "built without CUDA".
#![forbid(unsafe_code)]

use super::CudaFrame;
use crate::engine::{Engine, InstanceInfo};
use crate::error::{Error, Result};
use crate::picture::PictureFormat;
use std::ffi::c_void;

/// Frames in flight by default (as in the CUDA build).
pub const DEFAULT_DEPTH: usize = 4;

pub(crate) fn unavailable() -> Error {
    Error::Cuda(
        "built without CUDA support: rebuild vmaf_rs with `--features cuda` \
         (needs nvcc at build time, see scripts/cuda-toolchain.sh)"
            .into(),
    )
}

/// Placeholder of the CUDA scorer; cannot be constructed in this build.
#[derive(Debug)]
pub struct CudaScorer {
    _never: std::convert::Infallible,
}

impl CudaScorer {
    /// Always fails: this build has no CUDA backend.
    pub fn new(
        _ctx: *mut c_void,
        _stream: *mut c_void,
        _format: PictureFormat,
        _shift: u8,
        _instances: &[InstanceInfo<'_>],
        _row_len: usize,
        _n_subsample: u32,
    ) -> Result<Self> {
        Err(unavailable())
    }

    /// Always fails: this build has no CUDA backend.
    pub fn for_engine(
        _ctx: *mut c_void,
        _stream: *mut c_void,
        _engine: &Engine,
        _shift: u8,
    ) -> Result<Self> {
        Err(unavailable())
    }

    /// Unreachable (no value of this type exists).
    pub fn set_depth(&mut self, _depth: usize) -> Result<()> {
        match self._never {}
    }

    /// Unreachable (no value of this type exists).
    pub fn placement(&self) -> String {
        match self._never {}
    }

    /// Unreachable (no value of this type exists).
    pub fn totals(&self) -> Vec<(usize, Vec<u64>)> {
        match self._never {}
    }

    /// Unreachable (no value of this type exists).
    pub fn frames_submitted(&self) -> u64 {
        match self._never {}
    }

    /// Unreachable (no value of this type exists).
    pub fn frames_held(&self) -> usize {
        match self._never {}
    }

    /// Unreachable (no value of this type exists).
    pub fn device_bytes(&self) -> usize {
        match self._never {}
    }

    /// Unreachable; drops (releases) the frames.
    pub fn submit(&mut self, _reference: CudaFrame, _distorted: CudaFrame) -> Result<()> {
        match self._never {}
    }

    /// Unreachable (no value of this type exists).
    pub fn poll(&mut self, _out: &mut Vec<f64>) -> Result<bool> {
        match self._never {}
    }

    /// Unreachable (no value of this type exists).
    pub fn drain(&mut self, _out: &mut dyn FnMut(&[f64])) -> Result<()> {
        match self._never {}
    }
}

/// Placeholder of the host-frame uploader; cannot be constructed in this build.
#[derive(Debug)]
pub(crate) struct HostUpload {
    _never: std::convert::Infallible,
}

impl HostUpload {
    /// Always fails: this build has no CUDA backend.
    pub(crate) fn new(_ordinal: i32) -> Result<Self> {
        Err(unavailable())
    }

    /// Unreachable (no value of this type exists).
    pub(crate) fn context(&self) -> *mut c_void {
        match self._never {}
    }

    /// Unreachable (no value of this type exists).
    pub(crate) fn stream(&self) -> *mut c_void {
        match self._never {}
    }

    /// Unreachable (no value of this type exists).
    pub(crate) fn upload(
        &mut self,
        _pic: &crate::picture::Picture<'_>,
        _chroma: bool,
    ) -> Result<CudaFrame> {
        match self._never {}
    }
}
