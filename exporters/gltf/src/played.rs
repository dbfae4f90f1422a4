//! What a player decodes of the values the exporter writes: rotations as
//! normalised 16-bit integers (glTF 2.0 §3.11), and under
//! `EXT_meshopt_compression` ([`crate::meshopt`]) the values its filters
//! give back. The key reduction ([`crate::keys`]) measures these values.

use crate::options::Compression;

/// A rotation quantised to normalised shorts and back (glTF 2.0 §3.11:
/// `c = round(f · 32767)`, `f = max(c / 32767, −1)`).
pub(crate) fn quantise(q: [f32; 4]) -> [i16; 4] {
    // `f32::round` (half away from zero), computed exactly in f64 without a
    // library call: y is exact in f64, and so is y ± 0.5; `as` truncates.
    q.map(|c| {
        let y = f64::from(c.clamp(-1.0, 1.0) * 32767.0);
        (y + 0.5f64.copysign(y)) as i16
    })
}

/// Bits per component of the QUATERNION filter.
#[cfg(feature = "meshopt")]
pub(crate) const QUATERNION_BITS: i32 = 16;

/// Mantissa bits of the EXPONENTIAL filter.
#[cfg(feature = "meshopt")]
pub(crate) const EXPONENT_BITS: i32 = 24;

/// What a player decodes for the values the exporter writes under a
/// compression: rotations as normalised shorts (quantised, and with
/// meshopt through the QUATERNION filter), translations and key times (with
/// meshopt through the EXPONENTIAL filter). Every function is idempotent.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Played {
    compression: Compression,
    /// The period π `[s]`, when key times go through the filter.
    period: Option<f32>,
}

impl Played {
    /// The played values of a tile of period `period` `[s]`.
    pub fn new(compression: Compression, period: f32) -> Self {
        let mut played = Played { compression, period: None };
        if compression == Compression::Meshopt && cfg!(feature = "meshopt") {
            let candidate = Played { compression, period: Some(period) };
            if candidate.time(period) == period {
                played = candidate;
            }
        }
        played
    }

    /// Plain quantised rotations, values and times as written.
    pub fn plain() -> Self {
        Played { compression: Compression::None, period: None }
    }

    /// Whether values are written as they are (rotations quantised).
    pub fn is_plain(&self) -> bool {
        self.compression == Compression::None
    }

    /// Whether key times go through the EXPONENTIAL filter.
    pub fn filters_times(&self) -> bool {
        self.period.is_some()
    }

    /// The normalised 16-bit rotation a player decodes for a baked one.
    pub fn rotation(&self, q: [f32; 4]) -> [i16; 4] {
        match self.compression {
            Compression::None => quantise(q),
            Compression::Meshopt => filtered_quaternion(q),
        }
    }

    /// The translation (or scale) a player decodes for a written one.
    pub fn translation(&self, t: [f32; 3]) -> [f32; 3] {
        match self.compression {
            Compression::None => t,
            Compression::Meshopt => filtered_vector(t),
        }
    }

    /// The key time `[s]` (in `[0, π]`) a player decodes for a written one.
    pub fn time(&self, t: f32) -> f32 {
        match self.period {
            Some(period) => filtered_time(t, period),
            None => t,
        }
    }
}

/// Through the QUATERNION filter until the shorts no longer change (a
/// fixed point, so that encoding the stored shorts again gives them back
/// exactly).
#[cfg(feature = "meshopt")]
fn filtered_quaternion(q: [f32; 4]) -> [i16; 4] {
    let mut s = quantise(q);
    for _ in 0..8 {
        let mut e = meshopt::encode_filter_quat(&[s.map(|c| f32::from(c) / 32767.0)], QUATERNION_BITS);
        meshopt::decode_filter_quat(&mut e);
        if e[0] == s {
            break;
        }
        s = e[0];
    }
    s
}

/// A vector through the EXPONENTIAL filter, one exponent per vector.
#[cfg(feature = "meshopt")]
fn filtered_vector(t: [f32; 3]) -> [f32; 3] {
    let mut e = meshopt::encode_filter_exp(&[t], EXPONENT_BITS, meshopt::EncodeExpMode::SharedVector);
    meshopt::decode_filter_exp(&mut e);
    e[0].map(f32::from_bits)
}

/// A time `t ≤ period` through the EXPONENTIAL filter, with the exponent of
/// `period` (the largest time of the view).
#[cfg(feature = "meshopt")]
fn filtered_time(t: f32, period: f32) -> f32 {
    let mut e = meshopt::encode_filter_exp(&[[t], [period]], EXPONENT_BITS, meshopt::EncodeExpMode::SharedComponent);
    meshopt::decode_filter_exp(&mut e);
    f32::from_bits(e[0][0])
}

#[cfg(not(feature = "meshopt"))]
fn filtered_quaternion(q: [f32; 4]) -> [i16; 4] {
    quantise(q)
}

#[cfg(not(feature = "meshopt"))]
fn filtered_vector(t: [f32; 3]) -> [f32; 3] {
    t
}

#[cfg(not(feature = "meshopt"))]
fn filtered_time(t: f32, _: f32) -> f32 {
    t
}
