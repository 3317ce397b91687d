//! An exclusive lock on an output folder, so that two runs never write into the same folder at
//! once (two `dpfair reproduce … --out DIR` would otherwise interleave their raw rows).
//!
//! The lock is a file `DIR/.dpfair.lock` created with `create_new` (atomic on local file systems)
//! holding the owner's process id. A lock whose process no longer exists (checked in `/proc` on
//! Linux) is stale and taken over; elsewhere, a stale lock is reported with its path so the user
//! can remove it. The lock file is removed when the [`FolderLock`] is dropped.

use std::fs::OpenOptions;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// The lock file's name inside the locked folder.
pub const LOCK_FILE: &str = ".dpfair.lock";

/// Why a folder could not be locked.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error(
        "{} is in use by another dpfair run (process {pid}, lock file {}); wait for it to finish, or remove the lock file if that process is gone",
        dir.display(),
        lock.display()
    )]
    Held {
        dir: PathBuf,
        lock: PathBuf,
        pid: String,
    },
    #[error("cannot lock {}: {source}", dir.display())]
    Io { dir: PathBuf, source: io::Error },
}

/// An exclusive lock on a folder, released on drop.
#[derive(Debug)]
pub struct FolderLock {
    lock: PathBuf,
    owner: String,
}

impl FolderLock {
    /// Lock `dir` (which must exist), taking over a stale lock.
    pub fn acquire(dir: &Path) -> Result<Self, LockError> {
        let lock = dir.join(LOCK_FILE);
        let owner = std::process::id().to_string();
        let io = |source| LockError::Io {
            dir: dir.to_path_buf(),
            source,
        };
        // Two attempts: the second after taking over a stale lock.
        for _ in 0..2 {
            match OpenOptions::new().write(true).create_new(true).open(&lock) {
                Ok(mut f) => {
                    f.write_all(format!("{owner}\n").as_bytes()).map_err(io)?;
                    f.sync_all().map_err(io)?;
                    return Ok(FolderLock { lock, owner });
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                    let holder = read_owner(&lock);
                    if !is_stale(&lock, &holder) {
                        return Err(LockError::Held {
                            dir: dir.to_path_buf(),
                            lock,
                            pid: holder.unwrap_or_else(|| "unknown".into()),
                        });
                    }
                    take_over_stale(&lock, holder.as_deref(), &owner).map_err(io)?;
                }
                Err(e) => return Err(io(e)),
            }
        }
        Err(LockError::Held {
            dir: dir.to_path_buf(),
            pid: read_owner(&lock).unwrap_or_else(|| "unknown".into()),
            lock,
        })
    }

    /// The lock file's path.
    pub fn path(&self) -> &Path {
        &self.lock
    }
}

impl Drop for FolderLock {
    fn drop(&mut self) {
        // Remove the lock only if it is still ours.
        if read_owner(&self.lock).as_deref() == Some(self.owner.as_str()) {
            let _ = std::fs::remove_file(&self.lock);
        }
    }
}

/// The process id written in a lock file (`None`: unreadable or not written yet).
fn read_owner(lock: &Path) -> Option<String> {
    let text = std::fs::read_to_string(lock).ok()?;
    let pid = text.lines().next()?.trim();
    (!pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit())).then(|| pid.to_string())
}

/// A lock file without a readable process id older than this is stale (its writer died between
/// creating and writing it); younger, it is being written right now.
const UNWRITTEN_LOCK_GRACE: std::time::Duration = std::time::Duration::from_secs(60);

/// Whether the lock at `lock`, held by `holder`, is stale: its process is gone, or it has no
/// readable id and is older than [`UNWRITTEN_LOCK_GRACE`].
fn is_stale(lock: &Path, holder: &Option<String>) -> bool {
    match holder {
        Some(pid) => !process_alive(pid),
        None => std::fs::metadata(lock)
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age > UNWRITTEN_LOCK_GRACE),
    }
}

#[cfg(target_os = "linux")]
fn process_alive(pid: &str) -> bool {
    Path::new("/proc").join(pid).exists()
}

/// Without `/proc`, a process cannot be checked: every lock counts as live.
#[cfg(not(target_os = "linux"))]
fn process_alive(_pid: &str) -> bool {
    true
}

/// Remove a stale lock without removing a fresh one another process may have created meanwhile:
/// the file is first renamed to a name of our own (atomic), then checked; if it turns out not
/// to be the stale lock, it is put back (with a hard link, which fails if yet another lock has
/// appeared, in which case that lock stands).
fn take_over_stale(lock: &Path, stale: Option<&str>, owner: &str) -> io::Result<()> {
    let aside = lock.with_file_name(format!("{LOCK_FILE}.stale.{owner}"));
    match std::fs::rename(lock, &aside) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    }
    if read_owner(&aside).as_deref() != stale {
        let _ = std::fs::hard_link(&aside, lock);
    }
    std::fs::remove_file(&aside)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn second_lock_on_a_folder_is_refused_until_the_first_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let first = FolderLock::acquire(dir.path()).unwrap();
        let err = FolderLock::acquire(dir.path()).unwrap_err();
        assert!(matches!(err, LockError::Held { .. }), "{err}");
        assert!(err.to_string().contains(&std::process::id().to_string()));
        drop(first);
        assert!(!dir.path().join(LOCK_FILE).exists());
        FolderLock::acquire(dir.path()).unwrap();
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn lock_of_a_dead_process_is_taken_over() {
        let dir = tempfile::tempdir().unwrap();
        // A process that has exited: its id is free (until reused, which a fresh child's id is
        // not within this test).
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = child.id();
        child.wait().unwrap();
        std::fs::write(dir.path().join(LOCK_FILE), format!("{dead}\n")).unwrap();
        let lock = FolderLock::acquire(dir.path()).unwrap();
        assert_eq!(
            read_owner(lock.path()),
            Some(std::process::id().to_string())
        );
    }

    #[test]
    fn lock_file_being_written_counts_as_held() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(LOCK_FILE), "").unwrap();
        assert!(FolderLock::acquire(dir.path()).is_err());
    }
}
