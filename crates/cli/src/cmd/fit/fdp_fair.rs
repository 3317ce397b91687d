//! `dpfair fit fdp-fair` (STUB: issue #8).

use crate::error::{CliError, CliResult};

#[derive(clap::Args)]
pub struct Args {}

pub fn run(_args: Args) -> CliResult {
    Err(CliError::not_yet("dpfair fit fdp-fair", 8))
}
