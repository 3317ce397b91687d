//! `dpfair fit fdp-fair`: FDP-Fair (Xue & Yu, Algorithm 1) simulated over `--sites`
//! sites of one CSV, in one process, through the same steps as `dpfair federated`.
//!
//! Rows go to sites in contiguous blocks in file order (site s gets rows ⌊sN/S⌋..⌊(s+1)N/S⌋);
//! with `--seed K`, site s (0-based) draws its noise from seed K + s, so that the file protocol
//! run with `--site site{s+1} --seed K+s --bandwidth H` at each site (H as printed here: by
//! default the federation's bandwidth rule, which a single site cannot compute) gives the same
//! model when the features are scaled with public `--bounds`. Without them the features get
//! private bounds like every central fit's (computed on all rows, before the sites split:
//! something only this one-process simulation can do; `dpfair federated` needs public bounds),
//! and the sites share what they leave of ε.

pub use super::flags::fdp_fair::Args;
use crate::cmd::federated::load_group_data;
use crate::cmd::fit::pipeline::{finish, report_bounds, session_for, with_progress};
use crate::error::{CliError, CliResult};
use dpfair::estimators::FdpFairParams;
use dpfair::fdp_fair::{Accounting, Config};
use dpfair::plugin::release::PiRelease;
use dpfair::{Estimator, Params};
use dpfair_privacy::Noise;

impl Args {
    /// The library's params these flags describe.
    fn params(&self) -> FdpFairParams {
        let config = Config {
            epsilon: self.privacy.epsilon,
            delta: self.privacy.delta,
            accounting: self.privacy.accounting(),
            bandwidth: self.basis.bandwidth,
            n_frequencies: self.basis.frequencies,
            basis_seed: self.basis.basis_seed,
            pi: self.empirical_pi.then_some(PiRelease::Empirical),
            server: self.server.params(),
            search: self.search.config(),
            eta_model: self.basis.eta.eta_model.into(),
        };
        let p =
            FdpFairParams::from_config(config, self.sites).constraint(self.constraint.constraint);
        match self.constraint.ldp.sensitive_ldp {
            Some(e) => p.attribute_epsilon(e),
            None => p,
        }
    }
}

pub fn run(args: Args) -> CliResult {
    args.out.check(&[args.data.input()])?;
    let est = args
        .params()
        .check_fraction(args.check.check_fraction)
        .check()?;
    if args.empirical_pi && args.privacy.accounting() == Accounting::Strict {
        return Err(CliError::BadInput(
            "--empirical-pi is not private: only with --accounting paper".into(),
        ));
    }
    let mut scaling = args.bounds.scaling()?;
    if args.privacy.accounting() == Accounting::Paper {
        scaling = scaling.for_paper_procedure();
    }
    let mut loaded = load_group_data(&args.data)?;
    let mut noises: Vec<Noise> = (0..est.sites())
        .map(|s| args.privacy.seeds.noise_for_site(s as u64))
        .collect();
    // The private bounds' noise: a stream of its own, after the sites'.
    let bounds_noise = args.privacy.seeds.noise_for_site(est.sites() as u64);
    let mut session = session_for(&est.spend(&loaded.dataset)?)?.with_noise(bounds_noise);
    let fitted = with_progress("fdp-fair", || {
        est.fit_sites(&mut loaded, &scaling, &mut noises, &mut session)
    })?;
    report_bounds(
        &loaded,
        &scaling,
        args.privacy.epsilon,
        &fitted.ledger,
        fitted.rows,
    );
    finish(&est, loaded, fitted).save(&args.out)?;
    Ok(())
}
