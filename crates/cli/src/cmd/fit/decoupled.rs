//! `dpfair fit decoupled` (STUB: issue #6).

use crate::error::{CliError, CliResult};

#[derive(clap::Args)]
pub struct Args {}

pub fn run(_args: Args) -> CliResult {
    Err(CliError::not_yet("dpfair fit decoupled", 6))
}
