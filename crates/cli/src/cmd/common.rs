//! Arguments shared by every `fit` command, to `#[command(flatten)]` into a method's `Args`:
//! [`DataArgs`] (the CSV and its schema), [`TaskArgs`], [`BoundsArgs`] (public feature bounds),
//! [`PrivacyArgs`] (budget, seed, accounting) and [`OutArgs`] (the model file).
//!
//! ```ignore
//! #[derive(clap::Args)]
//! pub struct Args {
//!     #[command(flatten)] data: DataArgs,
//!     #[command(flatten)] bounds: BoundsArgs,
//!     #[command(flatten)] privacy: PrivacyArgs,
//!     #[command(flatten)] out: OutArgs,
//!     /// The method's own options ...
//!     #[arg(long, default_value_t = 0.05)] alpha: f64,
//! }
//! ```

// The shared pieces are used by the `fit` commands as they land.
#![allow(dead_code)]

use crate::error::CliResult;
use dpfair::model::{Accounting, FittedModel, ModelFile};
use dpfair::pipeline::Scaling;
pub use dpfair_data::output::{Input, check_output};
use dpfair_data::{Bounds, CsvFormat, HeaderMode, LoadOptions, Loaded, MissingPolicy, TaskKind};
use dpfair_privacy::accounting::Accountant;
use dpfair_privacy::ledger::readable;
use dpfair_privacy::{Budget, Entry, Ledger, Noise, Relation};
use std::path::PathBuf;

/// `--sensitive`'s help in a fair method's `fit --help`, where clap requires it:
/// `#[command(mut_arg("sensitive", require_sensitive))]` on the method's `Args`.
pub fn require_sensitive(arg: clap::Arg) -> clap::Arg {
    arg.required(true).help(
        "The sensitive-attribute column (required: the method constrains the disparity between \
         its groups); its levels are public schema information. Several columns, `race,sex`, \
         form intersectional groups (each combination a group, named `White × F`).",
    )
}

