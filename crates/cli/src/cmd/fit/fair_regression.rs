//! `dpfair fit fair-regression` (STUB: issue #9).

use crate::error::{CliError, CliResult};

#[derive(clap::Args)]
pub struct Args {}

pub fn run(_args: Args) -> CliResult {
    Err(CliError::not_yet("dpfair fit fair-regression", 9))
}
