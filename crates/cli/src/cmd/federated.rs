//! `dpfair federated`: FDP-Fair (Xue & Yu, Algorithm 1) between sites that never share
//! raw data, as files. Two rounds; each site runs `site` steps on its own machine, one server runs
//! the `aggregate` steps:
//!
//! ```text
//! site A:  dpfair federated site round1 --data A.csv ... --out R1_A.json   ─┐
//! site B:  dpfair federated site round1 --data B.csv ... --out R1_B.json   ─┤ send to the server
//! server:  dpfair federated aggregate round1 R1_A.json R1_B.json --out GLOBAL.json   → send to every site
//! site A:  dpfair federated site round2 --global GLOBAL.json --round1 R1_A.json --data A.csv ... --out R2_A.json ─┐
//! site B:  dpfair federated site round2 --global GLOBAL.json --round1 R1_B.json --data B.csv ... --out R2_B.json ─┤
//! server:  dpfair federated aggregate round2 --global GLOBAL.json R2_A.json R2_B.json --alpha 0.1 --out MODEL.json
//! ```

pub mod aggregate;
pub mod args;
pub mod site;

use crate::cmd::common::{BoundsArgs, DataArgs};
use crate::error::{CliError, CliResult};
use clap::Subcommand;
use dpfair_data::{Loaded, TaskKind};
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::path::Path;

const AFTER_HELP: &str = "\
The protocol (FDP-Fair, Algorithm 1 of Xue & Yu), who runs what:

  1. every site:  dpfair federated site round1 --data SITE.csv --target Y --sensitive A \\
                    --bounds x1:0:1,x2:0:1 --epsilon 1 --site NAME --out R1_NAME.json
     (releases its private class probabilities and kernel estimators; spends (ε_s, δ_s) on a
     random half of its rows; the split seed is recorded in R1_NAME.json)
  2. the server:  dpfair federated aggregate round1 R1_*.json --out GLOBAL.json
     (checks the transcripts, averages the estimators, chooses the tree depth; send GLOBAL.json
     back to every site)
  3. every site:  dpfair federated site round2 --global GLOBAL.json --round1 R1_NAME.json \\
                    --data SITE.csv --target Y --sensitive A --bounds x1:0:1,x2:0:1 --epsilon 1 \\
                    --site NAME --out R2_NAME.json
     (the same data and options as in step 1, and its own round-1 transcript, against which the
     broadcast is checked; releases two noisy trees of counts of its other half; spends
     (ε_s, δ_s) on that half)
  4. the server:  dpfair federated aggregate round2 --global GLOBAL.json R2_*.json --alpha 0.1 \\
                    --out MODEL.json
     (finds the threshold τ̃; MODEL.json is read by `dpfair predict`)

Only privatised values, public sizes and seeds, each site's (ε_s, δ_s) and ledger leave a site.
Every site's guarantee is (ε_s, δ_s) for its own rows (federated DP). With --seed, round 2
must be given the same seed as round 1 (it continues the same stream).

`dpfair fit fdp-fair --sites N` runs the same steps in one process on one CSV.";

#[derive(clap::Args)]
#[command(after_help = AFTER_HELP)]
pub struct Args {
    #[command(subcommand)]
    role: Role,
}

#[derive(Subcommand)]
enum Role {
    /// Steps a site runs on its own data (round1, round2).
    Site(Box<site::Args>),
    /// Steps the server runs on the sites' transcripts (round1, round2).
    Aggregate(aggregate::Args),
}

pub fn run(args: Args) -> CliResult {
    match args.role {
        Role::Site(a) => site::run(*a),
        Role::Aggregate(a) => aggregate::run(a),
    }
}

/// Reads a protocol file.
pub(crate) fn read_json<T: DeserializeOwned>(path: &Path, what: &str) -> CliResult<T> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| CliError::BadInput(format!("cannot read {what} {}: {e}", path.display())))?;
    serde_json::from_str(&text)
        .map_err(|e| CliError::BadInput(format!("{} is not a valid {what}: {e}", path.display())))
}

/// Writes a protocol file (atomically).
pub(crate) fn write_json(path: &Path, value: &impl Serialize) -> CliResult {
    let text = serde_json::to_string_pretty(value)
        .map_err(|e| CliError::Internal(format!("cannot serialise {}: {e}", path.display())))?;
    dpfair_data::output::write_atomic(path, text.as_bytes())
        .map_err(|e| CliError::BadInput(format!("cannot write {}: {e}", path.display())))
}

/// A site's data, scaled to [0, 1] with public bounds only (private bounds would differ between
/// sites and between rounds).
pub(crate) fn load_site_data(data: &DataArgs, bounds: &BoundsArgs) -> CliResult<Loaded> {
    if bounds.coarse_bounds.is_some() {
        return Err(CliError::BadInput(
            "--coarse-bounds: FDP-Fair sites must scale with the same public --bounds".into(),
        ));
    }
    let mut loaded = load_group_data(data)?;
    if bounds.given() {
        bounds.scaling()?.apply_public(&mut loaded)?;
    } else {
        eprintln!(
            "warning: no --bounds: features are used unscaled; the bandwidth rule assumes \
             features on [0, 1], so give public --bounds"
        );
    }
    Ok(loaded)
}

/// FDP-Fair's data, unscaled: a binary target and the `--sensitive` groups it needs.
pub(crate) fn load_group_data(data: &DataArgs) -> CliResult<Loaded> {
    if data.sensitive.is_none() {
        return Err(CliError::BadInput(
            "--sensitive is required: FDP-Fair constrains the disparity between two groups".into(),
        ));
    }
    data.load(Some(TaskKind::Binary))
}