/// The training CSV and how to read it.
#[derive(clap::Args, Clone, Debug)]
pub struct DataArgs {
    /// The data file: CSV (comma, semicolon or tab separated, detected; header detected), or
    /// Parquet (`.parquet`) or Arrow IPC (`.arrow`, `.ipc`, `.feather`), read in batches with the
    /// same column rules (nulls are missing values). Only `fit fair-regression --scores` streams
    /// a columnar file without loading it whole; the other methods need all rows in memory
    /// (DP-SGD samples from all rows, kernel sums and trees read all rows at once).
    #[arg(long, value_name = "FILE")]
    pub data: PathBuf,
    /// The target column (a name, or a 0-based position for files without a header).
    #[arg(long, value_name = "COL")]
    pub target: String,
    /// The sensitive-attribute column; its levels are public schema information. Required by
    /// the fair methods (cdp-fair, fdp-fair, fair-regression, decoupled, dp2dp,
    /// group-thresholds). Several columns, `race,sex`, form intersectional groups: each
    /// combination of their values is a group, named `White × F` (docs/data.md).
    #[arg(long, value_name = "COL")]
    pub sensitive: Option<String>,
    /// Feature columns [default: every column except target and sensitive].
    #[arg(long, value_name = "A,B,...", value_delimiter = ',')]
    pub features: Option<Vec<String>>,
    /// Feature columns to one-hot encode (levels found in the data, recorded as public). Text
    /// columns are one-hot encoded without being listed.
    #[arg(long, value_name = "C,...", value_delimiter = ',')]
    pub categorical: Vec<String>,
    /// Columns never to use as features (identifiers, leaks of the target). Columns named like
    /// identifiers (`id`, `*_id`, `index`, `Unnamed: 0`) are left out without being listed.
    #[arg(long, value_name = "C,...", value_delimiter = ',')]
    pub drop: Vec<String>,
    /// Declare the sensitive groups (public), in order; a value outside them is an error.
    /// Intersectional groups are declared joined: `--groups "B × F,B × M,W × F,W × M"`.
    #[arg(long, value_name = "G,...", value_delimiter = ',')]
    pub groups: Option<Vec<String>>,
    /// Declare the target's classes (public), in order; a value outside them is an error
    /// [default: the values found in the data; numbers compared as numbers, `1.0` = `1`].
    #[arg(long, value_name = "C,...", value_delimiter = ',')]
    pub classes: Option<Vec<String>>,
    /// The label of the positive class of a binary target [default: the larger value].
    #[arg(long, value_name = "LABEL")]
    pub positive: Option<String>,
    /// Refuse a file with a missing value (`?`, `NA`, empty) in a used column, naming its row.
    /// Without it every row is kept and missing cells are filled by a public rule (a number:
    /// the midpoint of its --bounds, else 0; a text feature: no level; a group or class: the
    /// first), so n is the file's row count. Refusing reveals whether some private row has a
    /// missing value: use it on data you may look at (docs/privacy.md, "Failures and messages").
    #[arg(long)]
    pub no_missing: bool,
    /// Field delimiter: `,` `;` `tab` or one character [default: detected].
    #[arg(long, value_name = "CHAR", value_parser = parse_delimiter)]
    pub delimiter: Option<u8>,
    /// Whether the first row is a header.
    #[arg(long, value_enum, default_value_t = HeaderArg::Auto)]
    pub header: HeaderArg,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum HeaderArg {
    Auto,
    Yes,
    No,
}

/// `--task`, for methods that accept more than one kind of target.
#[derive(clap::Args, Clone, Debug)]
pub struct TaskArgs {
    /// The task [default: inferred: two values → binary, few integers or text → multiclass,
    /// otherwise regression].
    #[arg(long, value_enum)]
    pub task: Option<TaskArg>,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum TaskArg {
    Binary,
    Multiclass,
    Regression,
}

impl From<TaskArg> for TaskKind {
    fn from(t: TaskArg) -> Self {
        match t {
            TaskArg::Binary => TaskKind::Binary,
            TaskArg::Multiclass => TaskKind::Multiclass,
            TaskArg::Regression => TaskKind::Regression,
        }
    }
}

/// Parse `--delimiter`: `,` `;` `tab` / `\t` or any single ASCII character.
pub fn parse_delimiter(s: &str) -> Result<u8, String> {
    match s {
        "tab" | "\\t" | "\t" => Ok(b'\t'),
        _ if s.len() == 1 && s.is_ascii() => Ok(s.as_bytes()[0]),
        _ => Err(format!("`{s}`: expected one ASCII character, or `tab`")),
    }
}

/// `--guard Z` of the LPCT fits and the LDP collector: a number of standard deviations, finite
/// and not negative (0 switches the guard off), checked while the arguments are read, before any
/// file is opened (docs/deviations.md#lpct-significance-guard).
pub fn parse_guard_z(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(z) if z.is_finite() && z >= 0.0 => Ok(z),
        Ok(_) => Err(format!(
            "`{s}`: Z is a number of standard deviations, 0 or more (0 turns the guard off)"
        )),
        Err(e) => Err(format!("`{s}`: {e}")),
    }
}

/// The CSV format options shared by every command that reads a CSV.
pub fn csv_format(delimiter: Option<u8>, header: HeaderArg) -> CsvFormat {
    CsvFormat {
        delimiter,
        header: match header {
            HeaderArg::Auto => HeaderMode::Auto,
            HeaderArg::Yes => HeaderMode::Present,
            HeaderArg::No => HeaderMode::Absent,
        },
    }
}

impl DataArgs {
    /// The training CSV as an input of [`OutArgs::check`].
    pub fn input(&self) -> Input<'_> {
        Input {
            option: "--data",
            path: &self.data,
        }
    }

    /// The loader options these arguments describe (task inferred unless given).
    pub fn options(&self, task: Option<TaskKind>) -> LoadOptions {
        LoadOptions {
            target: Some(self.target.clone()),
            sensitive: self.sensitive.clone(),
            features: self.features.clone(),
            categorical: self.categorical.clone(),
            drop: self.drop.clone(),
            groups: self.groups.clone(),
            classes: self.classes.clone(),
            task,
            positive: self.positive.clone(),
            missing: if self.no_missing {
                MissingPolicy::Refuse
            } else {
                MissingPolicy::Fill
            },
            fill: Bounds::default(),
            format: csv_format(self.delimiter, self.header),
        }
    }

