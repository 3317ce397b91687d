//! Which report files a collector reads (`dpfair ldp fit --reports`): every file once, however
//! it is named or linked, and nothing skipped without a word (docs/data.md, "LDP report
//! files").
//!
//! * Directories are searched recursively (as `dpfair.ray.report_files` does) for `.arrow`,
//!   `.ipc` and `.csv` files; every other file found there is named in a note.
//! * A file reached twice (named twice, inside two named folders, through a symbolic link) is
//!   the same canonical path: it is read once, with a note.
//! * Two files with the same bytes (SHA-256) are a copy: counting both would count the same
//!   holders twice, so [`refuse_copies`] refuses them, naming both files. Honest holders can
//!   send identical files only when the files are tiny: two independent Hadamard files of n
//!   reports match with probability at most 2⁻ⁿ (each report is one of K ≥ 2 rows and a bit), so
//!   files of fewer than [`COPY_MIN_REPORTS`] reports are both counted, with a note.

use super::error::{Result, bad_data};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

/// The extensions of report files dpfair reads in a directory.
pub const REPORT_EXTENSIONS: [&str; 3] = ["arrow", "ipc", "csv"];

/// Identical files of at least this many reports are a copy (two honest files match with
/// probability ≤ 2⁻⁴⁰ ≈ 10⁻¹²); smaller identical files are counted, with a note.
pub const COPY_MIN_REPORTS: u64 = 40;

/// How many names a note lists before "and N more".
const NOTE_NAMES: usize = 8;

/// The report files named by a list of paths, and the notes to print about them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ReportFiles {
    /// Each file once, in the order given (directories: their files in name order).
    pub files: Vec<PathBuf>,
    /// What was skipped or read once though named twice.
    pub notes: Vec<String>,
}

/// The files `given` names: files as given (any extension), directories searched recursively
/// for report files. Errors name the path that cannot be read or a directory without reports.
pub fn report_files(given: &[PathBuf]) -> Result<ReportFiles> {
    let mut out = ReportFiles::default();
    let mut seen: HashMap<PathBuf, PathBuf> = HashMap::new();
    let mut twice: Vec<String> = Vec::new();
    let mut skipped: Vec<PathBuf> = Vec::new();
    for path in given {
        let found = if path.is_dir() {
            let mut found = Vec::new();
            walk(path, &mut HashSet::new(), &mut found, &mut skipped)?;
            if found.is_empty() {
                return Err(bad_data(
                    path.display().to_string(),
                    "no report files (.arrow, .ipc, .csv) in this directory or below",
                ));
            }
            found
        } else {
            vec![path.clone()]
        };
        for f in found {
            let canonical = std::fs::canonicalize(&f)
                .map_err(|e| bad_data(f.display().to_string(), format!("cannot read: {e}")))?;
            match seen.get(&canonical) {
                Some(first) => twice.push(if first == &f {
                    f.display().to_string()
                } else {
                    format!("{} (= {})", f.display(), first.display())
                }),
                None => {
                    seen.insert(canonical, f.clone());
                    out.files.push(f);
                }
            }
        }
    }
    if !twice.is_empty() {
        out.notes.push(format!(
            "note: read once, named more than once (the same file): {}",
            list(&twice)
        ));
    }
    if !skipped.is_empty() {
        let names: Vec<String> = skipped.iter().map(|p| p.display().to_string()).collect();
        out.notes.push(format!(
            "note: not read (not .arrow, .ipc or .csv; name a file to read it whatever its \
             extension): {}",
            list(&names)
        ));
    }
    Ok(out)
}

/// The report files under `dir` (name order, recursively), the other files into `skipped`;
/// `visited` holds canonical directories so that a link back up is not followed forever.
fn walk(
    dir: &Path,
    visited: &mut HashSet<PathBuf>,
    found: &mut Vec<PathBuf>,
    skipped: &mut Vec<PathBuf>,
) -> Result<()> {
    let cannot =
        |e: std::io::Error| bad_data(dir.display().to_string(), format!("cannot read: {e}"));
    if !visited.insert(std::fs::canonicalize(dir).map_err(cannot)?) {
        return Ok(());
    }
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(cannot)?
        .map(|e| e.map(|e| e.path()))
        .collect::<std::io::Result<_>>()
        .map_err(cannot)?;
    entries.sort();
    for p in entries {
        if p.is_dir() {
            walk(&p, visited, found, skipped)?;
        } else if p
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| REPORT_EXTENSIONS.iter().any(|x| x.eq_ignore_ascii_case(e)))
        {
            found.push(p);
        } else {
            skipped.push(p);
        }
    }
    Ok(())
}

fn list(names: &[String]) -> String {
    let shown = names[..names.len().min(NOTE_NAMES)].join(", ");
    if names.len() > NOTE_NAMES {
        format!("{shown} and {} more", names.len() - NOTE_NAMES)
    } else {
        shown
    }
}

/// `sha256:<hex>` of a file's bytes, read in blocks.
pub fn content_digest(path: &Path) -> Result<String> {
    use sha2::{Digest, Sha256};
    use std::io::Read;
    let cannot =
        |e: std::io::Error| bad_data(path.display().to_string(), format!("cannot read: {e}"));
    let mut file = std::fs::File::open(path).map_err(cannot)?;
    let mut hash = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        match file.read(&mut buf).map_err(cannot)? {
            0 => break,
            n => hash.update(&buf[..n]),
        }
    }
    Ok(format!(
        "sha256:{}",
        hash.finalize()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
    ))
}

/// Refuses two files with the same bytes and at least [`COPY_MIN_REPORTS`] reports, naming
/// both; `files` are (path, [`content_digest`], reports read). Returns a note for identical
/// smaller files (counted, as honest holders can send them by chance).
pub fn refuse_copies(files: &[(PathBuf, String, u64)]) -> Result<Option<String>> {
    let mut first: HashMap<&str, &Path> = HashMap::new();
    let mut small: Vec<String> = Vec::new();
    for (path, digest, n) in files {
        match first.get(digest.as_str()) {
            Some(other) if *n >= COPY_MIN_REPORTS => {
                return Err(bad_data(
                    path.display().to_string(),
                    format!(
                        "the same bytes as {} ({n} reports): a copy would count the same holders \
                         twice; pass each holder's file once",
                        other.display()
                    ),
                ));
            }
            Some(other) => small.push(format!("{} = {}", path.display(), other.display())),
            None => {
                first.insert(digest, path);
            }
        }
    }
    Ok((!small.is_empty()).then(|| {
        format!(
            "note: identical files of fewer than {COPY_MIN_REPORTS} reports, each counted \
             (honest holders can send these by chance): {}",
            list(&small)
        )
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_of_enough_reports_are_refused_naming_both() {
        let f = |p: &str, d: &str, n| (PathBuf::from(p), d.to_string(), n);
        let e = refuse_copies(&[f("a.arrow", "x", 50), f("b.arrow", "x", 50)])
            .unwrap_err()
            .to_string();
        assert!(e.contains("b.arrow") && e.contains("a.arrow"), "{e}");
        let note = refuse_copies(&[f("a.csv", "x", 1), f("b.csv", "x", 1), f("c.csv", "y", 99)])
            .unwrap()
            .unwrap();
        assert!(note.contains("b.csv = a.csv"), "{note}");
        assert_eq!(
            refuse_copies(&[f("a", "x", 99), f("b", "y", 99)]).unwrap(),
            None
        );
    }
}
