//! `dpfair accountant` (STUB: issue #3).

use crate::error::{CliError, CliResult};

#[derive(clap::Args)]
pub struct Args {}

pub fn run(_args: Args) -> CliResult {
    Err(CliError::not_yet("dpfair accountant", 3))
}
