//! Build script shared by the crates whose tests read real data files (`dpfair-data`,
//! `dpfair-cli`, `dpfair-experiments`; each names this file as `package.build`).
//!
//! For every file in the folder named by `DPFAIR_DATA_DIR` it sets the cfg
//! `dpfair_data = "<file name>"`, so that a test needing a file can be *ignored* by libtest when
//! the file is missing, instead of passing without checking anything:
//!
//! ```ignore
//! #[test]
//! #[cfg_attr(not(dpfair_data = "adult.data"), ignore = "needs adult.data in DPFAIR_DATA_DIR")]
//! fn loads_adult() {
//!     let path = dpfair_data::testdata::path("adult.data");
//!     // ...
//! }
//! ```
//!
//! Cargo reruns the script when the variable changes or a file is added to or removed from the
//! folder, so the cfgs follow the data folder without a clean build.

use std::path::Path;

fn main() {
    println!("cargo::rerun-if-env-changed=DPFAIR_DATA_DIR");
    println!("cargo::rustc-check-cfg=cfg(dpfair_data, values(any()))");
    let Some(dir) = std::env::var_os("DPFAIR_DATA_DIR") else {
        return;
    };
    let dir = Path::new(&dir);
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    println!("cargo::rerun-if-changed={}", dir.display());
    for entry in entries.flatten() {
        let is_file = entry
            .file_type()
            .is_ok_and(|t| t.is_file() || t.is_symlink());
        if let (true, Some(name)) = (is_file, entry.file_name().to_str()) {
            // A cfg value is a string literal: names with quotes or backslashes are left out.
            if !name.contains(['"', '\\']) {
                println!("cargo::rustc-cfg=dpfair_data=\"{name}\"");
            }
        }
    }
}
