//! Statistics shared by metrics, reports and the benchmark: quantiles of
//! samples, plain or weighted, and summaries.
//!
//! Quantile definitions follow Hyndman & Fan, *Sample Quantiles in
//! Statistical Packages* (1996), and numpy's `method` names:
//! [`Quantile::InvertedCdf`] (H&F type 1: the smallest sample whose
//! cumulative share reaches `q`; the "nearest rank" of textbooks) and
//! [`Quantile::Nearest`] (numpy's `nearest`: the sample at index
//! `round((n − 1)·q)`). Both return a sample, never an interpolation.

/// How a quantile picks its sample (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Quantile {
    /// Hyndman & Fan type 1, the inverted empirical CDF: the smallest
    /// sample `x` with `share(≤ x) ≥ q`. With weights, shares are weights.
    InvertedCdf,
    /// numpy's `nearest`: the sorted sample at index `round((n − 1)·q)`
    /// (unweighted only).
    Nearest,
}

/// The `q`-quantile (`q ∈ [0, 1]`) of `values` by `method`; `None` when
/// there are none. Sorts `values` in place (NaN last). O(n log n).
///
/// # Example
/// ```
/// use crowdpatch::stats::{Quantile, quantile};
/// let mut v = vec![4.0, 1.0, 3.0, 2.0];
/// assert_eq!(quantile(&mut v, 0.5, Quantile::InvertedCdf), Some(2.0));
/// assert_eq!(quantile(&mut v, 0.5, Quantile::Nearest), Some(3.0));
/// assert_eq!(quantile(&mut [], 0.5, Quantile::Nearest), None);
/// ```
pub fn quantile(values: &mut [f64], q: f64, method: Quantile) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    values.sort_by(f64::total_cmp);
    let n = values.len();
    let i = match method {
        Quantile::InvertedCdf => ((n as f64 * q).ceil() as usize).clamp(1, n) - 1,
        Quantile::Nearest => (((n - 1) as f64 * q).round() as usize).min(n - 1),
    };
    Some(values[i])
}

/// The weighted `q`-quantile (`q ∈ [0, 1]`) of `(value, weight)` samples by
/// the inverted CDF: the smallest value whose cumulative weight reaches
/// `q × total` (e.g. time-weighted speeds: weights are durations `[s]`).
/// With no positive weight, the unweighted [`Quantile::Nearest`]. 0 when
/// there are no samples. Sorts `samples` in place. O(n log n).
///
/// # Example
/// ```
/// use crowdpatch::stats::weighted_quantile;
/// // 1 m/s for 3 s, 2 m/s for 1 s: the median is 1, the 0.9-quantile 2.
/// let mut s = vec![(2.0, 1.0), (1.0, 3.0)];
/// assert_eq!(weighted_quantile(&mut s, 0.5), 1.0);
/// assert_eq!(weighted_quantile(&mut s, 0.9), 2.0);
/// ```
pub fn weighted_quantile(samples: &mut [(f64, f64)], q: f64) -> f64 {
    if samples.is_empty() {
        return 0.0;
    }
    samples.sort_by(|a, b| a.0.total_cmp(&b.0));
    let total: f64 = samples.iter().map(|s| s.1).sum();
    if total <= 0.0 {
        return samples[((samples.len() - 1) as f64 * q).round() as usize].0;
    }
    let target = q * total;
    let mut acc = 0.0;
    for s in samples.iter() {
        acc += s.1;
        if acc >= target {
            return s.0;
        }
    }
    samples[samples.len() - 1].0
}

/// Mean of `values`; 0 when there are none.
pub fn mean(values: &[f64]) -> f64 {
    if values.is_empty() { 0.0 } else { values.iter().sum::<f64>() / values.len() as f64 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inverted_cdf_is_the_nearest_rank() {
        // Nearest rank: the ⌈n q⌉-th smallest.
        let mut v: Vec<f64> = (1..=10).map(f64::from).collect();
        for (q, want) in [(0.0, 1.0), (0.05, 1.0), (0.1, 1.0), (0.11, 2.0), (0.5, 5.0), (0.95, 10.0), (1.0, 10.0)] {
            assert_eq!(quantile(&mut v, q, Quantile::InvertedCdf), Some(want), "q = {q}");
        }
    }

    #[test]
    fn weighted_with_equal_weights_is_the_inverted_cdf() {
        let values = [0.3, 2.5, 1.1, 0.7, 4.0, 1.9, 3.3];
        for q in [0.0, 0.05, 0.25, 0.5, 0.75, 0.95, 1.0] {
            let mut s: Vec<(f64, f64)> = values.iter().map(|&v| (v, 0.5)).collect();
            let mut v = values.to_vec();
            assert_eq!(Some(weighted_quantile(&mut s, q)), quantile(&mut v, q, Quantile::InvertedCdf), "q = {q}");
        }
    }

    #[test]
    fn nearest_rounds_the_index() {
        let mut v = vec![5.0, 1.0, 4.0, 2.0, 3.0];
        assert_eq!(quantile(&mut v, 0.95, Quantile::Nearest), Some(5.0));
        assert_eq!(quantile(&mut v, 0.05, Quantile::Nearest), Some(1.0));
        assert_eq!(quantile(&mut v, 0.6, Quantile::Nearest), Some(3.0));
        assert_eq!(mean(&v), 3.0);
    }
}
