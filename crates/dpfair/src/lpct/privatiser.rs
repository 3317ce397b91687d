//! §2.3 of the paper: the local release (5)–(6) of each private holder, and the collector's
//! aggregation into per-leaf noisy sums S̃_P^j = Σ_i Ũ_i^j, Ñ_P^j = Σ_i Ṽ_i^j.
//!
//! Holder i knows its leaf j (routing through the broadcast partition) and label y, and releases
//! Ũ_i = e_j + (4/ε)ζ_i and Ṽ_i = y·e_j + (4/ε)ξ_i, with ζ, ξ iid standard Laplace. The pair
//! (U, V) changes by at most 4 in L1 norm between any two inputs, so Laplace noise of scale 4/ε
//! on the 2|I| coordinates is ε-LDP (Proposition 2), for **any** partition.
//!
//! Three paths produce the sums:
//! * [`LocalRelease::report`] (user side) + [`aggregate`] (collector): the real protocol;
//! * [`per_user_sums`]: the same, all in one process (tests and audits);
//! * [`simulate_sums`]: **simulation** only. The noise on each coordinate of a sum over n holders
//!   is a sum of n iid Laplace(4/ε), drawn exactly in O(1) (Gamma difference), so a 3.3 M-holder
//!   query costs one routing pass plus 2|I| draws.
//!
//! Each path records one ledger entry: n reports, each ε-LDP, parallel over the holders.

use super::error::{Result, bad_data, check_epsilon, invalid};
use super::partition::Tree;
use super::privacy_adapter::{LocalLaplaceMechanism, local_mechanism, sum_of_laplace};
use dpfair_privacy::{Ledger, Noise};
use ndarray::ArrayView2;
use serde::{Deserialize, Serialize};

/// The L1 sensitivity of the concatenated (U, V): ‖U − U'‖₁ ≤ 2 and ‖V − V'‖₁ ≤ 2.
pub const REPORT_SENSITIVITY: f64 = 4.0;

/// One holder's release (Ũ, Ṽ), each of length |I|.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Report {
    pub u: Vec<f64>,
    pub v: Vec<f64>,
}

/// The local release of eq. (5)–(6) at budget ε for a partition with `n_leaves` leaves.
#[derive(Clone, Debug)]
pub struct LocalRelease {
    epsilon: f64,
    n_leaves: usize,
    mechanism: LocalLaplaceMechanism,
}

impl LocalRelease {
    pub fn new(epsilon: f64, n_leaves: usize) -> Result<Self> {
        check_epsilon(epsilon)?;
        if !epsilon.is_finite() {
            return Err(invalid("epsilon", "a local release needs a finite ε"));
        }
        if n_leaves == 0 {
            return Err(invalid("partition", "has no leaves"));
        }
        Ok(LocalRelease {
            epsilon,
            n_leaves,
            mechanism: local_mechanism(REPORT_SENSITIVITY, epsilon)?,
        })
    }

    pub fn epsilon(&self) -> f64 {
        self.epsilon
    }

    /// The Laplace scale 4/ε on every coordinate.
    pub fn scale(&self) -> f64 {
        REPORT_SENSITIVITY / self.epsilon
    }

    /// The holder's release: `leaf` is the holder's cell (None: in no cell, U = 0), `label` ∈ {0,1}.
    pub fn report(&self, noise: &mut Noise, leaf: Option<usize>, label: u8) -> Result<Report> {
        if label > 1 {
            return Err(invalid("label", format!("must be 0 or 1, got {label}")));
        }
        let l = self.n_leaves;
        let mut values = vec![0.0; 2 * l];
        if let Some(j) = leaf {
            if j >= l {
                return Err(invalid("leaf", format!("{j} is not below {l}")));
            }
            values[j] = 1.0;
            values[l + j] = f64::from(label);
        }
        let mut noisy = self.mechanism.report(noise, &values);
        let v = noisy.split_off(l);
        Ok(Report { u: noisy, v })
    }
}

/// The collector's per-leaf noisy sums, with what the pruning statistics need to know.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NoisySums {
    /// S̃_P^j = Σ_i Ũ_i^j.
    pub count: Vec<f64>,
    /// Ñ_P^j = Σ_i Ṽ_i^j.
    pub positive: Vec<f64>,
    /// n_P, the number of reports.
    pub n_users: u64,
    /// The ε each report was released at (the noise scale is 4/ε).
    #[serde(with = "dpfair_privacy::serde_f64")]
    pub epsilon: f64,
}

