//! `dpfair ldp`: LPCT's local protocol (Ma & Yang) as files exchanged between the
//! collector and the private data holders.
//!
//! 1. `ldp partition` (collector, public data only): the partition π (Algorithm 1), the feature
//!    schema, the public min–max range and the public leaf counts → `TREE.json`.
//! 2. `ldp privatize` (each holder, on their own rows, read in batches): one ε-LDP report per row
//!    → `REPORTS.arrow` (Arrow IPC, a few bytes per report) or `REPORTS.csv`. The mechanism is
//!    the partition's: Hadamard randomized response over the (leaf, label) cells (the default,
//!    one row index and one bit) or the paper's Laplace noise of scale 4/ε on (Ũ, Ṽ)
//!    (`docs/deviations.md#lpct-hadamard-reports`).
//! 3. `ldp fit` (collector): folds any number of report files into mergeable per-cell sums
//!    (memory independent of the number of reports) and fits LPCT (eq. (8)) → `MODEL.json`. For
//!    LPCT-prune (`ldp partition --prune`), round 1 either gives the model or, when Algorithm 2
//!    terminates, writes the round-2 partition (`--next`); holders privatize again with it, and
//!    `ldp fit` on round 2's reports gives the private-only tree (7).

use crate::cmd::common::{HeaderArg, Input, OutArgs, SeedArgs, check_output, csv_format};
use crate::error::{CliError, CliResult};
use dpfair::lpct::protocol::{PartitionFile, Protocol};
use dpfair::lpct::report_file::{ReportFormat, ReportSink, ReportsHeader, read_reports_into};
use dpfair::lpct::report_set;
use dpfair::lpct::{
    self, Criterion, Growth, LeafSums, LpctError, Mechanism, PruneConfig, PruneOptions, RangeMode,
    ReportSums, Splitter, TreeSettings, privatiser,
};
use dpfair::model::FittedModel;
use dpfair_data::output::{AtomicFile, write_atomic};
use dpfair_data::{
    ApplyOptions, Dataset, LoadOptions, Loaded, MissingPolicy, Schema, TaskKind, Unseen,
};
use dpfair_privacy::{Budget, Ledger};
use std::path::{Path, PathBuf};

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    step: Step,
}

#[derive(clap::Subcommand)]
enum Step {
    /// Collector: build the partition from public data (Algorithm 1) → TREE.json.
    Partition(PartitionArgs),
    /// Holder: one ε-LDP report per row of MY_ROWS.csv (the partition's mechanism) →
    /// REPORTS.arrow (binary, a few bytes per report) or REPORTS.csv (text).
    Privatize(PrivatizeArgs),
    /// Collector: fold any number of report files and fit LPCT (or a round of LPCT-prune) →
    /// MODEL.json.
    Fit(FitArgs),
}

pub fn run(args: Args) -> CliResult {
    match args.step {
        Step::Partition(a) => partition(a),
        Step::Privatize(a) => privatize(a),
        Step::Fit(a) => fit(a),
    }
}

/// LPCT errors: bad parameters and data are the user's; privacy refusals likewise.
pub fn lpct_err(e: LpctError) -> CliError {
    match e {
        LpctError::Privacy(p) => p.into(),
        other => CliError::BadInput(other.to_string()),
    }
}

/// How to read a CSV with a header or not, and which columns are features.
#[derive(clap::Args, Clone, Debug)]
pub struct ColumnArgs {
    /// The binary target column (a name, or a 0-based position for files without a header).
    #[arg(long, value_name = "COL")]
    pub target: String,
    /// Feature columns [default: every column except the target].
    #[arg(long, value_name = "A,B,...", value_delimiter = ',')]
    pub features: Option<Vec<String>>,
    /// Feature columns to one-hot encode (levels from the public file).
    #[arg(long, value_name = "C,...", value_delimiter = ',')]
    pub categorical: Vec<String>,
    /// The label of the positive class [default: the larger value].
    #[arg(long, value_name = "LABEL")]
    pub positive: Option<String>,
    /// Field delimiter: `,` `;` `tab` or one character [default: detected].
    #[arg(long, value_name = "CHAR", value_parser = crate::cmd::common::parse_delimiter)]
    pub delimiter: Option<u8>,
    /// Whether the first row is a header.
    #[arg(long, value_enum, default_value_t = HeaderArg::Auto)]
    pub header: HeaderArg,
}

