//! Real data files for tests: `DPFAIR_DATA_DIR` points at a folder holding them (CI sets it to
//! `../shared/datasets` when that folder exists).
//!
//! ```no_run
//! # fn t() {
//! let Some(path) = dpfair_data::testdata::path_or_skip("adult.data") else { return };
//! // ... use `path` ...
//! # }
//! ```
//!
//! A test that needs a missing file returns early after [`path_or_skip`] has printed
//! `skipped: <test file>: ...` straight to the process's stderr (not through the test harness's
//! output capture), so the skip shows in every `cargo test` log rather than passing silently.

use std::io::Write;
use std::path::PathBuf;

/// The environment variable naming the data folder.
pub const DATA_DIR_VAR: &str = "DPFAIR_DATA_DIR";

/// The data folder, when `DPFAIR_DATA_DIR` is set.
pub fn data_dir() -> Option<PathBuf> {
    std::env::var_os(DATA_DIR_VAR).map(PathBuf::from)
}

/// The path of data file `name` when it exists; otherwise prints a `skipped:` line (uncaptured)
/// and returns `None`.
pub fn path_or_skip(name: &str) -> Option<PathBuf> {
    let reason = match data_dir() {
        None => format!("{DATA_DIR_VAR} is not set"),
        Some(dir) => {
            let p = dir.join(name);
            if p.is_file() {
                return Some(p);
            }
            format!("{} does not exist", p.display())
        }
    };
    let thread = std::thread::current();
    let test = thread.name().unwrap_or("test");
    let _ = writeln!(
        std::io::stderr(),
        "skipped: {test}: needs data file `{name}` ({reason}; set {DATA_DIR_VAR} to the folder holding it)"
    );
    None
}
