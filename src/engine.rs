//! The engine: placeholder, being written.

/// Engine configuration.
pub struct EngineConfig;
/// The engine.
pub struct Engine;
/// Scores of one frame.
pub struct FrameScores;
/// Pooled results.
pub struct PooledResults;
