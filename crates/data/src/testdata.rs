//! Real data files for tests, benches and examples: `DPFAIR_DATA_DIR` points at a folder holding
//! them.
//!
//! **Tests** are gated at build time: the build script `build_data_files.rs` (shared by the crates
//! whose tests read data) sets `cfg(dpfair_data = "<file>")` for every file in the folder, and a
//! test that needs a file is marked
//!
//! ```text
//! #[test]
//! #[cfg_attr(not(dpfair_data = "adult.data"), ignore = "needs adult.data in DPFAIR_DATA_DIR")]
//! fn loads_adult() {
//!     let path = dpfair_data::testdata::path("adult.data");
//!     // ...
//! }
//! ```
//!
//! so that libtest reports it *ignored* (with the reason) when the file is missing, never passed.
//! [`path`] panics with the same reason if such a test is run anyway (`--include-ignored`).
//!
//! **Benches and examples** are not tests: they call [`path_or_skip`], which prints a `skipped:`
//! line straight to stderr and returns `None`.

use std::io::Write;
use std::path::PathBuf;

/// The environment variable naming the data folder.
pub const DATA_DIR_VAR: &str = "DPFAIR_DATA_DIR";

/// The data folder, when `DPFAIR_DATA_DIR` is set.
pub fn data_dir() -> Option<PathBuf> {
    std::env::var_os(DATA_DIR_VAR).map(PathBuf::from)
}

/// Why data file `name` is not available, or its path.
fn locate(name: &str) -> Result<PathBuf, String> {
    match data_dir() {
        None => Err(format!("{DATA_DIR_VAR} is not set")),
        Some(dir) => {
            let p = dir.join(name);
            if p.is_file() {
                Ok(p)
            } else {
                Err(format!("{} does not exist", p.display()))
            }
        }
    }
}

/// The path of data file `name`, for a test gated on `cfg(dpfair_data = "name")`. Panics, naming
/// the file and [`DATA_DIR_VAR`], when the file is missing (the test was run although its gate
/// ignored it).
pub fn path(name: &str) -> PathBuf {
    locate(name).unwrap_or_else(|reason| {
        panic!("needs data file `{name}` ({reason}; set {DATA_DIR_VAR} to the folder holding it)")
    })
}

/// The data folder, for a test gated on the files it reads; panics when [`DATA_DIR_VAR`] is not
/// set.
pub fn dir() -> PathBuf {
    data_dir().unwrap_or_else(|| panic!("needs {DATA_DIR_VAR}: set it to the data folder"))
}

/// The path of data file `name` when it exists; otherwise prints a `skipped:` line (uncaptured)
/// and returns `None`.
pub fn path_or_skip(name: &str) -> Option<PathBuf> {
    let reason = match locate(name) {
        Ok(p) => return Some(p),
        Err(reason) => reason,
    };
    let thread = std::thread::current();
    let test = thread.name().unwrap_or("test");
    let _ = writeln!(
        std::io::stderr(),
        "skipped: {test}: needs data file `{name}` ({reason}; set {DATA_DIR_VAR} to the folder holding it)"
    );
    None
}
