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
//!
//! [`Mechanism`] names the two local releases the protocol accepts: the paper's Laplace pair
//! above, and the compact Hadamard frequency oracle over the 2|I| cells (leaf, label)
//! (`docs/deviations.md#lpct-hadamard-reports`; the collector's side is [`super::collector`]).

use super::error::{Result, bad_data, check_epsilon, invalid};
use super::partition::Tree;
use super::privacy_adapter::{LocalLaplaceMechanism, local_mechanism, sum_of_laplace};
use dpfair_privacy::{Ledger, Noise};
use ndarray::ArrayView2;
use serde::{Deserialize, Serialize};

/// The L1 sensitivity of the concatenated (U, V): ‖U − U'‖₁ ≤ 2 and ‖V − V'‖₁ ≤ 2.
pub const REPORT_SENSITIVITY: f64 = 4.0;

/// The holder's local release.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mechanism {
    /// The paper's eq. (5)–(6): (Ũ, Ṽ) with Laplace(4/ε) on each of the 2|I| coordinates.
    #[default]
    Laplace,
    /// Hadamard randomized response over the 2|I| cells (leaf j, label y), cell 2j + y: one row
    /// index and one bit per report ([`dpfair_privacy::mechanisms::HadamardResponse`],
    /// `docs/deviations.md#lpct-hadamard-reports`).
    Hadamard,
}

impl Mechanism {
    /// The name used in files and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Mechanism::Laplace => "laplace",
            Mechanism::Hadamard => "hadamard",
        }
    }

    /// Parses [`Mechanism::name`].
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "laplace" => Some(Mechanism::Laplace),
            "hadamard" => Some(Mechanism::Hadamard),
            _ => None,
        }
    }

    /// Per holder, the noise variance of one leaf's private count S̃_P^j: 2·(4/ε)² = 32/ε² for
    /// Laplace; for Hadamard, the sum of two cells' estimates, 2/α² with α = tanh(ε/2) (an
    /// upper bound: the exact variance subtracts the leaf's count once, module doc of
    /// [`dpfair_privacy::mechanisms::HadamardResponse`]).
    pub fn count_variance(self, epsilon: f64) -> f64 {
        match self {
            Mechanism::Laplace => 2.0 * (REPORT_SENSITIVITY / epsilon).powi(2),
            Mechanism::Hadamard => 2.0 / hadamard_alpha(epsilon).powi(2),
        }
    }

    /// Per holder, the noise variance of a leaf's Ñ_P − S̃_P/2, the numerator of η̃ − 1/2:
    /// 32/ε² + 8/ε² = 40/ε² for Laplace (independent noise on U and V); for Hadamard
    /// (n̂_{j,1} − n̂_{j,0})/2, i.e. (1/α² + 1/α²)/4 = 1/(2α²) (uncorrelated cells).
    pub fn numerator_variance(self, epsilon: f64) -> f64 {
        match self {
            Mechanism::Laplace => 40.0 / (epsilon * epsilon),
            Mechanism::Hadamard => 0.5 / hadamard_alpha(epsilon).powi(2),
        }
    }

    /// The ε at which the paper's Laplace release has the same per-holder noise variance of a
    /// leaf count as this mechanism at `epsilon` ([`Mechanism::count_variance`]): the noise
    /// level LPCT-prune's rules are written in (`T = 8·2^{p0−k}·n_P/ε²` is a quarter of the
    /// variance of S̃_P). The identity for Laplace; 4·tanh(ε/2) for Hadamard.
    pub fn laplace_equivalent_epsilon(self, epsilon: f64) -> f64 {
        match self {
            Mechanism::Laplace => epsilon,
            Mechanism::Hadamard => REPORT_SENSITIVITY * hadamard_alpha(epsilon),
        }
    }
}

/// α = (e^ε − 1)/(e^ε + 1) of the Hadamard oracle.
fn hadamard_alpha(epsilon: f64) -> f64 {
    (epsilon / 2.0).tanh()
}

impl std::fmt::Display for Mechanism {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

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

/// The holder's Hadamard report ([`Mechanism::Hadamard`]): cell 2j + y of the 2|I| cells
/// (leaf j, label y), randomised by [`dpfair_privacy::mechanisms::HadamardResponse`] (exactly
/// ε-LDP; proof in its module doc). The report is (row, bit).
#[derive(Clone, Debug)]
pub struct HadamardRelease {
    oracle: dpfair_privacy::mechanisms::HadamardResponse,
    n_leaves: usize,
}

impl HadamardRelease {
    pub fn new(epsilon: f64, n_leaves: usize) -> Result<Self> {
        Ok(HadamardRelease {
            oracle: super::collector::oracle(epsilon, n_leaves)?,
            n_leaves,
        })
    }

    /// K, the number of Hadamard rows (a power of two ≥ 2|I|).
    pub fn rows(&self) -> usize {
        self.oracle.rows()
    }

    /// The report of a holder in `leaf` with `label` ∈ {0, 1}.
    pub fn report(&self, noise: &mut Noise, leaf: usize, label: u8) -> Result<(u32, bool)> {
        if label > 1 {
            return Err(invalid("label", format!("must be 0 or 1, got {label}")));
        }
        if leaf >= self.n_leaves {
            return Err(invalid(
                "leaf",
                format!("{leaf} is not below {}", self.n_leaves),
            ));
        }
        Ok(self
            .oracle
            .report(noise, super::collector::hadamard_cell(leaf, label))?)
    }
}

/// Every holder of (x, y) releases a Hadamard report and the collector folds them: the exact
/// protocol of [`Mechanism::Hadamard`] in one process (tests, accuracy studies).
pub fn hadamard_sums(
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
    let release = HadamardRelease::new(epsilon, tree.n_leaves())?;
    let mut sums = super::collector::HadamardSums::new(epsilon, tree.n_leaves())?;
    for (&j, &yi) in leaves.iter().zip(y) {
        let (r, b) = release.report(noise, j as usize, yi)?;
        sums.add(r, b)?;
    }
    sums.finalize(ledger, label)
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
    /// The ε each report was released at.
    #[serde(with = "dpfair_privacy::serde_f64")]
    pub epsilon: f64,
    /// The local release that made them (files written before it was recorded: Laplace).
    #[serde(default)]
    pub mechanism: Mechanism,
}

impl NoisySums {
    /// The per-holder noise variance of a leaf count ([`Mechanism::count_variance`]).
    pub fn count_variance(&self) -> f64 {
        self.mechanism.count_variance(self.epsilon)
    }

    /// The Laplace-equivalent ε of the reports' noise ([`Mechanism::laplace_equivalent_epsilon`]).
    pub fn noise_epsilon(&self) -> f64 {
        self.mechanism.laplace_equivalent_epsilon(self.epsilon)
    }
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
        mechanism: Mechanism::Laplace,
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
        mechanism: Mechanism::Laplace,
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
        mechanism: Mechanism::Laplace,
    })
}
