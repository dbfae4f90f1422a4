//! Value parsers of the numeric flags: a value out of range is refused while
//! parsing, with clap's message naming the flag.

/// A clap parser of a finite number in `[low, high]`.
pub fn within(low: f64, high: f64) -> impl Fn(&str) -> Result<f64, String> + Clone {
    move |s: &str| {
        let v: f64 = s.trim().parse().map_err(|e| format!("{s:?} is not a number ({e})"))?;
        if v.is_finite() && v >= low && v <= high { Ok(v) } else { Err(format!("{s} is outside [{low}, {high}]")) }
    }
}

/// A clap parser of a finite number ≥ `low`.
pub fn at_least(low: f64) -> impl Fn(&str) -> Result<f64, String> + Clone {
    move |s: &str| {
        let v: f64 = s.trim().parse().map_err(|e| format!("{s:?} is not a number ({e})"))?;
        if v.is_finite() && v >= low { Ok(v) } else { Err(format!("{s} is not a finite number ≥ {low}")) }
    }
}
