//! Scoring one replication of each method over its grid: the fits, on public + private training
//! data, and the test accuracy of every configuration (for [`super::oracle`]).
//!
//! LPCT's (p, λ) grid costs one noisy query per depth p: every λ reuses that query's per-leaf sums
//! (`docs/deviations.md#lpct-noise-reused-across-lambda`), and the test rows are routed once per partition.

use super::oracle::Scored;
use crate::error::{Result, method_error};
use dpfair::lpct::baselines::pglm::{PglmConfig, fit_pglm};
use dpfair::lpct::baselines::psgd::{PsgdConfig, PsgdNet, fit_psgd};
use dpfair::lpct::baselines::{PhistConfig, fit_phist};
use dpfair::lpct::{
    self, LeafSums, LpctConfig, OutOfRange, PruneConfig, RatioRule, Tree, TreeSettings,
};
use dpfair_data::Dataset;
use dpfair_data::synthetic::derive_seed;
use dpfair_learn::tree::{TreeConfig, fit_tree};
use dpfair_privacy::{Budget, Ledger, Noise};

/// Public sample, private training sample and private test sample of one replication.
pub struct Split<'a> {
    pub public: &'a Dataset,
    pub private: &'a Dataset,
    pub test: &'a Dataset,
}

/// The fraction of `labels` equal to `pred`.
pub fn accuracy(pred: impl IntoIterator<Item = u8>, labels: &[u8]) -> f64 {
    let hits = pred
        .into_iter()
        .zip(labels)
        .filter(|(p, y)| p == *y)
        .count();
    hits as f64 / labels.len().max(1) as f64
}

fn labels<'a>(d: &'a Dataset, what: &str) -> Result<&'a [u8]> {
    Ok(lpct::binary_xy(d, what).map_err(method_error)?.1)
}

/// A fresh ε ledger and a noise stream for query `tag` of the replication seeded `seed`.
fn query_tools(epsilon: f64, seed: u64, tag: u64) -> Result<(Ledger, Noise)> {
    Ok((
        Ledger::new(Budget::pure(epsilon)?),
        Noise::seeded(derive_seed(seed, tag)),
    ))
}

/// The accuracy of f̃ = 1(η̃ > 1/2) of eq. (8) at every λ, on one partition and one query:
/// what [`lpct::TreeClassifier`] predicts (label 0 outside the domain box, `docs/deviations.md#lpct-out-of-range-points`).
fn lambda_accuracies(
    tree: &Tree,
    sums: &LeafSums,
    lambdas: &[f64],
    test: &Dataset,
) -> Result<Vec<f64>> {
    let y = labels(test, "test data")?;
    let x = test.features.view();
    let leaves = tree.leaves_of(x).map_err(method_error)?;
    let inside: Vec<bool> = x
        .rows()
        .into_iter()
        .map(|r| tree.scaler().contains(&r.to_vec()))
        .collect();
    Ok(lambdas
        .iter()
        .map(|&l| {
            let eta = sums.eta(l, RatioRule::Literal);
            accuracy(
                leaves
                    .iter()
                    .zip(&inside)
                    .map(|(&j, &ok)| u8::from(ok && eta[j as usize] > 0.5)),
                y,
            )
        })
        .collect())
}

