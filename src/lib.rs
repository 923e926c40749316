//! vmaf_rs: libvmaf-identical VMAF in Rust.
//!
//! The engine ([`engine::Engine`]) takes (reference, distorted) picture pairs and produces per-frame
//! feature values and model scores identical to Netflix's libvmaf (integer VIF, ADM and motion
//! extractors, libsvm ν-SVR models, libvmaf pooling). The same engine serves the `vmaf-rs` CLI, the
//! C ABI used by FFmpeg's `vmaf_rs` filter (feature `capi`) and, with feature `cuda`, the GPU path.
//!
//! Dependencies point one way: CLI → engine; C ABI → session → engine. The engine knows nothing of
//! FFmpeg or C.
#![deny(unsafe_op_in_unsafe_fn)]
#![deny(clippy::undocumented_unsafe_blocks, clippy::missing_safety_doc)]

#[cfg(feature = "capi")]
pub mod backend;
pub mod capi;
pub mod cpu;
pub mod cuda;
pub mod engine;
pub mod error;
pub mod feature;
pub mod fidelity;
pub mod ladder;
pub mod model;
pub mod output;
pub mod picture;
pub mod report;
pub mod segment;
pub mod session;
pub mod video;

pub use engine::{Engine, EngineConfig, FrameScores, PooledResults};
pub use error::{Error, Result};
pub use fidelity::{LibvmafIsa, LibvmafIsaMode};
pub use ladder::Ladder;
pub use picture::{Chroma, ChromaLayout, LentPicture, Picture, PictureFormat, Plane};
