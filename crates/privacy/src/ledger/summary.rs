//! The ledger as a table a person reads: its relation, its noise source, one row per release
//! (columns as wide as their widest cell), the total with its rule, and warnings.

use super::{Composition, Ledger, NOT_PRIVATE_MARK};
use crate::entropy::NoiseSource;

/// A number as a person reads it: up to 6 significant digits, no trailing zeros, `∞` for
/// infinity (`0.6000000000000001` → `0.6`, `1e-5` → `1e-5`).
pub fn readable(x: f64) -> String {
    if x.is_infinite() {
        return if x > 0.0 { "∞".into() } else { "-∞".into() };
    }
    if x == 0.0 || x.is_nan() {
        return format!("{x}");
    }
    let a = x.abs();
    if (1e-3..1e6).contains(&a) {
        let digits = (5 - a.log10().floor() as i32).max(0) as usize;
        let s = format!("{x:.digits$}");
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    } else {
        let s = format!("{x:.5e}");
        let (mantissa, exp) = s.split_once('e').unwrap_or((&s, "0"));
        let mantissa = if mantissa.contains('.') {
            mantissa.trim_end_matches('0').trim_end_matches('.')
        } else {
            mantissa
        };
        format!("{mantissa}e{exp}")
    }
}

impl Ledger {
    /// A human-readable table of the entries and the total.
    pub fn summary(&self) -> String {
        let mut s = format!(
            "budget: ε = {}, δ = {}; certified for {}\n",
            readable(self.budget.epsilon),
            readable(self.budget.delta),
            self.relation.describe()
        );
        s.push_str(match self.noise {
            NoiseSource::Os => "noise: the operating system's CSPRNG\n",
            NoiseSource::Seeded => {
                "noise: NOT PRIVATE: noise reproducible from the seed (a seeded stream: tests, \
                 simulations, --insecure-seeded-noise)\n"
            }
            NoiseSource::Unrecorded => "noise: source not recorded\n",
        });
        let header = ["#", "release", "mechanism", "sensitivity", "scale", "cost"];
        let rows: Vec<[String; 6]> = self
            .entries
            .iter()
            .enumerate()
            .map(|(i, e)| {
                let mut cost = e.cost.to_string();
                if let Composition::Parallel {
                    partition,
                    part,
                    within,
                    ..
                } = &e.composition
                {
                    let outer: String = within
                        .iter()
                        .map(|s| format!("{}: {} / ", s.partition, s.part))
                        .collect();
                    cost.push_str(&format!("  [parallel {outer}{partition}: {part}]"));
                }
                if e.relation != self.relation {
                    cost.push_str(&format!("  [{} entry]", e.relation));
                }
                [
                    (i + 1).to_string(),
                    e.label.clone(),
                    e.mechanism.clone(),
                    readable(e.sensitivity),
                    readable(e.scale),
                    cost,
                ]
            })
            .collect();
        let width = |c: usize| {
            rows.iter()
                .map(|r| r[c].chars().count())
                .chain([header[c].chars().count()])
                .max()
                .unwrap_or(0)
        };
        let w: Vec<usize> = (0..5).map(width).collect();
        let line = |cells: [&str; 6]| {
            let pad = |t: &str, n: usize| format!("{t}{}", " ".repeat(n - t.chars().count()));
            let padl = |t: &str, n: usize| format!("{}{t}", " ".repeat(n - t.chars().count()));
            format!(
                "{}  {}  {}  {}  {}  {}\n",
                pad(cells[0], w[0]),
                pad(cells[1], w[1]),
                pad(cells[2], w[2]),
                padl(cells[3], w[3]),
                padl(cells[4], w[4]),
                cells[5]
            )
        };
        s.push_str(&line(header));
        for r in &rows {
            s.push_str(&line([&r[0], &r[1], &r[2], &r[3], &r[4], &r[5]]));
        }
        match self.total() {
            Ok(t) => s.push_str(&format!(
                "total: ε = {}, δ = {} for {}  ({})\n",
                readable(t.epsilon),
                readable(t.delta),
                self.relation.describe(),
                t.rule
            )),
            Err(e) => s.push_str(&format!("total: unavailable ({e})\n")),
        }
        if self.noise == NoiseSource::Seeded {
            s.push_str(&format!(
                "warning: {NOT_PRIVATE_MARK}: every noisy value can be recomputed from the seed, \
                 so this model protects nobody\n"
            ));
        }
        let uncertified = self.uncertified_entries();
        if !uncertified.is_empty() {
            let list: Vec<String> = uncertified.iter().map(|i| format!("#{i}")).collect();
            s.push_str(&format!(
                "warning: the total is NOT a certified bound: {} accounted with the GDP \
                 central-limit approximation, which can under-state ε (use the RDP or PRV \
                 accountant for a guarantee)\n",
                list.join(", ")
            ));
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::readable;

    #[test]
    fn numbers_read_as_people_write_them() {
        assert_eq!(readable(0.6000000000000001), "0.6");
        assert_eq!(readable(1e-5), "1e-5");
        assert_eq!(readable(2.5e-7), "2.5e-7");
        assert_eq!(readable(3.0), "3");
        assert_eq!(readable(1234.5678), "1234.57");
        assert_eq!(readable(f64::INFINITY), "∞");
        assert_eq!(readable(0.0), "0");
        assert_eq!(readable(-0.25), "-0.25");
    }
}
