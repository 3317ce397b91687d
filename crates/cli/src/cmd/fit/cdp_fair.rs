//! `dpfair fit cdp-fair` (STUB: issue #7).

use crate::error::{CliError, CliResult};

#[derive(clap::Args)]
pub struct Args {}

pub fn run(_args: Args) -> CliResult {
    Err(CliError::not_yet("dpfair fit cdp-fair", 7))
}