impl ColumnArgs {
    /// Load the public file (CSV, Parquet or Arrow IPC), learning the schema (binary target).
    pub fn load_public(&self, path: &Path) -> CliResult<Loaded> {
        let opts = LoadOptions {
            target: Some(self.target.clone()),
            features: self.features.clone(),
            categorical: self.categorical.clone(),
            task: Some(TaskKind::Binary),
            positive: self.positive.clone(),
            missing: MissingPolicy::Drop,
            format: csv_format(self.delimiter, self.header),
            ..Default::default()
        };
        let loaded = dpfair_data::load(path, &opts)?;
        if let Some(m) = loaded.report.dropped_message() {
            eprintln!("{m}");
        }
        Ok(loaded)
    }

    /// Load a private CSV with the public file's schema (same columns and coding), every row
    /// kept ([`PRIVATE_ROWS`]), with a note that reads no row.
    pub fn load_private(&self, schema: &Schema, path: &Path) -> CliResult<Dataset> {
        eprintln!("{PRIVATE_ROWS_NOTE}");
        load_with_schema(schema, path, self.delimiter, self.header, PRIVATE_ROWS)
    }
}

/// How private rows are read with a schema learned from public rows (docs/privacy.md, "Feature
/// bounds"): every row kept, a missing value filled and a value the public rows lack coded as
/// a missing one (no level; the first class), so that no message, exit status or row count
/// depends on which values the private rows hold.
const PRIVATE_ROWS: (MissingPolicy, Unseen) = (MissingPolicy::Fill, Unseen::AsMissing);

/// Printed before every read of private rows with a public schema, whatever they hold.
const PRIVATE_ROWS_NOTE: &str = "note: private values of a categorical column or of the target \
     that the public rows lack are coded as no level (the target: its first class), as are \
     missing values";

/// Public rows (a public file): rows with a missing value are dropped, with a note.
const PUBLIC_ROWS: (MissingPolicy, Unseen) = (MissingPolicy::Drop, Unseen::Refuse);

fn load_with_schema(
    schema: &Schema,
    path: &Path,
    delimiter: Option<u8>,
    header: HeaderArg,
    (missing, unseen): (MissingPolicy, Unseen),
) -> CliResult<Dataset> {
    let loaded = schema.load(
        path,
        &ApplyOptions {
            with_target: true,
            missing,
            unseen,
            format: csv_format(delimiter, header),
        },
    )?;
    if let Some(m) = loaded.report.dropped_message() {
        eprintln!("{m}");
    }
    if loaded.dataset.target.is_none() {
        return Err(CliError::BadInput(format!(
            "{}: no target column `{}`",
            path.display(),
            schema.target.as_ref().map_or("?", |t| t.name.as_str())
        )));
    }
    Ok(loaded.dataset)
}

/// The partition options shared by `fit lpct`, `fit lpct-prune` and `ldp partition`.
#[derive(clap::Args, Clone, Debug)]
pub struct TreeArgs {
    /// Split rule: the CART criterion on the public rows (the paper's real-data variant),
    /// Algorithm 1 (max-edge) or LPCT-R (random-max-edge).
    #[arg(long, value_enum, default_value_t = SplitterArg::Cart)]
    pub splitter: SplitterArg,
    /// Split score.
    #[arg(long, value_enum, default_value_t = CriterionArg::Gini)]
    pub criterion: CriterionArg,
    /// Practical growth (the authors' code): a leaf keeps at least this many public rows
    /// [default: the complete tree of Algorithm 1].
    #[arg(long, value_name = "N")]
    pub min_samples_leaf: Option<usize>,
    /// Domain box: public min–max (Theorem 5) or the unit cube.
    #[arg(long, value_enum, default_value_t = RangeArg::PublicMinMax)]
    pub range: RangeArg,
    /// Points outside the box at prediction time: label 0 (Theorem 5) or nearest cell.
    #[arg(long, value_enum, default_value_t = OutOfRangeArg::Zero)]
    pub out_of_range: OutOfRangeArg,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug)]
pub enum SplitterArg {
    MaxEdge,
    RandomMaxEdge,
    Cart,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug)]
pub enum CriterionArg {
    Gini,
    Entropy,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug)]
