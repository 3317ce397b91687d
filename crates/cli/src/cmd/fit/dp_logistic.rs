//! `dpfair fit dp-logistic` (STUB: issue #5).

use crate::error::{CliError, CliResult};

#[derive(clap::Args)]
pub struct Args {}

pub fn run(_args: Args) -> CliResult {
    Err(CliError::not_yet("dpfair fit dp-logistic", 5))
}