    /// Load the CSV: the data set, its learned schema and the load report; missing numeric
    /// cells without public bounds are filled with 0 ([`DataArgs::load_filled`]). Every error
    /// is bad input naming the file, row and column.
    pub fn load(&self, task: Option<TaskKind>) -> CliResult<Loaded> {
        self.load_filled(task, Bounds::default())
    }

    /// [`DataArgs::load`], missing numeric cells filled with the midpoints of `fill` (the
    /// public `--bounds`) where given.
    pub fn load_filled(&self, task: Option<TaskKind>, fill: Bounds) -> CliResult<Loaded> {
        let options = LoadOptions {
            fill,
            ..self.options(task)
        };
        Ok(self.announce(dpfair_data::load(&self.data, &options)?))
    }

    /// Print what a load found that the user should know (skipped index and identifier
    /// columns, the positive class), from public facts of the load only. Nothing is said
    /// about missing values (which rows hold one is private).
    pub fn announce(&self, loaded: Loaded) -> Loaded {
        for msg in [
            loaded.report.skipped_index_message(),
            loaded.report.skipped_ids_message(),
        ]
        .into_iter()
        .flatten()
        {
            eprintln!("{msg}");
        }
        if let Some(note) = self.positive_note(&loaded) {
            eprintln!("{note}");
        }
        loaded
    }

    /// Which label of a text binary target was taken as positive, when the user did not say
    /// (`--positive`): the choice is by text order, which may not be the one they mean.
    fn positive_note(&self, loaded: &Loaded) -> Option<String> {
        let labels = match &loaded.schema.target.as_ref()?.encoding {
            dpfair_data::TargetEncoding::Binary { labels } => labels,
            _ => return None,
        };
        let text = labels.iter().any(|l| l.parse::<f64>().is_err());
        (self.positive.is_none() && text && labels.len() == 2).then(|| {
            format!(
                "note: --target {}: `{}` is the positive class (coded 1; the later of `{}` and \
                 `{}` in text order); give --positive to choose the other",
                self.target, labels[1], labels[0], labels[1]
            )
        })
    }
}

/// Feature bounds: public (no privacy cost), or estimated privately with `--bounds-share` of ε
/// (the default for every numeric column without public bounds).
#[derive(clap::Args, Clone, Debug, Default)]
pub struct BoundsArgs {
    /// Public bounds of numeric columns, `col:lo:hi,...`: values are clipped to them and scaled
    /// to [0, 1]; they cost no privacy. Numeric columns without them get private bounds
    /// (--bounds-share of ε), except 0/1 columns ([0, 1] by their type).
    #[arg(long, value_name = "COL:LO:HI,...")]
    pub bounds: Option<String>,
    /// A file of public bounds, one `col:lo:hi` per line (`#` comments).
    #[arg(long, value_name = "FILE")]
    pub bounds_file: Option<PathBuf>,
    /// Coarse public ranges `col:lo:hi,...`: these columns' private bounds are the 1% and 99%
    /// quantiles on a grid over the range (exponential mechanism). Without a coarse range a
    /// column's private bounds are its median ± 2 spreads, found on a public log-scale grid
    /// from 10^-9 to 10^12 (docs/privacy.md, "Feature bounds").
    #[arg(long, value_name = "COL:LO:HI,...")]
    pub coarse_bounds: Option<String>,
    /// Least share of ε spent on private feature bounds, split equally over the columns that
    /// need them. Without --coarse-bounds it is raised on small data, up to 25%, so that each
    /// column gets the ε its spread release needs (24·(ln 86 + 4)/rows; docs/privacy.md).
    #[arg(long, value_name = "F", default_value_t = DEFAULT_BOUNDS_SHARE)]
    pub bounds_share: f64,
    /// Use numeric features unscaled (no private bounds, no cost; methods that assume features
    /// on [0, 1] then do poorly).
    #[arg(long, conflicts_with_all = ["bounds", "bounds_file", "coarse_bounds"])]
    pub unscaled: bool,
}

/// Default share of ε for private bound estimation: 5%.
pub use dpfair::pipeline::DEFAULT_BOUNDS_SHARE;

impl BoundsArgs {
    /// Whether any bounds option was given.
    pub fn given(&self) -> bool {
        self.bounds.is_some() || self.bounds_file.is_some() || self.coarse_bounds.is_some()
    }

