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

/// [`readable`] rounded **up** in its last digit: the printed number, read back, is never below
/// `x` (for ε, δ and ρ, which a reader takes as the guarantee: OpenDP #2820;
/// `docs/privacy.md#floating-point`). `readable_up(0.1234561)` is `0.123457`, and
/// `readable_up(0.1234569)` too.
pub fn readable_up(x: f64) -> String {
    let mut s = readable(x);
    if !x.is_finite() || x <= 0.0 {
        return s;
    }
    // Step the 6-digit mantissa up until the printed value is at least x (once, in practice).
    let mut y = x;
    while s.parse::<f64>().is_ok_and(|v| v < x) {
        let sci = format!("{y:.5e}");
        let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
        let digits: u64 = mantissa.replace('.', "").parse().unwrap_or(0);
        let exp: i32 = exp.parse().unwrap_or(0);
        y = format!("{}e{}", digits + 1, exp - 5)
            .parse()
            .unwrap_or(f64::INFINITY);
        s = readable(y);
    }
    s
}

impl Ledger {
    /// The guarantee line `dpfair ledger` prints under the table: NONE for a ledger that is not
    /// private (seeded noise) or whose total ε is ∞ (`--epsilon inf`, a paper's noiseless step),
    /// never "certified" then.
    pub fn guarantee(&self) -> &'static str {
        if !self.is_private() {
            "guarantee: NONE: NOT PRIVATE (the noise is reproducible from the seed of --insecure-seeded-noise)"
        } else if self.total().is_ok_and(|t| t.epsilon.is_infinite())
            || self.budget.epsilon.is_infinite()
        {
            "guarantee: NONE (not private: ε = ∞, a non-private reference)"
        } else if self.is_certified() {
            "guarantee: certified (every entry's (ε, δ) conversion is a proven upper bound)"
        } else {
            "guarantee: NOT CERTIFIED (the total relies on the GDP central-limit approximation)"
        }
    }

    /// A human-readable table of the entries and the total.
    pub fn summary(&self) -> String {
        let mut s = format!(
            "budget: ε = {}, δ = {}; {} {}\n",
            readable(self.budget.epsilon),
            readable(self.budget.delta),
            if self.budget.epsilon.is_infinite() {
                "NOT PRIVATE (ε = ∞): no guarantee for"
            } else {
                "certified for"
            },
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
                readable_up(t.epsilon),
                readable_up(t.delta),
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
    use super::{readable, readable_up};
    use crate::{Budget, Entry, Ledger};

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

    /// Printed ε and δ read back at or above the value (OpenDP #2820), and by less than one unit
    /// in the sixth significant digit: not a fixed slack.
    #[test]
    fn printed_guarantees_round_up() {
        for x in [
            0.1234561,
            0.1234569,
            5.63204999,
            8.17727531036956e-2,
            1e-5,
            0.6000000000000001,
            999_999.7,
            2.5e-7,
            1.0,
        ] {
            let s = readable_up(x);
            let v: f64 = s.parse().unwrap();
            assert!(v >= x, "{x} printed as {s}");
            let unit = 10f64.powi(x.log10().floor() as i32 - 5);
            assert!(v - x <= unit * (1.0 + 1e-9), "{x} printed as {s}");
        }
        assert_eq!(readable_up(0.1234561), "0.123457");
        assert_eq!(readable_up(1e-5), "1e-5");
        assert_eq!(readable_up(f64::INFINITY), "∞");
    }

    /// A ledger whose total ε is ∞ (`--epsilon inf`) says NONE, never "certified".
    #[test]
    fn an_infinite_epsilon_is_no_guarantee() {
        let mut l = Ledger::new(Budget::pure(f64::INFINITY).unwrap());
        l.charge(Entry::non_private(
            "the whole fit (--epsilon inf)",
            "reference",
        ))
        .unwrap();
        assert!(
            l.guarantee().starts_with("guarantee: NONE"),
            "{}",
            l.guarantee()
        );
        assert!(!l.guarantee().contains("certified"));
        assert!(!l.summary().contains("certified for"), "{}", l.summary());
        // A finite budget: certified.
        let paper = Ledger::new(Budget::pure(1.0).unwrap());
        assert!(paper.guarantee().starts_with("guarantee: certified"));
        assert!(paper.summary().contains("certified for"));
    }
}
