//! `dpfair federated site round1|round2`: what a site runs on its own data.

use crate::cmd::common::{BoundsArgs, DataArgs, Input, PrivacyArgs, check_output};
use crate::cmd::federated::args::BasisArgs;
use crate::cmd::federated::{load_site_data, read_json, write_json};
use crate::error::{CliError, CliResult};
use clap::Subcommand;
use dpfair::fdp_fair::protocol::{
    Global, SiteParams, site_ledger, site_round1, site_round2, skip_round1,
};
use dpfair::fdp_fair::{Accounting, default_bandwidth, default_delta};
use dpfair::plugin::release::PiRelease;
use std::path::{Path, PathBuf};

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    round: Round,
}

#[derive(Subcommand)]
enum Round {
    /// Round 1: release π̃ and the kernel estimators of a random half of the rows (Alg. 1 S1).
    ///
    /// Example: dpfair federated site round1 --data A.csv --target y --sensitive a
    /// --bounds x1:0:1,x2:0:1 --epsilon 1 --site A --out R1_A.json
    Round1(Round1Args),
    /// Round 2: release the two noisy trees of counts of the other half (Alg. 3), given the
    /// server's GLOBAL.json. Use the same data, options and --seed as in round 1.
    ///
    /// Example: dpfair federated site round2 --global GLOBAL.json --data A.csv --target y
    /// --sensitive a --bounds x1:0:1,x2:0:1 --epsilon 1 --site A --out R2_A.json
    Round2(Round2Args),
}

/// The options both rounds share.
#[derive(clap::Args)]
struct SiteArgs {
    #[command(flatten)]
    data: DataArgs,
    #[command(flatten)]
    bounds: BoundsArgs,
    #[command(flatten)]
    privacy: PrivacyArgs,
    /// This site's name, unique among the sites [default: the data file's name without extension].
    #[arg(long, value_name = "NAME")]
    site: Option<String>,
    /// The transcript to write (send it to the server).
    #[arg(long, value_name = "FILE.json")]
    out: PathBuf,
}

impl SiteArgs {
    fn name(&self) -> String {
        self.site.clone().unwrap_or_else(|| {
            self.data
                .data
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| "site".into())
        })
    }

    /// Refuse `--out` before any work: the data, the broadcast, or an unwritable place.
    fn check_out(&self, global: Option<&Path>) -> CliResult {
        let mut inputs = vec![self.data.input()];
        if let Some(g) = global {
            inputs.push(Input {
                option: "--global",
                path: g,
            });
        }
        Ok(check_output("--out", &self.out, &inputs)?)
    }

    fn check_epsilon(&self) -> CliResult {
        let e = self.privacy.epsilon;
        if !(e.is_finite() && e > 0.0) {
            return Err(CliError::BadInput(format!(
                "--epsilon must be finite and > 0, got {e}"
            )));
        }
        Ok(())
    }
}

#[derive(clap::Args)]
struct Round1Args {
    #[command(flatten)]
    site: SiteArgs,
    #[command(flatten)]
    basis: BasisArgs,
    /// --accounting paper only: use the empirical group proportions ("known π", the paper's
    /// experiments; not private, recorded as ε = ∞).
    #[arg(long)]
    empirical_pi: bool,
    /// The run id the server announced for this federation run; it is sealed into the
    /// transcript, so a transcript of another run is refused.
    #[arg(long, value_name = "ID")]
    run: Option<String>,
}

#[derive(clap::Args)]
struct Round2Args {
    /// The server's broadcast after round 1.
    #[arg(long, value_name = "GLOBAL.json")]
    global: PathBuf,
    #[command(flatten)]
    site: SiteArgs,
}

pub fn run(args: Args) -> CliResult {
    match args.round {
        Round::Round1(a) => round1(a),
        Round::Round2(a) => round2(a),
    }
}

fn round1(args: Round1Args) -> CliResult {
    let s = &args.site;
    s.check_out(None)?;
    s.check_epsilon()?;
    let accounting: Accounting = s.privacy.accounting();
    if args.empirical_pi && accounting == Accounting::Strict {
        return Err(CliError::BadInput(
            "--empirical-pi is not private: only with --accounting paper".into(),
        ));
    }
    let loaded = load_site_data(&s.data, &s.bounds)?;
    let data = &loaded.dataset;
    let epsilon = s.privacy.epsilon;
    let params = SiteParams {
        site: s.name(),
        epsilon,
        delta: s.privacy.delta.unwrap_or(default_delta(data.n_rows())),
        accounting,
        bandwidth: args
            .basis
            .bandwidth
            .unwrap_or_else(|| default_bandwidth(data.n_rows(), data.n_features(), epsilon)),
        n_frequencies: args.basis.frequencies,
        basis_seed: args.basis.basis_seed,
        pi: if args.empirical_pi {
            PiRelease::Empirical
        } else {
            PiRelease::Private
        },
        split_seed: None,
        eta_model: dpfair::plugin::EtaModel::from(args.basis.eta.eta_model)
            .resolve(data.n_features(), accounting == Accounting::Paper),
    };
    let mut ledger = site_ledger(params.epsilon, params.delta, accounting)?;
    let mut noise = s.privacy.noise();
    let mut r1 = site_round1(
        &params,
        data,
        Some(loaded.schema.clone()),
        &mut ledger,
        &mut noise,
    )?;
    r1.bind(args.run.clone());
    write_json(&s.out, &r1)?;
    eprintln!(
        "site {}: round 1 written to {} (N_s = {}, h = {}, π̃ = ({:.4}, {:.4})); send it to the server",
        r1.site,
        s.out.display(),
        r1.n_rows,
        params.bandwidth,
        r1.release.pi[0],
        r1.release.pi[1]
    );
    Ok(())
}

fn round2(args: Round2Args) -> CliResult {
    let s = &args.site;
    s.check_out(Some(&args.global))?;
    s.check_epsilon()?;
    let global: Global = read_json(&args.global, "global file")?;
    global.validate()?;
    let name = s.name();
    let entry = global.site(&name)?.clone();
    let loaded = load_site_data(&s.data, &s.bounds)?;
    if global.schema.as_ref() != Some(&loaded.schema) {
        return Err(CliError::BadInput(format!(
            "site {name}: the columns, encodings or --bounds differ from round 1 (use the same \
             data options in both rounds)"
        )));
    }
    let delta = s
        .privacy
        .delta
        .unwrap_or(default_delta(loaded.dataset.n_rows()));
    if (s.privacy.epsilon, delta) != (entry.epsilon, entry.delta) {
        return Err(CliError::BadInput(format!(
            "site {name}: --epsilon {} --delta {delta} but round 1 used ε = {}, δ = {}",
            s.privacy.epsilon, entry.epsilon, entry.delta
        )));
    }
    if s.privacy.accounting() != global.accounting {
        return Err(CliError::BadInput(format!(
            "site {name}: --accounting differs from round 1 ({:?})",
            global.accounting
        )));
    }
    let mut ledger = site_ledger(entry.epsilon, entry.delta, global.accounting)?;
    let mut noise = s.privacy.noise();
    skip_round1(&mut noise);
    let r2 = site_round2(&global, &name, &loaded.dataset, &mut ledger, &mut noise)?;
    write_json(&s.out, &r2)?;
    eprintln!(
        "site {name}: round 2 written to {} (trees of depth M = {}); send it to the server",
        s.out.display(),
        global.depth
    );
    Ok(())
}
