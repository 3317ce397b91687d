//! `dpfair federated site round1|round2`: what a site runs on its own data.

use crate::cmd::common::{BoundsArgs, DataArgs, Input, PrivacyArgs, check_output};
use crate::cmd::federated::args::BasisArgs;
use crate::cmd::federated::{load_site_data, read_json, write_json};
use crate::error::{CliError, CliResult};
use clap::Subcommand;
use dpfair::fdp_fair::Accounting;
use dpfair::fdp_fair::protocol::{Global, Round1};
use dpfair::fdp_fair::steps::{SiteOptions, site_round1_from, site_round2_from};
use dpfair::fdp_fair::trust::check_site_name;
use dpfair::plugin::release::PiRelease;
use std::path::PathBuf;

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
    /// Example: dpfair federated site round2 --global GLOBAL.json --round1 R1_A.json --data A.csv
    /// --target y --sensitive a --bounds x1:0:1,x2:0:1 --epsilon 1 --site A --out R2_A.json
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
    /// This site's name, unique among the sites: 1–64 characters from A–Z, a–z, 0–9, `.`, `_`,
    /// `-` [default: the data file's name without extension].
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

    /// Refuse `--out` before any work: the data, another input (`others`: the broadcast, the
    /// round-1 transcript), or an unwritable place.
    fn check_out(&self, others: &[Input<'_>]) -> CliResult {
        let mut inputs = vec![self.data.input()];
        inputs.extend_from_slice(others);
        Ok(check_output("--out", &self.out, &inputs)?)
    }

    /// The site's name and ε, checked before any data is read.
    fn check_epsilon(&self) -> CliResult {
        check_site_name(&self.name())?;
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
    /// This site's own round-1 transcript (required): round 2 is refused unless the broadcast
    /// hands back its split seed, N_s, ε, δ, schema and run id (otherwise a broadcast with
    /// another split seed would make the trees re-read rows round 1 released, spending ε twice
    /// on them).
    #[arg(long, value_name = "R1.json")]
    round1: PathBuf,
    #[command(flatten)]
    site: SiteArgs,
}

pub fn run(args: Args) -> CliResult {
    match args.round {
        Round::Round1(a) => round1(a),
        Round::Round2(a) => round2(a),
    }
}

impl SiteArgs {
    /// The site's options for the library's steps.
    fn options(&self, basis: Option<&BasisArgs>, empirical_pi: bool) -> SiteOptions {
        let mut o = SiteOptions::new(self.name(), self.privacy.epsilon);
        o.delta = self.privacy.delta;
        o.accounting = self.privacy.accounting();
        if empirical_pi {
            o.pi = PiRelease::Empirical;
        }
        if let Some(b) = basis {
            o.bandwidth = b.bandwidth;
            o.n_frequencies = b.frequencies;
            o.basis_seed = b.basis_seed;
            o.eta_model = b.eta.eta_model.into();
        }
        o
    }
}

fn round1(args: Round1Args) -> CliResult {
    let s = &args.site;
    s.check_epsilon()?;
    s.check_out(&[])?;
    let options = s.options(Some(&args.basis), args.empirical_pi);
    if args.empirical_pi && options.accounting == Accounting::Strict {
        return Err(CliError::BadInput(
            "--empirical-pi is not private: only with --accounting paper".into(),
        ));
    }
    let loaded = load_site_data(&s.data, &s.bounds)?;
    let mut noise = s.privacy.noise();
    let r1 = site_round1_from(&options, &loaded, args.run.clone(), &mut noise)?;
    write_json(&s.out, &r1)?;
    let bandwidth = r1
        .release
        .kernel()
        .map_or("none (logistic)".to_string(), |k| {
            k.basis.bandwidth().to_string()
        });
    eprintln!(
        "site {}: round 1 written to {} (N_s = {}, h = {bandwidth}, π̃ = ({:.4}, {:.4})); send it to the server",
        r1.site,
        s.out.display(),
        r1.n_rows,
        r1.release.pi[0],
        r1.release.pi[1]
    );
    Ok(())
}

fn round2(args: Round2Args) -> CliResult {
    let s = &args.site;
    s.check_epsilon()?;
    s.check_out(&[
        Input {
            option: "--global",
            path: &args.global,
        },
        Input {
            option: "--round1",
            path: &args.round1,
        },
    ])?;
    let global: Global = read_json(&args.global, "global file")?;
    let round1: Round1 = read_json(&args.round1, "round-1 transcript")?;
    let loaded = load_site_data(&s.data, &s.bounds)?;
    let mut noise = s.privacy.noise();
    let r2 = site_round2_from(
        &global,
        &s.options(None, false),
        &loaded,
        Some(&round1),
        &mut noise,
    )?;
    write_json(&s.out, &r2)?;
    eprintln!(
        "site {}: round 2 written to {} (trees of depth M = {}); send it to the server",
        r2.site,
        s.out.display(),
        global.depth
    );
    Ok(())
}