pub enum RangeArg {
    PublicMinMax,
    Unit,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug)]
pub enum OutOfRangeArg {
    Zero,
    Route,
}

impl TreeArgs {
    pub fn settings(&self, seed: Option<u64>) -> TreeSettings {
        TreeSettings {
            splitter: match self.splitter {
                SplitterArg::MaxEdge => Splitter::MaxEdge,
                SplitterArg::RandomMaxEdge => Splitter::RandomMaxEdge,
                SplitterArg::Cart => Splitter::Cart,
            },
            criterion: match self.criterion {
                CriterionArg::Gini => Criterion::Gini,
                CriterionArg::Entropy => Criterion::Entropy,
            },
            growth: match self.min_samples_leaf {
                None => Growth::Complete,
                Some(n) => Growth::Practical {
                    min_samples_split: 1,
                    min_samples_leaf: n,
                },
            },
            range: match self.range {
                RangeArg::PublicMinMax => RangeMode::PublicMinMax,
                RangeArg::Unit => RangeMode::Unit,
            },
            out_of_range: match self.out_of_range {
                OutOfRangeArg::Zero => lpct::OutOfRange::Zero,
                OutOfRangeArg::Route => lpct::OutOfRange::Route,
            },
            ratio: Default::default(),
            seed: seed.unwrap_or(0),
        }
    }
}

/// Reads a partition file; errors name the file.
fn load_partition(path: &Path) -> CliResult<PartitionFile> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| CliError::BadInput(format!("cannot read {}: {e}", path.display())))?;
    PartitionFile::from_json(&text)
        .map_err(|e| CliError::BadInput(format!("{}: {e}", path.display())))
}

/// Writes a partition file atomically.
fn save_partition(f: &PartitionFile, path: &Path) -> CliResult {
    let json = f.to_json().map_err(|e| CliError::Internal(e.to_string()))?;
    write_atomic(path, json.as_bytes())
        .map_err(|e| CliError::BadInput(format!("cannot write {}: {e}", path.display())))
}

#[derive(clap::Args)]
pub struct PartitionArgs {
    /// The public CSV (never privatised).
    #[arg(long, value_name = "PUB.csv")]
    public: PathBuf,
    #[command(flatten)]
    columns: ColumnArgs,
    #[command(flatten)]
    tree: TreeArgs,
    /// The depth p [default: Theorem 4's depth, which needs --n-private].
    #[arg(long, value_name = "P")]
    depth: Option<u32>,
    /// The ε holders will use (LPCT-prune: the total; each round uses ε/2).
    #[arg(long, value_name = "E")]
    epsilon: f64,
    /// The number of private holders n_P (for the default depth and LPCT-prune's p0, p_term).
    #[arg(long, value_name = "N")]
    n_private: Option<u64>,
    /// The holders' local release: Hadamard randomized response over the (leaf, label) cells (a
    /// row index and one bit per report; less noise than Laplace at every ε ≤ 8) or the paper's
    /// Laplace noise of scale 4/ε on the 2·leaves coordinates of (Ũ, Ṽ).
    #[arg(long, value_enum, default_value_t = MechanismArg::Hadamard)]
    mechanism: MechanismArg,
    /// Build round 1 of LPCT-prune (Algorithm 2) instead of LPCT.
    #[arg(long)]
    prune: bool,
    /// With --prune: Algorithm 2's termination (rounds at ε/2; a second round when the flag is
    /// set) [default: one round at ε].
    #[arg(long)]
    termination: bool,
    /// Seed of the random max-edge splitter (public randomness).
    #[arg(long, value_name = "N")]
    seed: Option<u64>,
    #[arg(long, value_name = "TREE.json")]
    out: PathBuf,
}

/// A report mechanism on the command line.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum MechanismArg {
    Hadamard,
    Laplace,
}

impl From<MechanismArg> for Mechanism {
    fn from(m: MechanismArg) -> Self {
        match m {
            MechanismArg::Hadamard => Mechanism::Hadamard,
            MechanismArg::Laplace => Mechanism::Laplace,
        }
    }
}

/// A report file format on the command line.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum FormatArg {
    Arrow,
    Csv,
}

