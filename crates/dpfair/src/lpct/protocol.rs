//! LPCT's local protocol as files (Ma & Yang, eq. (5)–(6) and Algorithm 2's two rounds): the
//! partition file the collector broadcasts and the report file each holder sends back.
//!
//! * [`PartitionFile`] (`TREE.json`): the schema, the tree, the public leaf counts, the ε every
//!   report must use and which query ([`Protocol`]) the partition is for.
//! * Laplace reports as text (`REPORTS.csv`): one row per holder record,
//!   `epsilon,u_0..u_{L−1},v_0..v_{L−1}` ([`ReportWriter`], [`read_reports`], [`visit_reports`]).
//!   A report belongs to a partition through its number of leaves and its ε; a coordinate outside
//!   the range an honest report can take is refused. The binary format (Arrow IPC, either
//!   mechanism, carrying the partition's digest) is [`super::report_file`].
//!
//! The command line (`dpfair ldp`) only parses flags and moves these files.

use super::collector::ReportSums;
use super::error::{Result, bad_data};
use super::partition::LeafCounts;
use super::privatiser::{Mechanism, REPORT_SENSITIVITY, Report};
use super::{PruneConfig, Tree, TreeSettings};
use dpfair_data::Schema;
use dpfair_privacy::{Budget, Ledger};
use serde::{Deserialize, Serialize};
use std::io::{Read, Write};

/// The format tag of a partition file.
pub const PARTITION_FORMAT: &str = "dpfair-ldp-partition";

/// A report coordinate is `0` or `1` plus Laplace noise of scale `b = 4/ε`: one beyond
/// `1 + REPORT_TAIL_SCALES·b` has probability below `e^{-800}` (10⁻³⁴⁷) from an honest holder,
/// so it is refused as forged or corrupted rather than summed.
pub const REPORT_TAIL_SCALES: f64 = 800.0;

/// Which query a partition file is for.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "protocol", rename_all = "kebab-case")]
pub enum Protocol {
    /// LPCT: one query with the full ε.
    Lpct,
    /// LPCT-prune round 1 (π_{p0}); round 2 exists when Algorithm 2 terminates.
    PruneRound1 { config: PruneConfig, p_term: u32 },
    /// LPCT-prune round 2 (π_{p_term}): the private-only tree (7).
    PruneRound2 { config: PruneConfig, p0: u32 },
}

/// `TREE.json`: everything the holders need (schema, tree) and the collector's public counts.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PartitionFile {
    pub format: String,
    pub schema: Schema,
    pub settings: TreeSettings,
    /// The ε each holder's report uses.
    pub epsilon: f64,
    /// The local release holders use (files written before it was recorded: Laplace).
    #[serde(default)]
    pub mechanism: Mechanism,
    pub protocol: Protocol,
    pub tree: Tree,
    pub public_counts: LeafCounts,
}

impl PartitionFile {
    /// A partition file for `tree`; refuses an ε that is not finite and positive, or above the
    /// shared cap [`crate::inputs::MAX_EPSILON`] (no noise in practice; only burns time).
    pub fn new(
        schema: Schema,
        settings: TreeSettings,
        epsilon: f64,
        mechanism: Mechanism,
        protocol: Protocol,
        tree: Tree,
        public_counts: LeafCounts,
    ) -> Result<Self> {
        let cap = crate::inputs::MAX_EPSILON;
        if epsilon.is_nan() || epsilon <= 0.0 || epsilon > cap {
            return Err(super::error::invalid(
                "epsilon",
                format!("must be finite, > 0 and at most {cap:e}, got {epsilon:e}"),
            ));
        }
        Ok(PartitionFile {
            format: PARTITION_FORMAT.into(),
            schema,
            settings,
            epsilon,
            mechanism,
            protocol,
            tree,
            public_counts,
        })
    }

    /// Parses a partition file and checks its format tag and that the public counts fit the
    /// tree (the tree itself is checked when it is deserialised).
    pub fn from_json(text: &str) -> Result<Self> {
        let f: PartitionFile = serde_json::from_str(text)
            .map_err(|e| bad_data("partition file", format!("not a partition file: {e}")))?;
        if f.format != PARTITION_FORMAT {
            return Err(bad_data(
                "partition file",
                format!("format `{}`, expected `{PARTITION_FORMAT}`", f.format),
            ));
        }
        let leaves = f.tree.n_leaves();
        if f.public_counts.count.len() != leaves || f.public_counts.positive.len() != leaves {
            return Err(bad_data(
                "partition file",
                "public counts do not match the tree's leaves",
            ));
        }
        Ok(f)
    }

