//! Competitors of Section 7.2 that share LPCT's machinery.
//!
//! * **LPDT** (Ma et al. 2023): the public partition with the private-only estimate, i.e. LPCT at
//!   λ = 0 ([`fit_lpdt`]).
//! * **PHIST** (Berrett & Butucea 2019): a regular grid of h^{−1} bins per axis, the same U/V
//!   reports, the private-only estimate ([`fit_phist`]). The noise of each cell's sum is the
//!   exact sum of n_P Laplace(4/ε) variables (`docs/deviations.md#lpct-phist-noise`), not the authors' variance-matched single
//!   Laplace draw.
//!
//! * **PGLM** (Wang et al. 2023): the (ε, δ)-LDP GLM with per-user Gaussian noise (`docs/deviations.md#lpct-pglm-noise-scale`), in
//!   [`pglm`].
//!
//! CT-W / CT-Q are the `learn` crate's CART (`dpfair_learn::tree::fit_tree`) on public ∪ private
//! or public rows, used directly by `dpfair reproduce lpct`.
//!
//! * **PSGD-L / PSGD-N** (Lowy et al. 2023): locally private SGD with PrivUnitG, the concatenated
//!   gradient privatised once per user (`docs/deviations.md#lpct-psgd-budget-per-tensor`), in [`psgd`].

pub mod pglm;
pub mod psgd;

use super::error::{Result, check_epsilon, invalid};
use super::estimator::{LeafSums, RatioRule};
use super::partition::{self, Scaler};
use super::{LpctConfig, LpctModel, OutOfRange, RangeMode, TreeClassifier, binary_xy, privatiser};
use dpfair_data::Dataset;
use dpfair_privacy::{Ledger, Noise};
use serde::{Deserialize, Serialize};

/// LPDT: LPCT with λ = 0 (the private-only estimate (7) on the public partition).
pub fn fit_lpdt(
    cfg: &LpctConfig,
    public: &Dataset,
    private: &Dataset,
    ledger: &mut Ledger,
    noise: &mut Noise,
) -> Result<LpctModel> {
    let cfg = LpctConfig {
        lambda: Some(0.0),
        ..cfg.clone()
    };
    super::fit(&cfg, public, private, ledger, noise)
}

/// PHIST's settings: ε and the number of bins per axis (the paper's grid is h^{−1} ∈ {1,…,6}).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PhistConfig {
    #[serde(with = "dpfair_privacy::serde_f64")]
    pub epsilon: f64,
    pub bins: u32,
    /// The grid's box: PHIST uses no public labels, but the real-data experiments scale every
    /// data set to \[0,1\]^d by the public min–max.
    pub range: RangeMode,
    pub out_of_range: OutOfRange,
}

impl Default for PhistConfig {
    fn default() -> Self {
        PhistConfig {
            epsilon: 1.0,
            bins: 2,
            range: RangeMode::PublicMinMax,
            out_of_range: OutOfRange::Zero,
        }
    }
}

/// PHIST: private-only histogram classifier on a regular grid (simulated setting). `public` is
/// used only for the range (Section 7's preprocessing); pass `None` with a known range.
pub fn fit_phist(
    cfg: &PhistConfig,
    public: Option<&Dataset>,
    private: &Dataset,
    ledger: &mut Ledger,
    noise: &mut Noise,
) -> Result<TreeClassifier> {
    check_epsilon(cfg.epsilon)?;
    let (xp, yp) = binary_xy(private, "private data")?;
    partition::check_finite(xp, "private data")?;
    let scaler = match (&cfg.range, public) {
        (RangeMode::PublicMinMax, Some(p)) => super::scaler(&cfg.range, p.features.view())?,
        (RangeMode::PublicMinMax, None) => {
            return Err(invalid("range", "public-min-max needs public data"));
        }
        (RangeMode::Unit, _) => Scaler::unit(xp.ncols()),
        (RangeMode::Bounds { bounds }, _) => Scaler::from_bounds(bounds)?,
    };
    let tree = partition::regular_grid(scaler, cfg.bins)?;
    let sums = privatiser::simulate_sums(
        &tree,
        xp,
        yp,
        cfg.epsilon,
        ledger,
        noise,
        "PHIST cell reports",
    )?;
    let l = tree.n_leaves();
    let eta = LeafSums {
        private: sums,
        public: partition::LeafCounts {
            count: vec![0; l],
            positive: vec![0; l],
        },
    }
    .eta(0.0, RatioRule::Literal);
    TreeClassifier::new(tree, eta, cfg.out_of_range)
}