fn partition(a: PartitionArgs) -> CliResult {
    check_output(
        "--out",
        &a.out,
        &[Input {
            option: "--public",
            path: &a.public,
        }],
    )?;
    let loaded = a.columns.load_public(&a.public)?;
    let settings = a.tree.settings(a.seed);
    let (n_q, d) = (loaded.dataset.n_rows() as u64, loaded.dataset.n_features());
    let mechanism = Mechanism::from(a.mechanism);
    let need_n = || {
        a.n_private.ok_or_else(|| {
            CliError::BadInput("--n-private is needed for the default depth and for --prune".into())
        })
    };
    let (depth, protocol, epsilon) = if a.prune {
        let config = PruneConfig {
            epsilon: a.epsilon,
            p0: a.depth,
            options: PruneOptions {
                invoke_termination: a.termination,
                ..Default::default()
            },
            tree: settings.clone(),
            ..Default::default()
        };
        let (p0, p_term) = lpct::prune_depths_for(&config, mechanism, need_n()?, n_q, d);
        let eps_q = lpct::prune_query_epsilon(&config);
        (p0, Protocol::PruneRound1 { config, p_term }, eps_q)
    } else {
        let depth = match a.depth {
            Some(p) => p,
            None => lpct::theory_depth_for(mechanism, need_n()?, n_q, d, a.epsilon),
        };
        (depth, Protocol::Lpct, a.epsilon)
    };
    write_partition(
        &loaded, settings, depth, epsilon, mechanism, protocol, &a.out,
    )
}

fn write_partition(
    loaded: &Loaded,
    settings: TreeSettings,
    depth: u32,
    epsilon: f64,
    mechanism: Mechanism,
    protocol: Protocol,
    out: &Path,
) -> CliResult {
    // ε is checked by `PartitionFile::new` (the library's shared cap), after the tree is
    // built from public rows only.
    let tree = lpct::partition(&settings, depth, &loaded.dataset).map_err(lpct_err)?;
    let (x, y) = lpct::binary_xy(&loaded.dataset, "public data").map_err(lpct_err)?;
    let public_counts = tree.leaf_counts(x, y).map_err(lpct_err)?;
    let (leaves, tree_depth) = (tree.n_leaves(), tree.depth());
    let file = PartitionFile::new(
        loaded.schema.clone(),
        settings,
        epsilon,
        mechanism,
        protocol,
        tree,
        public_counts,
    )
    .map_err(lpct_err)?;
    save_partition(&file, out)?;
    // Said once the file is written, never before.
    eprintln!(
        "wrote {} ({leaves} leaves, depth {tree_depth}; holders report with the {mechanism} \
         mechanism at ε = {epsilon})",
        out.display()
    );
    Ok(())
}

#[derive(clap::Args)]
pub struct PrivatizeArgs {
    /// The partition broadcast by the collector.
    #[arg(long, value_name = "TREE.json")]
    partition: PathBuf,
    /// The holder's own rows (read in batches: any size).
    #[arg(long, value_name = "MY_ROWS.csv")]
    data: PathBuf,
    /// The target column (must be the partition's).
    #[arg(long, value_name = "COL")]
    target: Option<String>,
    /// ε of each report [default: the partition's]; must match the partition's.
    #[arg(long, value_name = "E")]
    epsilon: Option<f64>,
    /// The local release [default: the partition's]; must match the partition's.
    #[arg(long, value_enum)]
    mechanism: Option<MechanismArg>,
    /// Report file format [default: arrow when --out ends in .arrow or .ipc, else csv]. Arrow
    /// files carry the partition's identity and take ≈ 1–2 bytes per Hadamard report.
    #[arg(long, value_enum)]
    format: Option<FormatArg>,
    #[command(flatten)]
    seeds: SeedArgs,
    #[arg(long, value_name = "CHAR", value_parser = crate::cmd::common::parse_delimiter)]
    delimiter: Option<u8>,
    #[arg(long, value_enum, default_value_t = HeaderArg::Auto)]
    header: HeaderArg,
    #[arg(long, value_name = "REPORTS.arrow")]
    out: PathBuf,
}

/// Rows of the holder's file in memory at a time.
const PRIVATIZE_BATCH_ROWS: usize = 1 << 18;