    /// `sha256:<hex>` of the tree's JSON (split features, thresholds and domain box): the
    /// partition's identity, which every report file carries (Arrow: its metadata; CSV: its first line), so reports made with
    /// another partition are refused.
    pub fn digest(&self) -> Result<String> {
        use sha2::{Digest, Sha256};
        let json = serde_json::to_string(&self.tree)
            .map_err(|e| bad_data("partition file", e.to_string()))?;
        let hash = Sha256::digest(json.as_bytes());
        Ok(format!(
            "sha256:{}",
            hash.iter().map(|b| format!("{b:02x}")).collect::<String>()
        ))
    }

    /// LPCT's collector step on reports summed elsewhere (merged parts: `dpfair ldp fit`'s
    /// files, a distributed engine's workers, `docs/deploy.md`): a ledger of budget ε records
    /// the n reports (each ε-LDP, [`ReportSums::finalize`]), and eq. (8) combines them with the
    /// partition's public counts at λ (`None`: [`super::theory_lambda_for`]), the leaves
    /// guarded at `guard` standard deviations as `dpfair ldp fit --guard` does (`None`: the
    /// paper's estimates; docs/deviations.md#lpct-significance-guard). Only for an `lpct`
    /// partition (LPCT-prune's rounds: `dpfair ldp fit`). Returns the ledger, the model and λ.
    pub fn fit_lpct(
        &self,
        reports: &ReportSums,
        lambda: Option<f64>,
        guard: Option<f64>,
    ) -> Result<(Ledger, super::LpctModel, f64)> {
        if self.protocol != Protocol::Lpct {
            return Err(bad_data(
                "partition file",
                "an LPCT-prune partition: collect its rounds with `dpfair ldp fit`",
            ));
        }
        if reports.mechanism() != self.mechanism {
            return Err(bad_data(
                "reports",
                format!(
                    "{} reports, the partition asks for {}",
                    reports.mechanism(),
                    self.mechanism
                ),
            ));
        }
        let mut ledger = Ledger::new(Budget::pure(self.epsilon)?);
        let private = reports.finalize(&mut ledger, "LPCT leaf reports")?;
        if private.count.len() != self.tree.n_leaves() || private.epsilon != self.epsilon {
            return Err(bad_data(
                "reports",
                format!(
                    "sums over {} leaves at ε = {}, the partition has {} leaves at ε = {}",
                    private.count.len(),
                    private.epsilon,
                    self.tree.n_leaves(),
                    self.epsilon
                ),
            ));
        }
        let lambda = lambda.unwrap_or_else(|| {
            super::theory_lambda_for(self.mechanism, self.tree.n_leaves(), self.epsilon)
        });
        let sums = super::LeafSums {
            private,
            public: self.public_counts.clone(),
        };
        let model = super::guarded_model_from_sums(
            self.tree.clone(),
            &sums,
            lambda,
            &self.settings,
            guard,
        )?;
        Ok((ledger, model, lambda))
    }

    /// The file's JSON text (one line, newline-terminated).
    pub fn to_json(&self) -> Result<String> {
        serde_json::to_string(self)
            .map(|json| json + "\n")
            .map_err(|e| bad_data("partition file", e.to_string()))
    }
}

/// The header of a report file for a partition with `n_leaves` leaves.
pub fn report_header(n_leaves: usize) -> Vec<String> {
    let mut header = vec!["epsilon".to_string()];
    header.extend((0..n_leaves).map(|j| format!("u_{j}")));
    header.extend((0..n_leaves).map(|j| format!("v_{j}")));
    header
}

/// Writes a report file, one holder record per row, header first.
pub struct ReportWriter<W: Write> {
    w: csv::Writer<W>,
    epsilon: f64,
    n_leaves: usize,
}

impl<W: Write> ReportWriter<W> {
    /// A report file for a partition with `n_leaves` leaves whose reports use `epsilon`.
    pub fn new(out: W, epsilon: f64, n_leaves: usize) -> Result<Self> {
        let mut w = csv::Writer::from_writer(out);
        w.write_record(report_header(n_leaves)).map_err(csv_error)?;
        Ok(ReportWriter {
            w,
            epsilon,
            n_leaves,
        })
    }

    /// Appends one report; refuses one of another partition's size.
    pub fn write(&mut self, r: &Report) -> Result<()> {
        if r.u.len() != self.n_leaves || r.v.len() != self.n_leaves {
            return Err(bad_data(
                "report file",
                format!(
                    "a report of {} leaves for a partition of {}",
                    r.u.len(),
                    self.n_leaves
                ),
            ));
        }
        let mut rec = Vec::with_capacity(2 * self.n_leaves + 1);
        rec.push(self.epsilon.to_string());
        rec.extend(r.u.iter().chain(&r.v).map(|v| v.to_string()));
        self.w.write_record(&rec).map_err(csv_error)
    }

