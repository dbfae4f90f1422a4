//! Greedy curve simplification against a tolerance test: from each kept
//! key, the farthest sample whose interval fits (as in ACL and gltfpack),
//! found by gallop and bisection.

/// Greedy simplification of `m` samples: from each kept key the farthest
/// sample that `fits` (every sample after the key up to it within bounds:
/// `fits(a, Some(c))` for keys `a` and `c`), by gallop (from the last
/// step's length, doubling) and bisection, never stepping over a sample in
/// `must`. One key when `fits(0, None)` (constant within bounds) and
/// nothing after the first sample is a must; else the first and the last
/// sample are keys. Assumes an interval fits where a longer one from the
/// same key does (the bisection's premise).
///
/// Cost: O(K log L) calls of `fits` for K kept keys `L` samples apart.
pub(super) fn simplify(m: usize, must: &[bool], mut fits: impl FnMut(usize, Option<usize>) -> bool) -> Vec<usize> {
    if m < 2 {
        return (0..m).collect();
    }
    if !must[1..].iter().any(|&x| x) && fits(0, None) {
        return vec![0];
    }
    // The first must at or after each sample (m: none).
    let mut next_must = vec![m; m + 1];
    for k in (0..m).rev() {
        next_must[k] = if must[k] { k } else { next_must[k + 1] };
    }
    let mut kept = vec![0];
    let mut a0 = 0;
    // The last step, where the gallop starts (steps change slowly).
    let mut step = 2;
    while a0 + 1 < m {
        let limit = match next_must[a0 + 1] {
            k if k < m => k,
            _ => m - 1,
        };
        let lo = farthest(a0, limit, step, &mut fits);
        kept.push(lo);
        step = lo - a0;
        a0 = lo;
    }
    kept
}

/// The farthest sample after key `a0`, up to `limit`, that `fits` from
/// it (the next sample when none does): a gallop from a step of `step`
/// samples, doubling, then bisection.
fn farthest(a0: usize, limit: usize, step: usize, fits: &mut impl FnMut(usize, Option<usize>) -> bool) -> usize {
    // Gallop: lo fits (or is the next sample), hi does not (or is past the
    // limit).
    let (mut lo, mut hi) = (a0 + 1, limit + 1);
    let mut len = step.clamp(2, (limit - a0).max(2));
    while a0 + len <= limit {
        if fits(a0, Some(a0 + len)) {
            lo = a0 + len;
            len *= 2;
        } else {
            hi = a0 + len;
            break;
        }
    }
    if hi == limit + 1 && lo < limit {
        if fits(a0, Some(limit)) {
            lo = limit;
        } else {
            hi = limit;
        }
    }
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if fits(a0, Some(mid)) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    lo
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Intervals of at most `span` samples fit; a constant never does.
    fn span_fits(span: usize) -> impl FnMut(usize, Option<usize>) -> bool {
        move |a, c| c.is_some_and(|c| c - a <= span)
    }

    #[test]
    fn keys_are_as_far_apart_as_the_test_allows() {
        for (m, span) in [(100, 7), (64, 1), (10, 20), (2, 1)] {
            let kept = simplify(m, &vec![false; m], span_fits(span));
            assert_eq!(kept.first(), Some(&0));
            assert_eq!(kept.last(), Some(&(m - 1)));
            assert!(kept.windows(2).all(|w| w[0] < w[1] && w[1] - w[0] <= span), "{m} {span}: {kept:?}");
            // Greedy: every step but the last is as long as allowed.
            assert!(kept.windows(2).rev().skip(1).all(|w| w[1] - w[0] == span), "{m} {span}: {kept:?}");
        }
    }

    #[test]
    fn must_samples_stay_keys_and_a_constant_keeps_one() {
        let mut must = vec![false; 50];
        for k in [3, 4, 30] {
            must[k] = true;
        }
        let kept = simplify(50, &must, span_fits(10));
        assert!([0, 3, 4, 30, 49].iter().all(|k| kept.contains(k)), "{kept:?}");
        assert!(kept.windows(2).all(|w| w[1] - w[0] <= 10), "{kept:?}");
        assert_eq!(simplify(50, &[false; 50], |_, _| true), vec![0]);
        // A must after the first sample keeps the ends even when constant.
        assert_eq!(simplify(50, &must, |_, _| true), vec![0, 3, 4, 30, 49]);
    }
}