/// Checks the holder's flags against the partition (target, ε, mechanism).
fn check_privatize_flags(a: &PrivatizeArgs, p: &PartitionFile) -> CliResult<f64> {
    if let (Some(t), Some(col)) = (&a.target, &p.schema.target)
        && *t != col.name
    {
        return Err(CliError::BadInput(format!(
            "--target {t}: the partition's target is `{}`",
            col.name
        )));
    }
    let eps = a.epsilon.unwrap_or(p.epsilon);
    if eps != p.epsilon {
        return Err(CliError::BadInput(format!(
            "--epsilon {eps}: the partition asks for reports at ε = {}",
            p.epsilon
        )));
    }
    if let Some(m) = a.mechanism
        && Mechanism::from(m) != p.mechanism
    {
        return Err(CliError::BadInput(format!(
            "--mechanism {}: the partition asks for {} reports",
            Mechanism::from(m),
            p.mechanism
        )));
    }
    Ok(eps)
}

/// The holder's randomiser of the partition's mechanism.
enum Randomiser {
    Hadamard(privatiser::HadamardRelease),
    Laplace(privatiser::LocalRelease),
}

fn privatize(a: PrivatizeArgs) -> CliResult {
    check_output(
        "--out",
        &a.out,
        &[
            Input {
                option: "--partition",
                path: &a.partition,
            },
            Input {
                option: "--data",
                path: &a.data,
            },
        ],
    )?;
    let p = load_partition(&a.partition)?;
    let eps = check_privatize_flags(&a, &p)?;
    let format = match a.format {
        Some(FormatArg::Arrow) => ReportFormat::Arrow,
        Some(FormatArg::Csv) => ReportFormat::Csv,
        None => ReportFormat::for_path(&a.out),
    };
    let header = ReportsHeader::for_partition(&p).map_err(lpct_err)?;
    let write_err = |e: LpctError| CliError::BadInput(format!("writing {}: {e}", a.out.display()));
    let randomiser = match p.mechanism {
        Mechanism::Hadamard => Randomiser::Hadamard(
            privatiser::HadamardRelease::new(eps, p.tree.n_leaves()).map_err(lpct_err)?,
        ),
        Mechanism::Laplace => Randomiser::Laplace(
            privatiser::LocalRelease::new(eps, p.tree.n_leaves()).map_err(lpct_err)?,
        ),
    };
    let opts = ApplyOptions {
        with_target: true,
        missing: PRIVATE_ROWS.0,
        unseen: PRIVATE_ROWS.1,
        format: csv_format(a.delimiter, a.header),
    };
    eprintln!("{PRIVATE_ROWS_NOTE}");
    let batches =
        dpfair_data::batches::SchemaBatches::open(&p.schema, &a.data, &opts, PRIVATIZE_BATCH_ROWS)?;
    let file = AtomicFile::create(&a.out)
        .map_err(|e| CliError::BadInput(format!("cannot write {}: {e}", a.out.display())))?;
    let mut sink = ReportSink::new(
        std::io::BufWriter::with_capacity(1 << 20, file),
        format,
        &header,
    )
    .map_err(write_err)?;
    let mut noise = a.seeds.noise();
    let mut n = 0u64;
    let mut next_progress = 10_000_000u64;
    for batch in batches {
        let batch = batch?;
        if batch.dataset.target.is_none() {
            return Err(CliError::BadInput(format!(
                "{}: no target column `{}`",
                a.data.display(),
                p.schema.target.as_ref().map_or("?", |t| t.name.as_str())
            )));
        }
        let (x, y) = lpct::binary_xy(&batch.dataset, "rows").map_err(lpct_err)?;
        let leaves = p.tree.leaves_of(x).map_err(lpct_err)?;
        for (&j, &yi) in leaves.iter().zip(y) {
            match &randomiser {
                Randomiser::Hadamard(h) => {
                    let (r, b) = h.report(&mut noise, j as usize, yi).map_err(lpct_err)?;
                    sink.push_hadamard(r, b).map_err(write_err)?;
                }
                Randomiser::Laplace(l) => {
                    let r = l
                        .report(&mut noise, Some(j as usize), yi)
                        .map_err(lpct_err)?;
                    sink.push_laplace(&r).map_err(write_err)?;
                }
            }
        }
        n += leaves.len() as u64;
        if n >= next_progress {
            eprintln!("… {n} reports");
            next_progress += 10_000_000;
        }
    }
    let commit_err =
        |e: std::io::Error| CliError::BadInput(format!("writing {}: {e}", a.out.display()));
    sink.finish()
        .map_err(write_err)?
        .into_inner()
        .map_err(|e| commit_err(e.into_error()))?
        .commit()
        .map_err(commit_err)?;
    let bytes = std::fs::metadata(&a.out).map(|m| m.len()).unwrap_or(0);
    let per_report = if n > 0 {
        format!(", {:.2} per report", bytes as f64 / n as f64)
    } else {
        String::new()
    };
    eprintln!(
        "wrote {} ({n} {} reports, each {eps}-LDP; {bytes} bytes{per_report})",
        a.out.display(),
        p.mechanism,
    );
    Ok(())
}