/// Records n_P reports, each ε-LDP (one entry, parallel over holders): the collector's side of
/// a round whose reports arrive elsewhere.
pub fn charge_reports(ledger: &mut Ledger, label: &str, epsilon: f64, n_users: u64) -> Result<()> {
    local_mechanism(REPORT_SENSITIVITY, epsilon)?.charge_reports(ledger, label, n_users)
}

/// The collector's aggregation: column sums of the holders' reports (eq. (5)–(6)), after recording them
/// in the ledger.
pub fn aggregate(
    ledger: &mut Ledger,
    label: &str,
    epsilon: f64,
    n_leaves: usize,
    reports: &[Report],
) -> Result<NoisySums> {
    check_epsilon(epsilon)?;
    for (i, r) in reports.iter().enumerate() {
        if r.u.len() != n_leaves || r.v.len() != n_leaves {
            return Err(bad_data(
                "reports",
                format!(
                    "report {i} has {} + {} values, the partition has {n_leaves} leaves",
                    r.u.len(),
                    r.v.len()
                ),
            ));
        }
        if r.u.iter().chain(&r.v).any(|x| !x.is_finite()) {
            return Err(bad_data("reports", format!("report {i}: non-finite value")));
        }
    }
    charge_reports(ledger, label, epsilon, reports.len() as u64)?;
    let mut sums = NoisySums {
        count: vec![0.0; n_leaves],
        positive: vec![0.0; n_leaves],
        n_users: reports.len() as u64,
        epsilon,
    };
    for r in reports {
        for (s, x) in sums.count.iter_mut().zip(&r.u) {
            *s += x;
        }
        for (s, x) in sums.positive.iter_mut().zip(&r.v) {
            *s += x;
        }
    }
    Ok(sums)
}

/// Every holder of (x, y) releases through [`LocalRelease::report`], and the collector sums:
/// the exact protocol in one process, O(n·|I|) draws (tests, audits, small data).
pub fn per_user_sums(
    tree: &Tree,
    x: ArrayView2<f64>,
    y: &[u8],
    epsilon: f64,
    ledger: &mut Ledger,
    noise: &mut Noise,
    label: &str,
) -> Result<NoisySums> {
    let leaves = tree.leaves_of(x)?;
    super::partition::check_labels(y, x.nrows(), "private labels")?;
    let release = LocalRelease::new(epsilon, tree.n_leaves())?;
    charge_reports(ledger, label, epsilon, leaves.len() as u64)?;
    let l = tree.n_leaves();
    let mut sums = NoisySums {
        count: vec![0.0; l],
        positive: vec![0.0; l],
        n_users: leaves.len() as u64,
        epsilon,
    };
    for (&j, &yi) in leaves.iter().zip(y) {
        let r = release.report(noise, Some(j as usize), yi)?;
        for (s, v) in sums.count.iter_mut().zip(&r.u) {
            *s += v;
        }
        for (s, v) in sums.positive.iter_mut().zip(&r.v) {
            *s += v;
        }
    }
    Ok(sums)
}

/// **Simulation** of the query: the true per-leaf counts of (x, y) plus, on each of the 2|I|
/// coordinates, the exact sum of n iid Laplace(4/ε) (the Gamma-difference identity).
/// Same distribution as [`per_user_sums`], O(n + |I|) work.
pub fn simulate_sums(
    tree: &Tree,
    x: ArrayView2<f64>,
    y: &[u8],
    epsilon: f64,
    ledger: &mut Ledger,
    noise: &mut Noise,
    label: &str,
) -> Result<NoisySums> {
    check_epsilon(epsilon)?;
    if !epsilon.is_finite() {
        return Err(invalid("epsilon", "a local release needs a finite ε"));
    }
    let counts = tree.leaf_counts(x, y)?;
    let n = x.nrows() as u64;
    charge_reports(ledger, label, epsilon, n)?;
    let scale = REPORT_SENSITIVITY / epsilon;
    let mut draw = |c: u64| -> Result<f64> { Ok(c as f64 + sum_of_laplace(noise, n, scale)?) };
    Ok(NoisySums {
        count: counts
            .count
            .iter()
            .map(|&c| draw(c))
            .collect::<Result<_>>()?,
        positive: counts
            .positive
            .iter()
            .map(|&c| draw(c))
            .collect::<Result<_>>()?,
        n_users: n,
        epsilon,
    })
}
