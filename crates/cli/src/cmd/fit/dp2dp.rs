//! `dpfair fit dp2dp` (STUB: issue #11).

use crate::error::{CliError, CliResult};

#[derive(clap::Args)]
pub struct Args {}

pub fn run(_args: Args) -> CliResult {
    Err(CliError::not_yet("dpfair fit dp2dp", 11))
}