/// The report files named by `--reports`, each once (`dpfair::lpct::report_set`: directories
/// searched recursively, a file reached twice read once, other files named in a note).
fn report_paths(given: &[PathBuf]) -> CliResult<Vec<PathBuf>> {
    let set = report_set::report_files(given).map_err(lpct_err)?;
    for note in &set.notes {
        eprintln!("{note}");
    }
    Ok(set.files)
}

/// Folds every report file into one accumulator (files in parallel, merged in file order),
/// after refusing a copy ([`report_set::refuse_copies`]); errors name the file.
fn collect_reports(paths: &[PathBuf], p: &PartitionFile) -> CliResult<ReportSums> {
    use rayon::prelude::*;
    let expected = ReportsHeader::for_partition(p).map_err(lpct_err)?;
    let empty = ReportSums::new(p.mechanism, p.epsilon, p.tree.n_leaves()).map_err(lpct_err)?;
    let parts: Vec<(ReportSums, (PathBuf, String, u64))> = paths
        .par_iter()
        .map(|path| {
            let file = std::fs::File::open(path)
                .map_err(|e| CliError::BadInput(format!("cannot read {}: {e}", path.display())))?;
            let mut sums = empty.clone();
            let n = read_reports_into(file, &expected, &mut sums)
                .map_err(|e| CliError::BadInput(format!("{}: {e}", path.display())))?;
            let digest = report_set::content_digest(path).map_err(lpct_err)?;
            Ok((sums, (path.clone(), digest, n)))
        })
        .collect::<CliResult<_>>()?;
    let identities: Vec<_> = parts.iter().map(|(_, id)| id.clone()).collect();
    if let Some(note) = report_set::refuse_copies(&identities).map_err(lpct_err)? {
        eprintln!("{note}");
    }
    let mut total = empty;
    for (part, _) in &parts {
        total.merge(part).map_err(lpct_err)?;
    }
    Ok(total)
}

#[derive(clap::Args)]
pub struct FitArgs {
    #[arg(long, value_name = "TREE.json")]
    partition: PathBuf,
    /// Report files (Arrow or CSV, any number; a directory stands for the .arrow, .ipc and .csv
    /// files in it and its subdirectories; each file is read once, a copy of one is refused).
    /// They are folded into per-cell sums one batch at a time: memory does not grow with
    /// the number of reports.
    #[arg(long, value_name = "REPORTS", num_args = 1.., required = true)]
    reports: Vec<PathBuf>,
    /// Recount the public data (same file as for `ldp partition`) [default: the counts stored in
    /// the partition].
    #[arg(long, value_name = "PUB.csv")]
    public: Option<PathBuf>,
    /// The public weight λ [default: Theorem 4's λ with the inverse-variance constant,
    /// 1 + 4v·leaves with v the per-holder noise variance of a leaf's numerator: 40/ε² for
    /// Laplace, 1/(2·tanh(ε/2)²) for Hadamard].
    #[arg(long, value_name = "L")]
    lambda: Option<f64>,
    /// LPCT-prune round 1: where to write the round-2 partition if Algorithm 2 terminates.
    #[arg(long, value_name = "TREE2.json")]
    next: Option<PathBuf>,
    /// LPCT: a leaf keeps its own estimate only when it is Z standard deviations from 1/2 (noise
    /// of the reports and of the labels), else takes its nearest such ancestor's
    /// (docs/deviations.md#lpct-significance-guard); LPCT-prune: the same test on the node
    /// Algorithm 2's walk picks (docs/deviations.md#lpct-prune-significance-guard). As `fit
    /// lpct`, `fit lpct-prune` and `compare`; 0 gives the paper's estimates.
    #[arg(
        long,
        value_name = "Z",
        default_value_t = dpfair::lpct::guard::DEFAULT_Z,
        value_parser = crate::cmd::common::parse_guard_z
    )]
    guard: f64,
    #[command(flatten)]
    out: OutArgs,
}

