//! Hostile edits of JSON files for the fuzz tests of every file dpfair reads back (model files,
//! federated transcripts, LDP partitions): one place, so each surface's fuzz test draws from the
//! same catalogue of attacks.
//!
//! [`mutate_json`] walks to a node chosen by a seeded generator and replaces, removes, truncates
//! or duplicates it with values chosen to break careless readers: huge and tiny numbers, negative
//! sizes, wrong types, long strings, deep nesting, arrays one element short or long.

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::Value;

/// Numbers a reader should refuse or survive.
const HOSTILE_NUMBERS: [f64; 16] = [
    0.0,
    -0.0,
    -1.0,
    1.0,
    0.5,
    2.0,
    1e-300,
    -1e-300,
    1e300,
    -1e300,
    1e12,
    4294967296.0,
    1.8446744073709552e19,
    9007199254740993.0,
    f64::MAX,
    f64::MIN_POSITIVE,
];

/// Apply `edits` hostile edits to `value`, chosen by `seed` (reproducible).
pub fn mutate_json(value: &mut Value, seed: u64, edits: usize) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    for _ in 0..edits.max(1) {
        let target = pick_node(value, &mut rng);
        edit(target, &mut rng);
    }
}

/// A random node: descend from the root, stopping at each level with probability 1/4.
fn pick_node<'a>(mut v: &'a mut Value, rng: &mut ChaCha8Rng) -> &'a mut Value {
    loop {
        let stop = rng.random_range(0..4) == 0;
        let len = match v {
            Value::Array(a) => a.len(),
            Value::Object(o) => o.len(),
            _ => 0,
        };
        if stop || len == 0 {
            return v;
        }
        let i = rng.random_range(0..len);
        v = match v {
            Value::Array(a) => &mut a[i],
            Value::Object(o) => o.values_mut().nth(i).expect("index below len"),
            _ => unreachable!("len > 0 only for containers"),
        };
    }
}

fn number(x: f64) -> Value {
    serde_json::Number::from_f64(x).map_or(Value::Null, Value::Number)
}

fn edit(v: &mut Value, rng: &mut ChaCha8Rng) {
    match rng.random_range(0..12) {
        0 => *v = number(HOSTILE_NUMBERS[rng.random_range(0..HOSTILE_NUMBERS.len())]),
        1 => *v = Value::Number(u64::MAX.into()),
        2 => *v = Value::Number((-(rng.random_range(1..1000i64))).into()),
        3 => *v = Value::Null,
        4 => *v = Value::String("x".repeat(rng.random_range(0..300))),
        5 => *v = Value::Bool(rng.random()),
        6 => *v = Value::Array(Vec::new()),
        7 => *v = serde_json::json!({"unexpected": [1, {"deep": [[[]]]}]}),
        // Containers: drop, duplicate or reorder an element; scale a number.
        _ => match v {
            Value::Array(a) if !a.is_empty() => match rng.random_range(0..3) {
                0 => {
                    a.pop();
                }
                1 => {
                    let last = a[a.len() - 1].clone();
                    a.push(last);
                }
                _ => a.reverse(),
            },
            Value::Object(o) if !o.is_empty() => {
                let key = o
                    .keys()
                    .nth(rng.random_range(0..o.len()))
                    .cloned()
                    .expect("index below len");
                o.remove(&key);
            }
            Value::Number(n) => {
                let x = n.as_f64().unwrap_or(0.0);
                let factor = [-1.0, 0.0, 1e-9, 1e9, 1.0 + 1e-12][rng.random_range(0..5)];
                *v = number(x * factor);
            }
            Value::String(s) => {
                let keep = rng.random_range(0..=s.len());
                let cut: String = s.chars().take(keep).collect();
                *v = Value::String(cut);
            }
            _ => *v = number(1e300),
        },
    }
}

/// Hostile edits of a file's raw bytes: truncation, a flipped byte, a byte-order mark, a stray
/// NUL, chosen by `seed`.
pub fn mutate_bytes(bytes: &mut Vec<u8>, seed: u64) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    if bytes.is_empty() {
        bytes.push(b'{');
        return;
    }
    match rng.random_range(0..5) {
        0 => bytes.truncate(rng.random_range(0..bytes.len())),
        1 => {
            let i = rng.random_range(0..bytes.len());
            bytes[i] = rng.random();
        }
        2 => bytes.splice(0..0, [0xef, 0xbb, 0xbf]).for_each(drop),
        3 => {
            let i = rng.random_range(0..bytes.len());
            bytes.insert(i, 0);
        }
        _ => {
            let i = rng.random_range(0..bytes.len());
            let j = rng.random_range(i..bytes.len());
            bytes.drain(i..j);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mutation_is_reproducible_and_changes_the_value() {
        let original = serde_json::json!({"a": [1, 2, 3], "b": {"c": "text", "d": 0.5}});
        let mut changed = 0;
        for seed in 0..50 {
            let (mut x, mut y) = (original.clone(), original.clone());
            mutate_json(&mut x, seed, 2);
            mutate_json(&mut y, seed, 2);
            assert_eq!(x, y, "seed {seed}");
            changed += usize::from(x != original);
        }
        assert!(
            changed >= 40,
            "only {changed} of 50 mutations changed the value"
        );
    }
}
