//! `dpfair reproduce` (STUB: issue #4).

use crate::error::{CliError, CliResult};

#[derive(clap::Args)]
pub struct Args {}

pub fn run(_args: Args) -> CliResult {
    Err(CliError::not_yet("dpfair reproduce", 4))
}