/// LPCT over `depths` × `lambdas` (λ = 0: LPCT-P / LPDT; λ = ∞: LPCT-Q), one query per depth.
/// `extra` is appended to every configuration's description.
pub fn lpct_grid(
    settings: &TreeSettings,
    depths: &[u32],
    lambdas: &[f64],
    epsilon: f64,
    data: &Split,
    seed: u64,
    extra: &[(&'static str, f64)],
) -> Result<Vec<Scored>> {
    let mut out = Vec::with_capacity(depths.len() * lambdas.len());
    for &p in depths {
        let (mut ledger, mut noise) = query_tools(epsilon, seed, 0x4C50_0000 + u64::from(p))?;
        let (tree, sums) = lpct::collect(
            settings,
            p,
            epsilon,
            data.public,
            data.private,
            &mut ledger,
            &mut noise,
        )
        .map_err(method_error)?;
        for (&l, acc) in lambdas
            .iter()
            .zip(lambda_accuracies(&tree, &sums, lambdas, data.test)?)
        {
            let mut config = vec![("p", f64::from(p)), ("lambda", l)];
            config.extend_from_slice(extra);
            out.push(Scored {
                config,
                accuracy: acc,
            });
        }
    }
    Ok(out)
}

/// LPCT with Theorem 4's depth and λ (no test-set tuning; the honest default).
pub fn lpct_theory(
    settings: &TreeSettings,
    epsilon: f64,
    data: &Split,
    seed: u64,
) -> Result<Scored> {
    let (mut ledger, mut noise) = query_tools(epsilon, seed, 0x5448)?;
    let cfg = LpctConfig {
        epsilon,
        depth: None,
        lambda: None,
        tree: settings.clone(),
        guard: None,
    };
    let m = lpct::fit(&cfg, data.public, data.private, &mut ledger, &mut noise)
        .map_err(method_error)?;
    let pred = m.predict(data.test.features.view()).map_err(method_error)?;
    Ok(Scored {
        config: vec![("p", f64::from(m.depth)), ("lambda", m.lambda)],
        accuracy: accuracy(pred, labels(data.test, "test data")?),
    })
}

/// LPCT-prune (Algorithm 2) at `cfg` (p0 from Algorithm 2 unless `cfg.p0` is set).
pub fn prune(
    cfg: &PruneConfig,
    data: &Split,
    seed: u64,
    extra: &[(&'static str, f64)],
) -> Result<Scored> {
    let (mut ledger, mut noise) = query_tools(cfg.epsilon, seed, 0x5052)?;
    let m = lpct::fit_prune(cfg, data.public, data.private, &mut ledger, &mut noise)
        .map_err(method_error)?;
    let pred = m.predict(data.test.features.view()).map_err(method_error)?;
    let mut config = vec![("p0", f64::from(m.p0)), ("rounds", f64::from(m.rounds))];
    config.extend_from_slice(extra);
    Ok(Scored {
        config,
        accuracy: accuracy(pred, labels(data.test, "test data")?),
    })
}

/// PHIST (Berrett & Butucea 2019) with `bins` per axis on the public min–max box.
pub fn phist(epsilon: f64, bins: u32, data: &Split, seed: u64) -> Result<Scored> {
    let (mut ledger, mut noise) = query_tools(epsilon, seed, 0x5048_0000 + u64::from(bins))?;
    let cfg = PhistConfig {
        epsilon,
        bins,
        out_of_range: OutOfRange::Zero,
        ..PhistConfig::default()
    };
    let c = fit_phist(
        &cfg,
        Some(data.public),
        data.private,
        &mut ledger,
        &mut noise,
    )
    .map_err(method_error)?;
    let pred = c.predict(data.test.features.view()).map_err(method_error)?;
    Ok(Scored {
        config: vec![("bins", f64::from(bins))],
        accuracy: accuracy(pred, labels(data.test, "test data")?),
    })
}

/// Non-private CART (the `learn` crate's scikit-learn-compatible tree) at `max_depth`: CT-W on
/// public ∪ private training rows (`with_private`), CT-Q on the public rows only.
pub fn cart(max_depth: usize, with_private: bool, data: &Split) -> Result<Scored> {
    let (xq, yq) = lpct::binary_xy(data.public, "public data").map_err(method_error)?;
    let (x, y): (ndarray::Array2<f64>, Vec<u32>) = if with_private {
        let (xp, yp) = lpct::binary_xy(data.private, "private data").map_err(method_error)?;
        let x = ndarray::concatenate(ndarray::Axis(0), &[xq, xp]).map_err(method_error)?;
        (x, yq.iter().chain(yp).map(|&v| u32::from(v)).collect())
    } else {
        (xq.to_owned(), yq.iter().map(|&v| u32::from(v)).collect())
    };
    let cfg = TreeConfig {
        max_depth: Some(max_depth),
        ..TreeConfig::default()
    };
    let model = fit_tree(&cfg, x.view(), &y, 2).map_err(method_error)?;
    let pred = model
        .predict(data.test.features.view())
        .map_err(method_error)?;
    Ok(Scored {
        config: vec![("max_depth", max_depth as f64)],
        accuracy: accuracy(
            pred.into_iter().map(|c| u8::from(c == 1)),
            labels(data.test, "test data")?,
        ),
    })
}

/// PGLM (Wang et al. 2023) with per-user Gaussian reports at (ε, δ = 1/n_P²) (`docs/deviations.md#lpct-pglm-noise-scale`).
pub fn pglm(epsilon: f64, data: &Split, seed: u64) -> Result<Scored> {
    let mut ledger = Ledger::unlimited();
    let mut noise = Noise::seeded(derive_seed(seed, 0x50474C4D));
    let cfg = PglmConfig {
        epsilon,
        ..PglmConfig::default()
    };
    let m =
        fit_pglm(&cfg, data.public, data.private, &mut ledger, &mut noise).map_err(method_error)?;
    let pred = m.predict(data.test.features.view()).map_err(method_error)?;
    Ok(Scored {
        config: vec![],
        accuracy: accuracy(pred, labels(data.test, "test data")?),
    })
}

/// PSGD-L / PSGD-N (Lowy et al. 2023) at step `lr`: each private user's concatenated gradient
/// privatised once by PrivUnitG (`docs/deviations.md#lpct-psgd-budget-per-tensor`), charged to a fresh ε ledger.
pub fn psgd(epsilon: f64, net: PsgdNet, lr: f64, data: &Split, seed: u64) -> Result<Scored> {
    let (mut ledger, mut noise) = query_tools(epsilon, seed, 0x5053_4744)?;
    let cfg = PsgdConfig {
        epsilon,
        lr,
        net,
        ..PsgdConfig::default()
    };
    let m =
        fit_psgd(&cfg, data.public, data.private, &mut ledger, &mut noise).map_err(method_error)?;
    let pred = m.predict(data.test.features.view()).map_err(method_error)?;
    let mut config = vec![("lr", lr)];
    if let PsgdNet::Hidden { h } = net {
        config.push(("hidden", h as f64));
    }
    Ok(Scored {
        config,
        accuracy: accuracy(pred, labels(data.test, "test data")?),
    })
}
