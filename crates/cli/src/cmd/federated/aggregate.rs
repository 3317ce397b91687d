//! `dpfair federated aggregate round1|round2`: what the server runs on the sites' transcripts.

use crate::cmd::common::{Input, check_output};
use crate::cmd::federated::args::{SearchArgs, ServerArgs};
use crate::cmd::federated::{read_json, write_json};
use crate::error::CliResult;
use clap::Subcommand;
use dpfair::fdp_fair::protocol::{Global, Round1, Round2, aggregate_round1};
use dpfair::model::FittedModel;
use std::path::{Path, PathBuf};

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    round: Round,
}

#[derive(Subcommand)]
enum Round {
    /// Round 1: check the sites' R1 files, average their estimators (weights ν_s), choose the
    /// tree depth M; write GLOBAL.json and send it to every site.
    ///
    /// Example: dpfair federated aggregate round1 R1_A.json R1_B.json --out GLOBAL.json
    Round1(Round1Args),
    /// Round 2: check the sites' R2 files against GLOBAL.json, build the private disparity curve
    /// from their trees (weights μ_s), correct it to be non-increasing and pick τ̃
    /// (Algorithm 2); write the model.
    ///
    /// Example: dpfair federated aggregate round2 --global GLOBAL.json R2_A.json R2_B.json
    /// --alpha 0.1 --out MODEL.json
    Round2(Round2Args),
}

#[derive(clap::Args)]
struct Round1Args {
    /// The sites' round-1 transcripts.
    #[arg(required = true, value_name = "R1.json")]
    transcripts: Vec<PathBuf>,
    #[command(flatten)]
    server: ServerArgs,
    /// The run id announced to the sites (they pass it as `--run`); every transcript must
    /// carry it, so transcripts of another run are refused.
    #[arg(long, value_name = "ID")]
    run: Option<String>,
    /// Public bound on each site's claimed row count N_s (a larger claim is refused)
    /// [default: 100000000].
    #[arg(long, value_name = "N")]
    max_site_rows: Option<usize>,
    /// The broadcast to write.
    #[arg(long, value_name = "GLOBAL.json")]
    out: PathBuf,
}

#[derive(clap::Args)]
struct Round2Args {
    /// The broadcast of round 1.
    #[arg(long, value_name = "GLOBAL.json")]
    global: PathBuf,
    /// The sites' round-2 transcripts (one per site).
    #[arg(required = true, value_name = "R2.json")]
    transcripts: Vec<PathBuf>,
    #[command(flatten)]
    search: SearchArgs,
    /// The model file to write (read by `dpfair predict`).
    #[arg(long, value_name = "MODEL.json")]
    out: PathBuf,
}

pub fn run(args: Args) -> CliResult {
    match args.round {
        Round::Round1(a) => round1(a),
        Round::Round2(a) => round2(a),
    }
}

/// Refuse `--out` before any work: one of the inputs, or an unwritable place.
fn check_out(out: &Path, transcripts: &[PathBuf], global: Option<&Path>) -> CliResult {
    let mut inputs: Vec<Input> = transcripts
        .iter()
        .map(|p| Input {
            option: "a transcript",
            path: p,
        })
        .collect();
    if let Some(g) = global {
        inputs.push(Input {
            option: "--global",
            path: g,
        });
    }
    Ok(check_output("--out", out, &inputs)?)
}

fn round1(args: Round1Args) -> CliResult {
    check_out(&args.out, &args.transcripts, None)?;
    let rounds: Vec<Round1> = args
        .transcripts
        .iter()
        .map(|p| read_json(p, "round-1 transcript"))
        .collect::<CliResult<_>>()?;
    let mut params = args.server.params();
    params.run = args.run.clone();
    params.max_site_rows = args.max_site_rows;
    if params.run.is_none() {
        eprintln!(
            "warning: no --run id: transcripts replayed from another run cannot be told apart"
        );
    }
    let global = aggregate_round1(&rounds, &params)?;
    write_json(&args.out, &global)?;
    eprintln!(
        "server: {} sites, M = {}, π̃ = ({:.4}, {:.4}); send {} to every site",
        global.sites.len(),
        global.depth,
        global.estimate.pi[0],
        global.estimate.pi[1],
        args.out.display()
    );
    Ok(())
}

fn round2(args: Round2Args) -> CliResult {
    check_out(&args.out, &args.transcripts, Some(&args.global))?;
    dpfair::estimators::check_fdp_search(&args.search.config())?;
    let global: Global = read_json(&args.global, "global file")?;
    let rounds: Vec<Round2> = args
        .transcripts
        .iter()
        .map(|p| read_json(p, "round-2 transcript"))
        .collect::<CliResult<_>>()?;
    let file = dpfair::model::ModelFile::from_federation(&global, &rounds, &args.search.config())?;
    if let FittedModel::CdpFair(model) = &file.model
        && let Some(info) = &model.federated
    {
        eprintln!(
            "server: {} (M = {}, ω = {:.5}, band found: {}, corrected curve non-increasing: {})",
            info.search.describe_threshold(),
            info.search.depth,
            info.search.omega,
            info.search.feasible,
            info.search.monotone
        );
        eprintln!("server: {}", info.estimate_summary());
    }
    file.save(&args.out)?;
    eprintln!("wrote {} (fdp-fair)", args.out.display());
    Ok(())
}