    /// The public bounds given (possibly none).
    pub fn public(&self) -> CliResult<Bounds> {
        let inline = match &self.bounds {
            Some(s) => Bounds::parse(s)?,
            None => Bounds::default(),
        };
        let file = match &self.bounds_file {
            Some(p) => Bounds::from_file(p)?,
            None => Bounds::default(),
        };
        Ok(inline.merge(file)?)
    }

    /// The library's [`Scaling`] these options describe (checked: `--bounds-share` in (0, 1)):
    /// `--unscaled` none; with `--coarse-bounds` private within them; otherwise public bounds
    /// where given and automatic private bounds for the rest.
    pub fn scaling(&self) -> CliResult<Scaling> {
        dpfair::pipeline::check_bounds_share(self.bounds_share)?;
        if self.unscaled {
            return Ok(Scaling::None);
        }
        let public = self.public()?;
        let scaling = match &self.coarse_bounds {
            None => Scaling::Auto {
                public,
                share: self.bounds_share,
            },
            Some(spec) => Scaling::Private {
                public,
                coarse: Bounds::parse(spec)?,
                share: self.bounds_share,
            },
        };
        scaling.check()?;
        Ok(scaling)
    }
}

/// The one line a fit prints about its columns (schema information only: names, types,
/// levels) and what its private bounds cost, when it estimated any: `epsilon` is the fit's ε
/// and `spent` the ε its bounds were charged (from the ledger).
pub fn bounds_lines(
    plan: &dpfair_data::BoundsPlan,
    share: f64,
    epsilon: f64,
    spent: f64,
    rows: usize,
) -> Vec<String> {
    let names = |v: &[String]| {
        v.iter()
            .map(|c| format!("`{c}`"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut kinds = Vec::new();
    if !plan.one_hot.is_empty() {
        kinds.push(format!(
            "one-hot (levels public) {}",
            plan.one_hot
                .iter()
                .map(|(c, k)| format!("`{c}` ({k})"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    if !plan.binary.is_empty() {
        kinds.push(format!("0/1 [0, 1] {}", names(&plan.binary)));
    }
    if !plan.public.is_empty() {
        kinds.push(format!("public --bounds {}", names(&plan.public)));
    }
    if !plan.private.is_empty() {
        kinds.push(format!("private bounds {}", names(&plan.private)));
    }
    let mut lines = vec![format!("columns: {}", kinds.join("; "))];
    if !plan.private.is_empty() {
        let m = plan.private.len();
        lines.push(format!(
            "no --bounds: private bounds for {m} column(s), cost ε = {} ({} of ε = {}, ε/{m} \
             per column, median and spread on a public log grid; give --bounds to spend nothing)",
            dpfair_privacy::ledger::readable_up(spent),
            readable(share),
            readable(epsilon),
        ));
        if let Some(w) = dpfair::pipeline::bounds_warning(share * epsilon / m as f64, rows) {
            lines.push(w);
        }
    }
    lines
}

/// The `--accountant` choice, shared by every subcommand that runs a DP-SGD accountant.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum AccountantArg {
    /// Rényi DP (moments accountant): certified, fast, a few percent loose.
    Rdp,
    /// Privacy random variables (FFT): certified, tight, slower.
    Prv,
    /// Gaussian DP central-limit approximation: fast, not a guarantee.
    Gdp,
}

impl From<AccountantArg> for Accountant {
    fn from(a: AccountantArg) -> Self {
        match a {
            AccountantArg::Rdp => Accountant::Rdp,
            AccountantArg::Prv => Accountant::Prv,
            AccountantArg::Gdp => Accountant::Gdp,
        }
    }
}

impl AccountantArg {
    /// The accountant's name as on the command line (`rdp`, `prv`, `gdp`).
    pub fn name(self) -> &'static str {
        match self {
            AccountantArg::Rdp => "rdp",
            AccountantArg::Prv => "prv",
            AccountantArg::Gdp => "gdp",
        }
    }

    /// Warn on stderr when a strict-mode fit asks for the GDP accountant: its ε is a
    /// central-limit approximation, not a certified bound, so the stated guarantee is not proven
    /// (the ledger marks the total as uncertified too).
    pub fn warn_if_uncertified(self, accounting: Accounting) {
        if self == AccountantArg::Gdp && accounting == Accounting::Strict {
            eprintln!(
                "warning: --accountant gdp is a central-limit approximation, not a certified \
                 bound: it can under-state ε, so the (ε, δ) of this strict-mode fit is not \
                 guaranteed (use --accountant rdp or prv for a guarantee)"
            );
        }
    }
}

/// The `--relation` choice for DP-SGD accounting.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum RelationArg {
    /// Add or remove one record (Opacus / dp_accounting convention).
    AddRemove,
    /// Replace one record (sensitivity 2C: accounted at z/2).
    Substitution,
}

impl From<RelationArg> for Relation {
    fn from(r: RelationArg) -> Self {
        match r {
            RelationArg::AddRemove => Relation::AddRemove,
            RelationArg::Substitution => Relation::Substitution,
        }
    }
}

/// How privacy is accounted (`--accounting`).
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum AccountingArg {
    /// The stated guarantee, every release charged (default).
    #[default]
    Strict,
    /// The paper's procedure as published; prints what it really spends.
    Paper,
}

impl From<AccountingArg> for Accounting {
    fn from(a: AccountingArg) -> Self {
        match a {
            AccountingArg::Strict => Accounting::Strict,
            AccountingArg::Paper => Accounting::Paper,
        }
    }
}

/// Randomness: `--seed` keys public randomness only; release noise is the operating system's,
/// unless `--insecure-seeded-noise` makes it reproducible (and the model not private). See the
/// repository's `docs/privacy.md`, "What `--seed` does".
#[derive(clap::Args, Clone, Debug, Default)]
pub struct SeedArgs {
    /// Seed of the public randomness only: data-independent splits, random-feature bases and
    /// site partitions repeat with it. Release noise always comes from the operating system's
    /// CSPRNG and never repeats [default: random].
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    /// INSECURE, NOT PRIVATE: draw the release noise from a ChaCha20 stream seeded with N, so
    /// that a run repeats exactly (debugging, simulations). Anyone who knows N can subtract the
    /// noise: the model and `dpfair ledger` say NOT PRIVATE, and `dpfair predict` warns.
    #[arg(long, value_name = "N", conflicts_with = "seed")]
    pub insecure_seeded_noise: Option<u64>,
}

impl SeedArgs {
    /// The noise source these options describe (a warning on stderr for seeded noise).
    pub fn noise(&self) -> Noise {
        self.noise_for_site(0)
    }

    /// The noise source of site (or stream) number `k` of a simulation: seeds offset by `k`.
    pub fn noise_for_site(&self, k: u64) -> Noise {
        match (self.insecure_seeded_noise, self.seed) {
            (Some(n), _) => {
                if k == 0 {
                    eprintln!(
                        "warning: --insecure-seeded-noise: the release noise is reproducible from \
                         the seed, so the result is NOT PRIVATE"
                    );
                }
                Noise::seeded(n.wrapping_add(k))
            }
            (None, Some(s)) => Noise::os_with_public_seed(s.wrapping_add(k)),
            (None, None) => Noise::os(),
        }
    }
}

/// The held-out check of a classifier against the constant classes
/// (`dpfair::held_out_check`).
#[derive(clap::Args, Clone, Debug)]
pub struct CheckArgs {
    /// The share of rows held out to check the model against always predicting one class: the
    /// exponential mechanism compares their correct predictions, in parallel with the fit (the
    /// fit uses the other rows; no extra ε). When a constant class is at least as accurate, the
    /// model predicts that class and the fit says so. 0 turns the check off. Strict accounting
    /// and replace-one neighbours only (dp-logistic: with --substitution).
    #[arg(long, value_name = "F", default_value_t = dpfair::held_out_check::DEFAULT_FRACTION)]
    pub check_fraction: f64,
}

/// Privacy budget, randomness and accounting mode.
#[derive(clap::Args, Clone, Debug)]
pub struct PrivacyArgs {
    /// Privacy budget ε (> 0; `inf` for a non-private reference, reported as ε = ∞).
    #[arg(long, value_name = "E")]
    pub epsilon: f64,
    /// Privacy budget δ in [0, 1) [default: the method's].
    #[arg(long, value_name = "D")]
    pub delta: Option<f64>,
    #[command(flatten)]
    pub seeds: SeedArgs,
    /// Accounting: the stated guarantee (strict) or the paper's procedure (paper).
    #[arg(long, value_enum, default_value_t = AccountingArg::Strict)]
    pub accounting: AccountingArg,
}

impl PrivacyArgs {
    /// The budget (ε, δ), with `default_delta` when `--delta` is not given.
    pub fn budget(&self, default_delta: f64) -> CliResult<Budget> {
        Ok(Budget::approx(
            self.epsilon,
            self.delta.unwrap_or(default_delta),
        )?)
    }

    /// A fresh ledger over [`PrivacyArgs::budget`], for replace-one neighbours.
    pub fn ledger(&self, default_delta: f64) -> CliResult<Ledger> {
        self.ledger_for(default_delta, Relation::Substitution)
    }

    /// A fresh ledger over [`PrivacyArgs::budget`] certifying `relation`. With `--epsilon inf`
    /// it records the whole fit as non-private, so the total reads ε = ∞ (not 0).
    pub fn ledger_for(&self, default_delta: f64, relation: Relation) -> CliResult<Ledger> {
        let mut ledger = Ledger::for_relation(self.budget(default_delta)?, relation);
        if self.epsilon.is_infinite() {
            eprintln!("warning: --epsilon inf: a non-private reference; the model is NOT private");
            ledger.charge(non_private_fit())?;
        }
        Ok(ledger)
    }

    /// The noise source (see [`SeedArgs`]).
    pub fn noise(&self) -> Noise {
        self.seeds.noise()
    }

    pub fn accounting(&self) -> Accounting {
        self.accounting.into()
    }
}

/// Where to write the fitted model.
#[derive(clap::Args, Clone, Debug)]
pub struct OutArgs {
    /// The model file to write (JSON: schema, privacy ledger, config, model).
    #[arg(long, value_name = "MODEL.json")]
    pub out: PathBuf,
}

/// The ledger entry of a fit run with `--epsilon inf`: it reads the data without noise.
pub fn non_private_fit() -> Entry {
    Entry::non_private(
        "the whole fit (--epsilon inf)",
        "a non-private reference: fitted without noise",
    )
}

impl OutArgs {
    /// Refuse `--out` before any work: one of the command's input files (`--data`, …) or a
    /// place that cannot be written.
    pub fn check(&self, inputs: &[Input<'_>]) -> CliResult {
        Ok(check_output("--out", &self.out, inputs)?)
    }

    /// Wrap and write the model, recording in its ledger where the release noise came from
    /// (`noise`; `None` when the fit drew none itself, as an LDP collector); prints the ledger
    /// total on stderr.
    pub fn save(
        &self,
        loaded: &Loaded,
        mut ledger: Ledger,
        noise: Option<&Noise>,
        config: &impl serde::Serialize,
        model: FittedModel,
        check: Option<dpfair::held_out_check::CheckOutcome>,
    ) -> CliResult<ModelFile> {
        if let Some(noise) = noise {
            ledger.record_noise(noise);
        }
        let file =
            ModelFile::new(loaded.schema.clone(), ledger, config, model)?.with_check(check)?;
        self.write(file)
    }

    /// Write `file` to `--out` and print the ledger's total on stderr.
    pub fn write(&self, file: ModelFile) -> CliResult<ModelFile> {
        file.save(&self.out)?;
        match file.ledger.total() {
            Ok(t) => eprintln!(
                "wrote {} ({}; privacy spent ε = {}, δ = {} for {}{})",
                self.out.display(),
                file.method,
                dpfair_privacy::ledger::readable_up(t.epsilon),
                dpfair_privacy::ledger::readable_up(t.delta),
                file.ledger.relation().describe(),
                if !file.ledger.is_private() {
                    "; NOT PRIVATE: noise reproducible from the seed"
                } else if !file.ledger.is_certified() {
                    "; NOT certified: GDP approximation"
                } else {
                    ""
                }
            ),
            Err(e) => eprintln!(
                "wrote {} (ledger total unavailable: {e})",
                self.out.display()
            ),
        }
        Ok(file)
    }
}
