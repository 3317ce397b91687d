//! `dpfair fit lpct-prune` (STUB: issue #10).

use crate::error::{CliError, CliResult};

#[derive(clap::Args)]
pub struct Args {}

pub fn run(_args: Args) -> CliResult {
    Err(CliError::not_yet("dpfair fit lpct-prune", 10))
}
