//! The data directory and the sha256 verification of its files.
//!
//! Resolution order: an explicit directory (the CLI's `--data-dir`), else the environment
//! variable `DPFAIR_DATA_DIR`, else the user's cache directory (`$XDG_CACHE_HOME/dpfair`, else
//! `~/.cache/dpfair`; on Windows `%LOCALAPPDATA%\dpfair`). Nothing is ever downloaded: a missing
//! file is an error naming its public origin.

use super::error::{CatalogError, Result};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

/// The environment variable naming the data directory.
pub const DATA_DIR_VAR: &str = "DPFAIR_DATA_DIR";

/// One file of the catalogue: its name in the data directory, its sha256 (from
/// the data directory's `README.md`) and where to obtain it.
#[derive(Debug, PartialEq, Eq)]
pub struct SourceFile {
    pub name: &'static str,
    pub sha256: &'static str,
    pub origin: &'static str,
}

/// Whether a file of the catalogue is usable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FileStatus {
    Missing,
    Verified,
    /// Present with another sha256 (given).
    Mismatch(String),
    Unreadable(String),
}

/// A resolved data directory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DataDir {
    path: PathBuf,
    source: &'static str,
}

/// Files already hashed in this process, keyed by path, with the length and modification time
/// they had (so a harness loading a data set per repetition hashes it once).
type Stamp = (u64, Option<SystemTime>);
static VERIFIED: Mutex<Option<HashMap<PathBuf, Stamp>>> = Mutex::new(None);

impl DataDir {
    /// A data directory given explicitly (e.g. `--data-dir`).
    pub fn new(path: impl Into<PathBuf>) -> Self {
        DataDir {
            path: path.into(),
            source: "--data-dir",
        }
    }

    /// `explicit`, else `DPFAIR_DATA_DIR`, else the user's cache directory.
    pub fn resolve(explicit: Option<&Path>) -> Result<Self> {
        if let Some(p) = explicit {
            return Ok(DataDir::new(p));
        }
        if let Some(p) = std::env::var_os(DATA_DIR_VAR).filter(|v| !v.is_empty()) {
            return Ok(DataDir {
                path: p.into(),
                source: DATA_DIR_VAR,
            });
        }
        let env = |k: &str| {
            std::env::var_os(k)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        let cache = env("XDG_CACHE_HOME")
            .or_else(|| env("HOME").map(|h| h.join(".cache")))
            .or_else(|| env("LOCALAPPDATA"))
            .ok_or(CatalogError::NoDataDir)?;
        Ok(DataDir {
            path: cache.join("dpfair"),
            source: "the user cache directory",
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// How the directory was chosen (`--data-dir`, `DPFAIR_DATA_DIR`, the user cache directory).
    pub fn source(&self) -> &'static str {
        self.source
    }

    /// The status of `file` in this directory (hashes it unless already verified).
    pub fn status(&self, file: &SourceFile) -> FileStatus {
        let path = self.path.join(file.name);
        let meta = match std::fs::metadata(&path) {
            Ok(m) if m.is_file() => m,
            _ => return FileStatus::Missing,
        };
        let stamp = (meta.len(), meta.modified().ok());
        if let Some(map) = VERIFIED.lock().expect("not poisoned").as_ref()
            && map.get(&path) == Some(&stamp)
        {
            return FileStatus::Verified;
        }
        match sha256_file(&path) {
            Ok(h) if h == file.sha256 => {
                VERIFIED
                    .lock()
                    .expect("not poisoned")
                    .get_or_insert_with(HashMap::new)
                    .insert(path, stamp);
                FileStatus::Verified
            }
            Ok(h) => FileStatus::Mismatch(h),
            Err(e) => FileStatus::Unreadable(e.to_string()),
        }
    }

    /// The path of `file`, verified, for data set `dataset`; an error saying where to obtain it
    /// when it is missing or damaged.
    pub fn verified_path(&self, dataset: &str, file: &SourceFile) -> Result<PathBuf> {
        let path = self.path.join(file.name);
        match self.status(file) {
            FileStatus::Verified => Ok(path),
            FileStatus::Missing => Err(CatalogError::MissingFile {
                dataset: dataset.to_string(),
                file: file.name,
                dir: self.path.clone(),
                source_of_dir: self.source,
                origin: file.origin,
                sha256: file.sha256,
            }),
            FileStatus::Mismatch(found) => Err(CatalogError::ChecksumMismatch {
                path,
                file: file.name,
                expected: file.sha256,
                found,
                origin: file.origin,
            }),
            FileStatus::Unreadable(reason) => Err(CatalogError::Io {
                path,
                source: std::io::Error::other(reason),
            }),
        }
    }
}

/// The lowercase hex sha256 of a file.
pub fn sha256_file(path: &Path) -> std::io::Result<String> {
    let mut f = std::fs::File::open(path)?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let k = f.read(&mut buf)?;
        if k == 0 {
            break;
        }
        hasher.update(&buf[..k]);
    }
    Ok(hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: SourceFile = SourceFile {
        name: "x.csv",
        // Not the hash of the content written below: a made-up value.
        sha256: "cc6ab6e2a3d4b6e1a73ca4a09e0e2ab3fd8eb2a6f7a3e3db56ab3dcd4e4b6ae5",
        origin: "https://example.invalid/x",
    };

    #[test]
    fn missing_and_damaged_files_say_where_to_get_them() {
        let dir = tempdir();
        let d = DataDir::new(&dir);
        let e = d.verified_path("demo", &FILE).unwrap_err().to_string();
        assert!(
            e.contains("https://example.invalid/x") && e.contains("x.csv"),
            "{e}"
        );
        std::fs::write(dir.join("x.csv"), "a,b\n1,2\n").unwrap();
        let real = sha256_file(&dir.join("x.csv")).unwrap();
        assert_eq!(real.len(), 64);
        let e = d.verified_path("demo", &FILE).unwrap_err().to_string();
        assert!(e.contains("sha256") && e.contains(&real), "{e}");
        let good = SourceFile {
            sha256: Box::leak(real.into_boxed_str()),
            ..FILE
        };
        assert_eq!(d.status(&good), FileStatus::Verified);
        // Cached, and re-checked when the file changes.
        assert_eq!(d.status(&good), FileStatus::Verified);
        std::fs::write(dir.join("x.csv"), "a,b\n1,3,\n").unwrap();
        assert!(matches!(d.status(&good), FileStatus::Mismatch(_)));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn sha256_of_empty_input_is_the_standard_value() {
        let dir = tempdir();
        std::fs::write(dir.join("e"), "").unwrap();
        assert_eq!(
            sha256_file(&dir.join("e")).unwrap(),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn explicit_directory_wins() {
        let d = DataDir::resolve(Some(Path::new("/some/where"))).unwrap();
        assert_eq!(d.path(), Path::new("/some/where"));
        assert_eq!(d.source(), "--data-dir");
    }

    fn tempdir() -> PathBuf {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static N: AtomicUsize = AtomicUsize::new(0);
        let p = std::env::temp_dir().join(format!(
            "dpfair-builtin-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&p).unwrap();
        p
    }
}