fn fit(a: FitArgs) -> CliResult {
    let mut inputs = vec![Input {
        option: "--partition",
        path: &a.partition,
    }];
    for r in &a.reports {
        inputs.push(Input {
            option: "--reports",
            path: r,
        });
    }
    if let Some(public) = &a.public {
        inputs.push(Input {
            option: "--public",
            path: public,
        });
    }
    a.out.check(&inputs)?;
    if let Some(next) = &a.next {
        check_output("--next", next, &inputs)?;
    }
    let p = load_partition(&a.partition)?;
    let reports = collect_reports(&report_paths(&a.reports)?, &p)?;
    let total = match &p.protocol {
        Protocol::Lpct => p.epsilon,
        Protocol::PruneRound1 { config, .. } | Protocol::PruneRound2 { config, .. } => {
            config.epsilon
        }
    };
    let mut ledger = Ledger::new(Budget::pure(total)?);
    if let Protocol::PruneRound2 { .. } = p.protocol {
        // Round 1's reports were the first ε/2 of every holder's budget.
        privatiser::charge_reports(
            &mut ledger,
            "LPCT-prune round 1 reports",
            p.epsilon,
            reports.n_reports(),
        )
        .map_err(lpct_err)?;
    }
    let private = reports
        .finalize(&mut ledger, "LPCT leaf reports")
        .map_err(lpct_err)?;
    let public = match &a.public {
        Some(path) => {
            let ds = load_with_schema(&p.schema, path, None, HeaderArg::Auto, PUBLIC_ROWS)?;
            let (x, y) = lpct::binary_xy(&ds, "public data").map_err(lpct_err)?;
            p.tree.leaf_counts(x, y).map_err(lpct_err)?
        }
        None => p.public_counts.clone(),
    };
    let sums = LeafSums { private, public };
    let guard = (a.guard != 0.0).then_some(a.guard);
    let loaded = Loaded {
        dataset: Dataset {
            features: ndarray::Array2::zeros((0, p.tree.n_features())),
            feature_names: p.schema.feature_names(),
            groups: None,
            target: None,
        },
        schema: p.schema.clone(),
        report: dpfair_data::LoadReport {
            path: a.partition.clone(),
            rows_in_file: 0,
            rows: Vec::new(),
            dropped: 0,
            missing_by_column: Vec::new(),
            delimiter: b',',
            has_header: true,
            skipped_index: false,
            skipped_ids: Vec::new(),
            text_columns: Vec::new(),
        },
    };
    match p.protocol {
        Protocol::Lpct => {
            let lambda = match a.lambda {
                Some(l) => l,
                None => {
                    let l = lpct::theory_lambda_for(p.mechanism, p.tree.n_leaves(), p.epsilon);
                    if !(l.is_finite() && l <= lpct::MAX_LAMBDA) {
                        return Err(CliError::BadInput(format!(
                            "{}: at the partition's ε = {:e}, Theorem 4's λ is {l:e} (not below \
                             {:e}): the reports carry no signal; pass --lambda, or partition \
                             with a larger --epsilon",
                            a.partition.display(),
                            p.epsilon,
                            lpct::MAX_LAMBDA
                        )));
                    }
                    l
                }
            };
            let m = lpct::guarded_model_from_sums(p.tree, &sums, lambda, &p.settings, guard)
                .map_err(lpct_err)?;
            let cfg =
                serde_json::json!({ "epsilon": p.epsilon, "lambda": lambda, "tree": p.settings });
            a.out
                .save(&loaded, ledger, None, &cfg, FittedModel::Lpct(m), None)?;
        }
        Protocol::PruneRound1 { mut config, p_term } => {
            // The collector's --guard decides (a partition file written before the option
            // stored none).
            config.guard = guard;
            let p0 = p.tree.depth();
            match lpct::prune_round1(&config, p.tree, &sums, p_term).map_err(lpct_err)? {
                lpct::PruneStep::Done(m) => {
                    a.out.save(
                        &loaded,
                        ledger,
                        None,
                        &config,
                        FittedModel::LpctPrune(m),
                        None,
                    )?;
                }
                lpct::PruneStep::SecondRound { p_term } => {
                    let next = a.next.ok_or_else(|| {
                        CliError::BadInput(
                            "Algorithm 2 terminated: a second round is needed; pass --next TREE2.json"
                                .into(),
                        )
                    })?;
                    // The round-2 partition is built from the public data again.
                    let public_path = a.public.ok_or_else(|| {
                        CliError::BadInput(
                            "Algorithm 2 terminated: pass --public PUB.csv to build the round-2 partition".into(),
                        )
                    })?;
                    let ds = load_with_schema(
                        &p.schema,
                        &public_path,
                        None,
                        HeaderArg::Auto,
                        PUBLIC_ROWS,
                    )?;
                    let public_loaded = Loaded {
                        dataset: ds,
                        ..loaded
                    };
                    write_partition(
                        &public_loaded,
                        p.settings,
                        p_term,
                        p.epsilon,
                        p.mechanism,
                        Protocol::PruneRound2 { config, p0 },
                        &next,
                    )?;
                    eprintln!(
                        "Algorithm 2 terminated (flag = 1): holders privatize again with {}, then run `ldp fit` on those reports",
                        next.display()
                    );
                }
            }
        }
        Protocol::PruneRound2 { config, p0 } => {
            let m = lpct::prune_round2(&config, p.tree, &sums, p0).map_err(lpct_err)?;
            a.out.save(
                &loaded,
                ledger,
                None,
                &config,
                FittedModel::LpctPrune(m),
                None,
            )?;
        }
    }
    Ok(())
}

