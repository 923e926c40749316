//! Pooling of per-frame values into one number per feature or model, computed exactly as libvmaf's
//! `vmaf_feature_score_pooled` (which also produces the `pooled_metrics` of its logs).

use std::fmt;
use std::str::FromStr;

use crate::error::{Error, Result};

/// A pooling method.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PoolMethod {
    /// Arithmetic mean.
    Mean,
    /// Harmonic mean of `value + 1`, minus 1 (libvmaf's definition).
    HarmonicMean,
    /// Minimum.
    Min,
    /// Maximum.
    Max,
}

impl PoolMethod {
    /// All methods, in the order libvmaf's logs print them (`min`, `max`, `mean`,
    /// `harmonic_mean`).
    pub const LOG_ORDER: [PoolMethod; 4] = [
        PoolMethod::Min,
        PoolMethod::Max,
        PoolMethod::Mean,
        PoolMethod::HarmonicMean,
    ];

    /// The method's name as libvmaf writes and reads it.
    pub fn as_str(self) -> &'static str {
        match self {
            PoolMethod::Mean => "mean",
            PoolMethod::HarmonicMean => "harmonic_mean",
            PoolMethod::Min => "min",
            PoolMethod::Max => "max",
        }
    }
}

impl fmt::Display for PoolMethod {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for PoolMethod {
    type Err = Error;

    /// Parses `mean`, `harmonic_mean`, `min` or `max`.
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "mean" => Ok(PoolMethod::Mean),
            "harmonic_mean" => Ok(PoolMethod::HarmonicMean),
            "min" => Ok(PoolMethod::Min),
            "max" => Ok(PoolMethod::Max),
            _ => Err(Error::InvalidOption(format!(
                "unknown pool method '{s}' (known: mean, harmonic_mean, min, max)"
            ))),
        }
    }
}

/// The four pooled values of one series.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PoolStats {
    /// Minimum.
    pub min: f64,
    /// Maximum.
    pub max: f64,
    /// Arithmetic mean.
    pub mean: f64,
    /// `n / Σ 1/(s+1) − 1`.
    pub harmonic_mean: f64,
}

impl PoolStats {
    /// The value for one method.
    pub fn get(&self, method: PoolMethod) -> f64 {
        match method {
            PoolMethod::Mean => self.mean,
            PoolMethod::HarmonicMean => self.harmonic_mean,
            PoolMethod::Min => self.min,
            PoolMethod::Max => self.max,
        }
    }
}

/// Pools the values of the frames that count (with `n_subsample`, only those), in frame order,
/// exactly as `vmaf_feature_score_pooled`: `sum += s` and `i_sum += 1/(s+1)` in order; the first
/// value initialises min and max, later ones replace them only when strictly smaller / larger
/// (so NaNs never replace, except as the first value); `mean = sum / n`,
/// `harmonic_mean = n / i_sum − 1`. No values give min = max = 0 and NaN means.
pub fn pool(values: impl IntoIterator<Item = f64>) -> PoolStats {
    let mut n: u32 = 0;
    let (mut min, mut max, mut sum, mut i_sum) = (0.0f64, 0.0f64, 0.0f64, 0.0f64);
    for s in values {
        sum += s;
        i_sum += 1.0 / (s + 1.0);
        if n == 0 || s < min {
            min = s;
        }
        if n == 0 || s > max {
            max = s;
        }
        n += 1;
    }
    let n = f64::from(n);
    PoolStats {
        min,
        max,
        mean: sum / n,
        harmonic_mean: n / i_sum - 1.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formulas() {
        let v = [1.0, 3.0, 0.5, 2.0];
        let p = pool(v);
        assert_eq!(p.min, 0.5);
        assert_eq!(p.max, 3.0);
        assert_eq!(p.mean, (((1.0 + 3.0) + 0.5) + 2.0) / 4.0);
        let i_sum = ((1.0 / 2.0 + 1.0 / 4.0) + 1.0 / 1.5) + 1.0 / 3.0;
        assert_eq!(p.harmonic_mean, 4.0 / i_sum - 1.0);
        assert_eq!(p.get(PoolMethod::Min), 0.5);
        assert_eq!(p.get(PoolMethod::Max), 3.0);
        assert_eq!(p.get(PoolMethod::Mean), p.mean);
        assert_eq!(p.get(PoolMethod::HarmonicMean), p.harmonic_mean);
    }

    #[test]
    fn summation_order_is_frame_order() {
        // (1e16 + 1) + 1 != 1e16 + (1 + 1) in doubles: the sum must run in order.
        let p = pool([1e16, 1.0, 1.0]);
        assert_eq!(p.mean, ((1e16 + 1.0) + 1.0) / 3.0);
    }

    #[test]
    fn edge_cases() {
        let p = pool([]);
        assert_eq!((p.min, p.max), (0.0, 0.0));
        assert!(p.mean.is_nan() && p.harmonic_mean.is_nan());
        let p = pool([f64::NAN, 1.0]);
        assert!(p.min.is_nan() && p.max.is_nan());
        let p = pool([1.0, f64::NAN, 0.5]);
        assert_eq!((p.min, p.max), (0.5, 1.0));
        let p = pool([7.0]);
        assert_eq!(
            (p.min, p.max, p.mean, p.harmonic_mean),
            (7.0, 7.0, 7.0, 7.0)
        );
    }

    #[test]
    fn parse_methods() {
        for m in PoolMethod::LOG_ORDER {
            assert_eq!(m.as_str().parse::<PoolMethod>().unwrap(), m);
        }
        assert!("average".parse::<PoolMethod>().is_err());
    }
}
