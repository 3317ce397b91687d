//! Safe output: every file dpfair writes goes through here.
//!
//! * [`check_output`]: before any work starts, refuse an output path that is one of the inputs
//!   (same file, whatever the spelling or link) or whose folder cannot be written.
//! * [`write_atomic`] and [`AtomicFile`]: the bytes go to a temporary file in the destination's
//!   folder, are synced to disk, and the temporary file is renamed over the destination. A reader
//!   sees the old file or the whole new one, never a truncated one; a failed write (disk full,
//!   `ulimit -f`, a kill) leaves the previous file untouched and removes the temporary.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Why an output path is refused before any work starts.
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    #[error("{option} {}: it is the same file as the input {} (given as {input_option}); choose another output path", out.display(), input.display())]
    IsInput {
        option: String,
        out: PathBuf,
        input: PathBuf,
        input_option: String,
    },
    #[error("{option} {}: {reason}", out.display())]
    NotWritable {
        option: String,
        out: PathBuf,
        reason: String,
    },
}

/// An input file of a command, with the option that named it (for messages).
#[derive(Clone, Copy, Debug)]
pub struct Input<'a> {
    pub option: &'a str,
    pub path: &'a Path,
}

/// Check an output path before any work: it must not be one of `inputs` (compared as files:
/// canonical paths, so `./a.csv`, `a.csv` and a symbolic link to it are the same), must not be a
/// folder, and its folder must exist and accept a new file (probed by creating and removing an
/// empty temporary file there).
pub fn check_output(
    option: &str,
    out: &Path,
    inputs: &[Input<'_>],
) -> std::result::Result<(), OutputError> {
    let not_writable = |reason: String| OutputError::NotWritable {
        option: option.to_string(),
        out: out.to_path_buf(),
        reason,
    };
    if out.as_os_str().is_empty() {
        return Err(not_writable("the path is empty".into()));
    }
    if out.is_dir() {
        return Err(not_writable("it is a folder, not a file".into()));
    }
    for input in inputs {
        if same_file(out, input.path) {
            return Err(OutputError::IsInput {
                option: option.to_string(),
                out: out.to_path_buf(),
                input: input.path.to_path_buf(),
                input_option: input.option.to_string(),
            });
        }
    }
    let dir = folder_of(out);
    if !dir.is_dir() {
        return Err(not_writable(format!(
            "its folder {} does not exist",
            dir.display()
        )));
    }
    if let Ok(meta) = std::fs::metadata(out)
        && meta.permissions().readonly()
    {
        return Err(not_writable("the file is read-only".into()));
    }
    let (file, tmp) =
        create_temp(out).map_err(|e| not_writable(format!("cannot create a file there: {e}")))?;
    drop(file);
    let _ = std::fs::remove_file(tmp);
    Ok(())
}

/// Whether `a` and `b` name the same existing file.
pub fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(x), Ok(y)) => x == y,
        _ => false,
    }
}

/// Write `bytes` to `path` atomically (temporary file in the same folder, sync, rename).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut f = AtomicFile::create(path)?;
    f.write_all(bytes)?;
    f.commit()
}

/// A file being written: a temporary file beside `path`, renamed over it by
/// [`AtomicFile::commit`]. Dropped without `commit` (an error, a panic), it removes the
/// temporary and leaves `path` as it was. Buffered: wrap nothing around it.
pub struct AtomicFile {
    path: PathBuf,
    tmp: PathBuf,
    file: Option<io::BufWriter<File>>,
}

impl AtomicFile {
    /// Start writing `path` (nothing is visible at `path` until [`AtomicFile::commit`]).
    pub fn create(path: &Path) -> io::Result<Self> {
        let (file, tmp) = create_temp(path)?;
        Ok(AtomicFile {
            path: path.to_path_buf(),
            tmp,
            file: Some(io::BufWriter::with_capacity(1 << 16, file)),
        })
    }

    /// The destination path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Flush, sync to disk, rename over the destination, and sync the folder (on Unix) so the
    /// rename itself survives a crash.
    pub fn commit(mut self) -> io::Result<()> {
        let writer = self.file.take().expect("AtomicFile used after commit");
        let file = writer.into_inner().map_err(|e| e.into_error())?;
        file.sync_all()?;
        drop(file);
        std::fs::rename(&self.tmp, &self.path)?;
        sync_folder(folder_of(&self.path));
        Ok(())
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.file
            .as_mut()
            .expect("AtomicFile used after commit")
            .write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file
            .as_mut()
            .expect("AtomicFile used after commit")
            .flush()
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if self.file.take().is_some() {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

/// The folder a file path lives in (`.` for a bare file name).
pub fn folder_of(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// Create a fresh hidden temporary file beside `path`: `.NAME.tmp.PID.N`.
fn create_temp(path: &Path) -> io::Result<(File, PathBuf)> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::other("the path has no file name"))?
        .to_string_lossy()
        .into_owned();
    let dir = folder_of(path);
    loop {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let tmp = dir.join(format!(".{name}.tmp.{}.{n}", std::process::id()));
        match OpenOptions::new().write(true).create_new(true).open(&tmp) {
            Ok(f) => return Ok((f, tmp)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
}

#[cfg(unix)]
fn sync_folder(dir: &Path) {
    // Best effort: some file systems refuse to sync a folder; the data itself is already synced.
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}

#[cfg(not(unix))]
fn sync_folder(_dir: &Path) {}

#[cfg(test)]
mod tests {
    use super::*;

    fn leftovers(dir: &Path) -> Vec<String> {
        std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.contains(".tmp."))
            .collect()
    }

    #[test]
    fn atomic_write_replaces_whole_file_and_leaves_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("m.json");
        write_atomic(&p, b"old").unwrap();
        write_atomic(&p, b"new contents").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"new contents");
        assert!(leftovers(dir.path()).is_empty());
    }

    #[test]
    fn dropped_without_commit_keeps_previous_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("m.json");
        write_atomic(&p, b"good model").unwrap();
        {
            let mut f = AtomicFile::create(&p).unwrap();
            f.write_all(b"half of a new mod").unwrap();
            // An error happens here: `f` is dropped without commit.
        }
        assert_eq!(std::fs::read(&p).unwrap(), b"good model");
        assert!(leftovers(dir.path()).is_empty());
    }

    #[test]
    fn output_equal_to_an_input_is_refused_under_any_spelling() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("inp.csv");
        std::fs::write(&p, "a,b\n1,2\n").unwrap();
        let other_spelling = dir.path().join(".").join("inp.csv");
        let inputs = [Input {
            option: "--data",
            path: &p,
        }];
        let err = check_output("--out", &other_spelling, &inputs).unwrap_err();
        assert!(matches!(err, OutputError::IsInput { .. }), "{err}");
        assert!(err.to_string().contains("--data"), "{err}");
        // The input is untouched and a different name is fine.
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "a,b\n1,2\n");
        check_output("--out", &dir.path().join("model.json"), &inputs).unwrap();
        assert!(leftovers(dir.path()).is_empty());
    }

    #[test]
    fn missing_folder_and_folder_as_output_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let err = check_output("--out", &dir.path().join("no/such/m.json"), &[]).unwrap_err();
        assert!(err.to_string().contains("does not exist"), "{err}");
        let err = check_output("--out", dir.path(), &[]).unwrap_err();
        assert!(err.to_string().contains("folder"), "{err}");
    }
}