/// `dpfair fit lpct|lpct-prune`: the public and private CSVs (simulated setting).
#[derive(clap::Args, Clone, Debug)]
pub struct SimulatedArgs {
    /// The public CSV.
    #[arg(long, value_name = "PUB.csv")]
    pub public: PathBuf,
    /// The private CSV (each row is one holder; their reports are simulated exactly).
    #[arg(long, value_name = "PRIV.csv")]
    pub private: PathBuf,
    #[command(flatten)]
    pub columns: ColumnArgs,
    #[command(flatten)]
    pub tree: TreeArgs,
    /// The LDP budget ε of each holder.
    #[arg(long, value_name = "E")]
    pub epsilon: f64,
    /// The share of the public rows in each fold of a cross-validated check of the tree against
    /// always predicting the public majority class (no privacy cost: public rows; 0.2: five
    /// folds): every public row builds the partition and is held out once, predicted by a tree
    /// built on the other folds; when a sign test does not say the tree beats the majority
    /// class, the model predicts that class and the fit says so. 0 turns the check off.
    #[arg(long, value_name = "F", default_value_t = dpfair::held_out_check::PUBLIC_FRACTION)]
    pub check_fraction: f64,
    #[command(flatten)]
    pub seeds: SeedArgs,
    #[command(flatten)]
    pub out: OutArgs,
}

impl SimulatedArgs {
    /// The public data (with its schema) and the private data, after checking `--out`.
    pub fn load(&self) -> CliResult<(Loaded, Dataset)> {
        self.out.check(&[
            Input {
                option: "--public",
                path: &self.public,
            },
            Input {
                option: "--private",
                path: &self.private,
            },
        ])?;
        let public = self.columns.load_public(&self.public)?;
        let private = self.columns.load_private(&public.schema, &self.private)?;
        Ok((public, private))
    }

    /// Fit `estimator` on the private rows in a session over its declared spend (ε-LDP).
    pub fn fit<E: dpfair::Estimator>(
        &self,
        estimator: impl FnOnce(Dataset) -> CliResult<E>,
    ) -> CliResult<crate::cmd::fit::pipeline::Run<E::Model>> {
        let (public, private) = self.load()?;
        let est = estimator(public.dataset.clone())?;
        let spend = est.spend(&private)?;
        let mut session =
            crate::cmd::fit::pipeline::session_for(&spend)?.with_noise(self.seeds.noise());
        let fitted = crate::cmd::fit::pipeline::with_progress(est.method(), || {
            est.fit(&private, &mut session)
        })?;
        Ok(crate::cmd::fit::pipeline::finish(&est, public, fitted))
    }
}
