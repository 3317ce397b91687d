//! The verdict of a comparison in report.md: *within*, *miss* or *underpowered*
//! (`docs/reproductions.md`, "Reading report.md").
//!
//! A paper number `p` with tolerance `tol` (the paper's stated band, or a sampling bound derived
//! from the paper's own spread: never from ours) is compared with our mean `m` and its 95 %
//! half-width `h` ([`crate::stats::half_width`]), `d = m − p`:
//!
//! 1. `|d| − h > tol`: **miss** — even the nearest end of our interval is outside the band,
//!    however few the repetitions;
//! 2. otherwise, `h > tol` (including one repetition, `h = ∞`): **underpowered** — our interval
//!    is wider than the band it is compared with, so the repetitions cannot decide;
//! 3. otherwise `|d| ≤ tol`: **within**, else **miss**.
//!
//! A stored number (nothing repeated) is compared as exact (`h = 0`).

/// The outcome of a comparison or check.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Within tolerance (a check: the claim holds).
    Within,
    /// Outside tolerance (a check: the claim fails).
    Miss,
    /// Too few repetitions to decide.
    Underpowered,
}

impl Verdict {
    /// The label in the references table.
    pub fn reference_label(self) -> &'static str {
        match self {
            Verdict::Within => "within",
            Verdict::Miss => "**miss**",
            Verdict::Underpowered => "underpowered",
        }
    }

    /// The label in the checks table.
    pub fn check_label(self) -> &'static str {
        match self {
            Verdict::Within => "yes",
            Verdict::Miss => "**no**",
            Verdict::Underpowered => "underpowered",
        }
    }
}

/// Compare `diff = ours − paper` with `tolerance`, given our interval's half-width (see the
/// module doc for the rule).
pub fn compare(diff: f64, half_width: f64, tolerance: f64) -> Verdict {
    let h = if half_width.is_nan() {
        f64::INFINITY
    } else {
        half_width
    };
    if diff.abs() - h > tolerance {
        Verdict::Miss
    } else if h > tolerance {
        Verdict::Underpowered
    } else if diff.abs() <= tolerance {
        Verdict::Within
    } else {
        Verdict::Miss
    }
}

/// Counts of verdicts, for a report's score line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    pub within: usize,
    pub miss: usize,
    pub underpowered: usize,
}

impl Tally {
    pub fn add(&mut self, v: Verdict) {
        match v {
            Verdict::Within => self.within += 1,
            Verdict::Miss => self.miss += 1,
            Verdict::Underpowered => self.underpowered += 1,
        }
    }

    pub fn total(&self) -> usize {
        self.within + self.miss + self.underpowered
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::half_width;

    /// Two repetitions give a t interval with 1 degree of freedom (12.7·sd/√2): with sd 0.02
    /// that is ±0.18, wider than a 0.01 band, so a mean 0.005 from the paper is underpowered,
    /// not within.
    #[test]
    fn two_repetitions_with_a_wide_interval_are_underpowered() {
        let h = half_width(0.02, 2);
        assert!(h > 0.17 && h < 0.19, "{h}");
        assert_eq!(compare(0.005, h, 0.01), Verdict::Underpowered);
        // … also when the difference exceeds the band but the interval still reaches it.
        assert_eq!(compare(0.05, h, 0.01), Verdict::Underpowered);
        // One repetition: no interval at all.
        assert_eq!(
            compare(0.0, half_width(0.0, 1), 0.01),
            Verdict::Underpowered
        );
        assert_eq!(compare(0.0, f64::NAN, 0.01), Verdict::Underpowered);
    }

    #[test]
    fn a_miss_outside_the_whole_interval_is_a_miss_at_any_power() {
        // LPCT's PHIST row: 0.566 against 0.668 with a 0.01 band; an interval of ±0.05 still
        // ends 0.042 short of the band.
        assert_eq!(compare(0.566 - 0.668, 0.05, 0.01), Verdict::Miss);
    }

    #[test]
    fn a_narrow_interval_decides() {
        assert_eq!(compare(0.004, 0.003, 0.01), Verdict::Within);
        assert_eq!(compare(-0.012, 0.003, 0.01), Verdict::Miss);
        // A stored number (exact).
        assert_eq!(compare(0.0, 0.0, 0.0), Verdict::Within);
    }

    #[test]
    fn the_tally_counts_each_verdict() {
        let mut t = Tally::default();
        for v in [
            Verdict::Within,
            Verdict::Within,
            Verdict::Miss,
            Verdict::Underpowered,
        ] {
            t.add(v);
        }
        assert_eq!((t.within, t.miss, t.underpowered, t.total()), (2, 1, 1, 4));
    }
}