    /// Flushes the rows and returns the underlying writer.
    pub fn finish(self) -> Result<W> {
        self.w
            .into_inner()
            .map_err(|e| bad_data("report file", e.into_error().to_string()))
    }
}

fn csv_error(e: csv::Error) -> super::error::LpctError {
    bad_data("report file", e.to_string())
}

/// Reads a report file for a partition with `n_leaves` leaves whose reports use `epsilon`:
/// every row `epsilon,u_0..u_{L−1},v_0..v_{L−1}` at that ε, each coordinate within the range an
/// honest report can take. Errors name the report (1-based) and the column.
pub fn read_reports<R: Read>(input: R, n_leaves: usize, epsilon: f64) -> Result<Vec<Report>> {
    let mut out = Vec::new();
    visit_reports(input, n_leaves, epsilon, |u, v| {
        out.push(Report {
            u: u.to_vec(),
            v: v.to_vec(),
        });
        Ok(())
    })?;
    Ok(out)
}

/// [`read_reports`] one report at a time (memory independent of the number of reports):
/// `visit(u, v)` is called for each; returns the number of reports.
pub fn visit_reports<R: Read>(
    input: R,
    n_leaves: usize,
    epsilon: f64,
    mut visit: impl FnMut(&[f64], &[f64]) -> Result<()>,
) -> Result<u64> {
    let bad = |m: String| bad_data("report file", m);
    let limit = 1.0 + REPORT_TAIL_SCALES * REPORT_SENSITIVITY / epsilon;
    let mut r = csv::ReaderBuilder::new().flexible(true).from_reader(input);
    let mut vals = vec![0.0; 2 * n_leaves + 1];
    let mut rec = csv::StringRecord::new();
    let mut i: u64 = 0;
    while r.read_record(&mut rec).map_err(|e| bad(e.to_string()))? {
        i += 1;
        if rec.len() != 2 * n_leaves + 1 {
            return Err(bad(format!(
                "report {i} has {} columns, the partition needs {}",
                rec.len(),
                2 * n_leaves + 1
            )));
        }
        for ((c, v), out) in rec.iter().enumerate().zip(vals.iter_mut()) {
            *out = v
                .trim()
                .parse::<f64>()
                .ok()
                .filter(|x| x.is_finite() && (c == 0 || x.abs() <= limit))
                .ok_or_else(|| {
                    bad(format!(
                        "report {i}, column {}: `{}` is not a number within ±{limit:.4e} (the range of an honest report at ε = {epsilon})",
                        c + 1,
                        dpfair_data::error::clip(v)
                    ))
                })?;
        }
        if vals[0] != epsilon {
            return Err(bad(format!(
                "report {i} was made at ε = {}, the partition asks for {epsilon}",
                vals[0]
            )));
        }
        visit(&vals[1..=n_leaves], &vals[n_leaves + 1..])?;
    }
    Ok(i)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(u: &[f64], v: &[f64]) -> Report {
        Report {
            u: u.to_vec(),
            v: v.to_vec(),
        }
    }

    #[test]
    fn reports_round_trip_through_the_file_format() {
        let reports = [
            report(&[1.5, -0.25], &[0.75, 2.0]),
            report(&[0.0, 1.0], &[0.0, 1.0]),
        ];
        let mut w = ReportWriter::new(Vec::new(), 2.0, 2).unwrap();
        for r in &reports {
            w.write(r).unwrap();
        }
        let bytes = w.finish().unwrap();
        let text = String::from_utf8(bytes.clone()).unwrap();
        assert!(text.starts_with("epsilon,u_0,u_1,v_0,v_1\n"), "{text}");
        assert_eq!(read_reports(bytes.as_slice(), 2, 2.0).unwrap(), reports);
        // A report of another partition's size is refused when written.
        let mut w = ReportWriter::new(Vec::new(), 2.0, 3).unwrap();
        assert!(w.write(&reports[0]).is_err());
    }

    #[test]
    fn foreign_or_forged_reports_are_refused_naming_report_and_column() {
        let header = "epsilon,u_0,v_0\n";
        let read = |body: &str| read_reports(format!("{header}{body}").as_bytes(), 1, 1.0);
        // Another ε than the partition's.
        let e = read("2,0.5,0.5\n").unwrap_err().to_string();
        assert!(e.contains("report 1") && e.contains("ε = 2"), "{e}");
        // Beyond 1 + 800·(4/ε): no honest holder sends it.
        let e = read("1,0.5,0.5\n1,3201.5,0\n").unwrap_err().to_string();
        assert!(e.contains("report 2, column 2"), "{e}");
        // Too few columns for the partition.
        let e = read("1,0.5\n").unwrap_err().to_string();
        assert!(e.contains("2 columns, the partition needs 3"), "{e}");
    }
}
