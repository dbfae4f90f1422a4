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

/// Mantissa bits of the EXPONENTIAL filter for translations and scales:
/// a step of 2^(e − 17) `[m]` for a vector whose largest component lies in
/// `[2^(e−1), 2^e)` (meshoptimizer's `optlog2`): 0.12 mm for an instance
/// node 8–16 m from the patch's corner, 0.24 mm at 16–32 m, 8 µm at the
/// hips. The key reduction measures the filtered values, so the bounds hold
/// as stated. Against 24 bits, `dense` and `figure7` are 1.9 % smaller;
/// three.js plays them within 68 µm of the plain file at the 95th
/// percentile of the joints (9–11 µm with 24 bits; 16 bits, 2.5 % smaller,
/// gave 0.27 mm and a planted foot 5–8 % faster on average).
#[cfg(feature = "meshopt")]
pub(crate) const EXPONENT_BITS: i32 = 18;

/// The largest step `[s]` of the key-time grid under the EXPONENTIAL filter
/// (2⁻¹⁶ s, 15 µs): a key shown that much early or late moves a foot
/// swinging at 5 m/s by 0.08 mm. The key reduction measures every sample
/// at its own written time, where a key is exactly its written value, so
/// the bounds hold as stated on the written samples.
pub(crate) const TIME_STEP_LOG2: i32 = -16;

/// Mantissa bits of the EXPONENTIAL filter for the key times of a tile of
/// period `period` `[s]`: the fewest (signed, at most 24) that give a grid
/// step of at most 2^[`TIME_STEP_LOG2`] over `[0, period]`. Fewer bits than
/// the 24 a float has leave the low bytes of consecutive times zero, which
/// the attribute codec stores in almost nothing.
pub(crate) fn time_bits(period: f32) -> i32 {
    // The filter's exponent for the largest time is ⌊log₂ π⌋ + 1 − (bits − 1)
    // (meshoptimizer's `optlog2`, one bit of sign): solve for a step of
    // 2^TIME_STEP_LOG2.
    let e = ((period.max(f32::MIN_POSITIVE).to_bits() >> 23) & 0xff) as i32 - 127 + 1;
    (e - TIME_STEP_LOG2 + 1).clamp(2, 24)
}

/// What a player decodes for the values the exporter writes under a
/// compression: rotations as normalised shorts (quantised, and with
/// meshopt through the QUATERNION filter), translations and key times (with
/// meshopt through the EXPONENTIAL filter). Every function is idempotent.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Played {
    compression: Compression,
    /// The period π `[s]` and the filter's mantissa bits, when key times go
    /// through the filter.
    period: Option<(f32, i32)>,
}

impl Played {
    /// The played values of a tile of period `period` `[s]`.
    pub fn new(compression: Compression, period: f32) -> Self {
        let mut played = Played { compression, period: None };
        if compression == Compression::Meshopt && cfg!(feature = "meshopt") {
            let candidate = Played { compression, period: Some((period, time_bits(period))) };
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

    /// The EXPONENTIAL filter's mantissa bits for key times, when they go
    /// through it.
    pub fn time_filter_bits(&self) -> Option<i32> {
        self.period.map(|(_, bits)| bits)
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
            Some((period, bits)) => filtered_time(t, period, bits),
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

/// A vector through the EXPONENTIAL filter, one exponent per vector, until
/// it no longer changes (a fixed point, so that filtering the written
/// vector again gives it back exactly: a largest component just under a
/// power of two may round up to it, and the vector then takes the next
/// exponent, whose coarser grid moves the other components once more).
#[cfg(feature = "meshopt")]
fn filtered_vector(t: [f32; 3]) -> [f32; 3] {
    let mut v = t;
    for _ in 0..8 {
        let mut e = meshopt::encode_filter_exp(&[v], EXPONENT_BITS, meshopt::EncodeExpMode::SharedVector);
        meshopt::decode_filter_exp(&mut e);
        let next = e[0].map(f32::from_bits);
        if next.map(f32::to_bits) == v.map(f32::to_bits) {
            break;
        }
        v = next;
    }
    v
}

/// A time `t ≤ period` through the EXPONENTIAL filter of `bits` mantissa
/// bits, with the exponent of `period` (the largest time of the view).
#[cfg(feature = "meshopt")]
fn filtered_time(t: f32, period: f32, bits: i32) -> f32 {
    let mut e = meshopt::encode_filter_exp(&[[t], [period]], bits, meshopt::EncodeExpMode::SharedComponent);
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
fn filtered_time(t: f32, _: f32, _: i32) -> f32 {
    t
}

#[cfg(all(test, feature = "meshopt"))]
mod tests {
    use crate::played::{EXPONENT_BITS, TIME_STEP_LOG2, filtered_time, filtered_vector, time_bits};

    #[test]
    fn filtered_vectors_come_back_from_the_filter_unchanged() {
        // Largest components just under a power of two round up to it and
        // take the next exponent (held-out r30-1: a translation the
        // compressor then refused); and a spread of ordinary vectors.
        let mut vectors = Vec::new();
        for e in -8..6 {
            let p = 2f32.powi(e);
            for ulps in (1..400u32).step_by(7) {
                let under = f32::from_bits(p.to_bits() - ulps);
                for k in 0..40 {
                    let other = p * (0.5 + k as f32 / 97.0);
                    vectors.push([under, 0.0, -other]);
                    vectors.push([other, -under, 0.1234567 * p]);
                }
            }
        }
        for i in 0..2000 {
            let x = i as f32;
            vectors.push([(x * 0.731).sin() * 17.0, (x * 0.37).cos() * 1.3, (x * 0.113).sin() * 0.02]);
        }
        for v in vectors {
            let once = filtered_vector(v);
            assert_eq!(filtered_vector(once), once, "{v:?}");
            // What the compressor does to the written vectors.
            let mut e = meshopt::encode_filter_exp(&[once], EXPONENT_BITS, meshopt::EncodeExpMode::SharedVector);
            meshopt::decode_filter_exp(&mut e);
            assert_eq!(e[0], once.map(f32::to_bits), "{v:?} -> {once:?}");
            let largest = v.iter().fold(0f32, |m, c| m.max(c.abs()));
            let moved = v.iter().zip(once).fold(0f32, |m, (a, b)| m.max((a - b).abs()));
            assert!(moved <= largest * 2f32.powi(2 - EXPONENT_BITS), "{v:?} -> {once:?}");
        }
    }

    #[test]
    fn key_times_keep_a_grid_of_at_most_15_microseconds() {
        for period in [0.5f32, 2.0, 7.3, 10.0, 20.0, 60.0, 200.0] {
            let bits = time_bits(period);
            // The grid step: 2^-16 s, or the finest 24 bits give (long
            // periods).
            let e = ((period.to_bits() >> 23) & 0xff) as i32 - 127 + 1;
            let step = 2f32.powi(e - bits + 1);
            assert!(step <= 2f32.powi(TIME_STEP_LOG2) || bits == 24, "{period} s: {bits} bits, step {step}");
            // Every time comes back within half a step, in order.
            let mut last = -1.0f32;
            for i in 0..=1000 {
                let t = period * i as f32 / 1000.0;
                let back = filtered_time(t, period, bits);
                assert!((back - t).abs() <= 0.5 * step * 1.0001, "{period}: {t} -> {back}");
                assert!(back > last, "{period}: {t} -> {back} after {last}");
                last = back;
            }
            // The fewest bits: one fewer would double the step past the
            // bound.
            if bits < 24 {
                assert!(2.0 * step > 2f32.powi(TIME_STEP_LOG2), "{period} s: {bits} bits");
            }
        }
    }
}
