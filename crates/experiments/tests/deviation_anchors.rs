//! Every reason a report gives for a miss links to an anchor of `docs/deviations.md`: a link to
//! an anchor that does not exist would send the reader nowhere.

use dpfair_experiments::papers;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The `<a id="…">` anchors of docs/deviations.md.
fn anchors() -> BTreeSet<String> {
    let text = std::fs::read_to_string(root().join("docs/deviations.md")).expect("deviations.md");
    text.split("<a id=\"")
        .skip(1)
        .filter_map(|rest| rest.split_once('"').map(|(id, _)| id.to_string()))
        .collect()
}

/// Rust sources under `dir`, recursively.
fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("readable folder").flatten() {
        let p = entry.path();
        if p.is_dir() {
            sources(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// Whether a string literal looks like an anchor: a paper prefix, then lowercase words joined
/// by dashes.
fn anchor_shaped(s: &str) -> bool {
    [
        "fdp-fair-",
        "fair-regression-",
        "lpct-",
        "decoupled-",
        "dp2dp-",
    ]
    .iter()
    .any(|p| s.starts_with(p))
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

#[test]
fn every_reference_reason_links_to_an_existing_anchor() {
    let known = anchors();
    assert!(known.len() > 50, "anchors read: {}", known.len());
    let mut linked = 0;
    for paper in papers::all() {
        for reps in [3, 50] {
            for r in paper.references_at(reps) {
                let Some(reason) = &r.reason else { continue };
                if reason.deviation.is_empty() {
                    continue;
                }
                linked += 1;
                assert!(
                    known.contains(&reason.deviation),
                    "{}: {} {} links to a missing anchor `{}`",
                    paper.name(),
                    r.method,
                    r.metric,
                    reason.deviation
                );
            }
        }
    }
    assert!(linked > 0, "no reference carries a linked reason");
}

/// The checks' reasons need aggregated rows to be built, so their anchors are read from the
/// source: every anchor-shaped string literal passed to `explained_by`/`explained_on_side` or
/// bound to an `anchor` variable must exist.
#[test]
fn every_check_reason_in_the_source_links_to_an_existing_anchor() {
    let known = anchors();
    let mut files = Vec::new();
    sources(&root().join("crates/experiments/src"), &mut files);
    let mut seen = 0;
    for f in files {
        let text = std::fs::read_to_string(&f).expect("source");
        for key in ["explained_by(", "explained_on_side(", "let anchor ="] {
            for (at, _) in text.match_indices(key) {
                let window: String = text[at..].chars().take(400).collect();
                for literal in window.split('"').skip(1).step_by(2) {
                    if anchor_shaped(literal) {
                        seen += 1;
                        assert!(
                            known.contains(literal),
                            "{}: `{literal}` is not an anchor of docs/deviations.md",
                            f.display()
                        );
                    }
                }
            }
        }
    }
    assert!(seen > 5, "only {seen} anchors found in the sources");
}
