//! Serde for `f64` values that may be infinite: the ε of a non-private step, a budget without
//! limit. JSON has no infinity, and serde_json writes every non-finite number as `null`, which it
//! then cannot read back as an `f64`. Here finite values are written as numbers and ±∞ as the
//! strings `"inf"` / `"-inf"`; reading accepts those, plain numbers, and `null` (files written
//! before this module, where `null` was serde_json's rendering of +∞, the only non-finite value
//! such a field held). NaN is refused on both sides.
//!
//! ```
//! #[derive(serde::Serialize, serde::Deserialize, PartialEq, Debug)]
//! struct Cost {
//!     #[serde(with = "dpfair_privacy::serde_f64")]
//!     epsilon: f64,
//! }
//! let text = serde_json::to_string(&Cost { epsilon: f64::INFINITY }).unwrap();
//! assert_eq!(text, r#"{"epsilon":"inf"}"#);
//! let back: Cost = serde_json::from_str(&text).unwrap();
//! assert_eq!(back.epsilon, f64::INFINITY);
//! let legacy: Cost = serde_json::from_str(r#"{"epsilon":null}"#).unwrap();
//! assert_eq!(legacy.epsilon, f64::INFINITY);
//! ```

use serde::de::Error as _;
use serde::ser::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

#[derive(Deserialize)]
#[serde(untagged)]
enum Repr {
    Number(f64),
    Text(String),
}

/// Write `v`: a number when finite, `"inf"` / `"-inf"` otherwise.
pub fn serialize<S: Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
    if v.is_finite() {
        s.serialize_f64(*v)
    } else if v.is_nan() {
        Err(S::Error::custom("NaN cannot be written"))
    } else if *v > 0.0 {
        s.serialize_str("inf")
    } else {
        s.serialize_str("-inf")
    }
}

/// Read a number, `"inf"` / `"-inf"`, or `null` (+∞, as older files wrote it).
pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    match Option::<Repr>::deserialize(d)? {
        None => Ok(f64::INFINITY),
        Some(Repr::Number(v)) => Ok(v),
        Some(Repr::Text(t)) => match t.as_str() {
            "inf" | "+inf" | "infinity" | "Infinity" => Ok(f64::INFINITY),
            "-inf" | "-infinity" | "-Infinity" => Ok(f64::NEG_INFINITY),
            other => Err(D::Error::custom(format!(
                "expected a number or \"inf\", got \"{other}\""
            ))),
        },
    }
}

/// The same for a `Vec<f64>` (e.g. an RDP curve, whose high orders may be infinite).
pub mod vec {
    use super::*;

    #[derive(Serialize, Deserialize)]
    struct Item(#[serde(with = "super")] f64);

    pub fn serialize<S: Serializer>(v: &[f64], s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(v.iter().map(|x| Item(*x)))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<f64>, D::Error> {
        Ok(Vec::<Item>::deserialize(d)?
            .into_iter()
            .map(|i| i.0)
            .collect())
    }
}

#[cfg(test)]
mod tests {
    #[derive(serde::Serialize, serde::Deserialize, PartialEq, Debug)]
    struct V {
        #[serde(with = "super")]
        x: f64,
        #[serde(with = "super::vec")]
        xs: Vec<f64>,
    }

    #[test]
    fn finite_and_infinite_values_round_trip() {
        for x in [
            0.0,
            -1.5,
            1e-300,
            f64::MAX,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ] {
            let v = V {
                x,
                xs: vec![x, 1.0, f64::INFINITY],
            };
            let back: V = serde_json::from_str(&serde_json::to_string(&v).unwrap()).unwrap();
            assert_eq!(back, v);
        }
    }

    #[test]
    fn nan_and_unknown_text_are_refused() {
        let v = V {
            x: f64::NAN,
            xs: vec![],
        };
        assert!(serde_json::to_string(&v).is_err());
        assert!(serde_json::from_str::<V>(r#"{"x":"lots","xs":[]}"#).is_err());
    }
}
