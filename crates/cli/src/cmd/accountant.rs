//! `dpfair accountant`: privacy accounting from the command line.
//!
//! Three calculators over `dpfair_privacy::accounting`: ε of a DP-SGD run (`sgm`), the exact ε of
//! one Gaussian release (`gaussian`), and the noise a DP-SGD run needs for a target (ε, δ)
//! (`noise-multiplier`). Explanations go to stdout first; the result is alone on the last line.

use crate::cmd::common::{AccountantArg, RelationArg};
use crate::error::{CliError, CliResult};
use dpfair_privacy::accounting::{self, Accountant};
use dpfair_privacy::{PrivacyError, Relation};

const ABOUT: &str =
    "Privacy accounting: ε of DP-SGD or a Gaussian release, or the noise a target ε needs";

const AFTER_HELP: &str = "Accountants: rdp (certified, fast), prv (certified, tight), gdp (approximation). \
Run `dpfair accountant --help` for what each one is, when to use which, and the neighbouring relation.";

const LONG_ABOUT: &str = "\
The result is printed alone on the last line of stdout (explanations come before it).

DP-SGD here is the Poisson-subsampled Gaussian mechanism: at each of T steps every record joins the
batch independently with probability q (the sampling rate), per-example gradients are clipped to
norm C, and N(0, (z·C)²) noise is added to their sum; z is the noise multiplier.

Accountants (--accountant):
  rdp  Rényi DP, the \"moments accountant\" (Mironov, Talwar, Zhang 2019), converted to (ε, δ) as
       Opacus and Google's dp_accounting do. A proven upper bound; milliseconds. Typically 5-10%
       above the exact ε. The default, and what most papers report.
  prv  Privacy random variables (Gopi, Lee, Wutschitz 2021): the privacy-loss distribution is
       discretised and composed by FFT. A proven upper bound within about 0.2% of the exact ε (the
       lower/estimate/upper bracket is printed); tens to hundreds of milliseconds. Use it when ε
       matters: it buys the same ε with less noise than rdp.
  gdp  Gaussian DP central-limit approximation (Bu, Dong, Long, Su 2020): μ = q·√(T·(e^{1/z²} − 1)).
       NOT a guarantee: it can under-state ε when T is small or q large. Use it for quick
       estimates or to compare with papers that report it.

Neighbouring relation (--relation): the accountants are derived for add/remove-one neighbours (a
record present or absent), the convention of Opacus and dp_accounting, and this is the default so
that numbers match theirs. dpfair fits certify replace-one (substitution) neighbours by default; a
replacement moves the clipped sum by up to 2C, so `--relation substitution` evaluates the same
accountant at noise multiplier z/2 (and `noise-multiplier` returns twice the add/remove z).

Examples:
  dpfair accountant sgm --sampling-rate 0.01 --noise-multiplier 1.1 --steps 10000 --delta 1e-5
  dpfair accountant gaussian --noise-multiplier 1 --delta 1e-5
  dpfair accountant noise-multiplier --sampling-rate 0.034 --steps 1500 --epsilon 2.9 --delta 1e-5 --accountant prv";

#[derive(clap::Args)]
#[command(about = ABOUT, after_help = AFTER_HELP, after_long_help = LONG_ABOUT)]
pub struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(clap::Subcommand)]
enum Command {
    /// ε of a DP-SGD run (Poisson-subsampled Gaussian) at δ.
    Sgm(SgmArgs),
    /// Exact ε of one Gaussian release with noise multiplier z = σ/Δ₂ (analytic Gaussian, Balle & Wang 2018).
    #[command(
        long_about = "Exact ε at δ of one release f(D) + N(0, σ²) with ℓ2-sensitivity Δ, as a \
function of z = σ/Δ (analytic Gaussian mechanism, Balle & Wang 2018, Theorem 8). Valid for every ε, \
unlike the classical σ = Δ·√(2 ln(1.25/δ))/ε, which holds only for ε < 1. The relation is the one the \
sensitivity Δ was computed for."
    )]
    Gaussian(GaussianArgs),
    /// Smallest noise multiplier z for which a DP-SGD run meets (ε, δ) (like Opacus get_noise_multiplier).
    #[command(
        long_about = "Smallest noise multiplier z for which T steps of DP-SGD at sampling rate q are \
(ε, δ)-DP under the chosen accountant (like Opacus' get_noise_multiplier). The search brackets z and \
bisects to a relative tolerance of 1e-4, returning the upper end: the printed z meets the target."
    )]
    NoiseMultiplier(NoiseMultiplierArgs),
}

#[derive(clap::Args)]
struct SgmArgs {
    /// Poisson sampling rate q ∈ (0, 1] (expected batch size / data set size).
    #[arg(long, allow_negative_numbers = true)]
    sampling_rate: f64,
    /// Noise multiplier z > 0 (noise std / clipping norm).
    #[arg(long, allow_negative_numbers = true)]
    noise_multiplier: f64,
    /// Number of steps T ≥ 1.
    #[arg(long)]
    steps: u64,
    /// δ ∈ (0, 1).
    #[arg(long, allow_negative_numbers = true)]
    delta: f64,
    #[command(flatten)]
    accounting: SgmAccounting,
}

/// Which accountant converts a DP-SGD run, for which neighbours.
#[derive(clap::Args)]
struct SgmAccounting {
    /// The accountant: rdp (certified, fast), prv (certified, tight, slower) or gdp (a
    /// central-limit approximation, not a guarantee). See `dpfair accountant --help`.
    #[arg(long, value_enum, default_value_t = AccountantArg::Rdp)]
    accountant: AccountantArg,
    /// The neighbouring relation certified: add-remove (one record present or absent, as Opacus)
    /// or substitution (one record replaced: accounted at z/2).
    #[arg(long, value_enum, default_value_t = RelationArg::AddRemove)]
    relation: RelationArg,
}

#[derive(clap::Args)]
struct GaussianArgs {
    /// Noise multiplier z = σ/Δ₂ > 0.
    #[arg(long, allow_negative_numbers = true)]
    noise_multiplier: f64,
    /// δ ∈ (0, 1).
    #[arg(long, allow_negative_numbers = true)]
    delta: f64,
}

#[derive(clap::Args)]
struct NoiseMultiplierArgs {
    /// Poisson sampling rate q ∈ (0, 1].
    #[arg(long, allow_negative_numbers = true)]
    sampling_rate: f64,
    /// Number of steps T ≥ 1.
    #[arg(long)]
    steps: u64,
    /// Target ε > 0.
    #[arg(long, allow_negative_numbers = true)]
    epsilon: f64,
    /// δ ∈ (0, 1).
    #[arg(long, allow_negative_numbers = true)]
    delta: f64,
    #[command(flatten)]
    accounting: SgmAccounting,
}

pub fn run(args: Args) -> CliResult {
    let lines = match args.command {
        Command::Sgm(a) => sgm(a)?,
        Command::Gaussian(a) => gaussian(a)?,
        Command::NoiseMultiplier(a) => noise_multiplier(a)?,
    };
    for l in lines {
        println!("{l}");
    }
    Ok(())
}

fn check(ok: bool, flag: &str, domain: &str, value: impl std::fmt::Display) -> CliResult {
    if ok {
        Ok(())
    } else {
        Err(CliError::BadInput(format!(
            "{flag} must be {domain}, got {value}"
        )))
    }
}

fn check_q(q: f64) -> CliResult {
    check(q > 0.0 && q <= 1.0, "--sampling-rate", "in (0, 1]", q)
}
fn check_z(z: f64) -> CliResult {
    check(
        z > 0.0 && z.is_finite(),
        "--noise-multiplier",
        "finite and > 0",
        z,
    )
}
fn check_delta(d: f64) -> CliResult {
    check(d > 0.0 && d < 1.0, "--delta", "in (0, 1)", d)
}
fn check_steps(t: u64) -> CliResult {
    check(t >= 1, "--steps", "at least 1", t)
}
fn check_epsilon(e: f64) -> CliResult {
    check(e > 0.0 && e.is_finite(), "--epsilon", "finite and > 0", e)
}

/// Bad parameters are the user's; numerical failures are ours.
fn lift(e: PrivacyError) -> CliError {
    match e {
        PrivacyError::InvalidParameter { .. } => CliError::BadInput(e.to_string()),
        other => CliError::Internal(other.to_string()),
    }
}

/// Six decimals, or seven significant digits in scientific notation below 1e-3; rounded to
/// nearest (for the inputs echoed and the lower end of a bracket).
fn fmt(v: f64) -> String {
    if v != 0.0 && v.abs() < 1e-3 {
        format!("{v:.6e}")
    } else {
        format!("{v:.6}")
    }
}

/// [`fmt`] rounded **up** in its last digit, for every printed ε, δ, μ and noise multiplier: the
/// printed number, read back, is never below the bound (or the z that meets the target)
/// (OpenDP #2820; `docs/privacy.md#floating-point`).
fn fmt_up(v: f64) -> String {
    let mut s = fmt(v);
    if !v.is_finite() {
        return s;
    }
    // One unit of the last printed digit: 1e-6, or 10^(exponent − 6) in scientific notation.
    let unit = match s.split_once('e') {
        Some((_, e)) => 10f64.powi(e.parse::<i32>().unwrap_or(0) - 6),
        None => 1e-6,
    };
    while let Ok(p) = s.parse::<f64>()
        && p < v
    {
        s = fmt(p + unit);
    }
    s
}

fn describe(acc: Accountant) -> &'static str {
    match acc {
        Accountant::Rdp => {
            "RDP / moments accountant (Mironov, Talwar, Zhang 2019; Opacus / dp_accounting conversion): certified upper bound"
        }
        Accountant::Prv => {
            "PRV accountant (Gopi, Lee, Wutschitz 2021; FFT composition with error bounds): certified upper bound"
        }
        Accountant::Gdp => {
            "GDP central-limit accountant (Bu, Dong, Long, Su 2020): an APPROXIMATION, not a guarantee"
        }
    }
}

fn describe_relation(r: Relation, z: f64) -> String {
    match r {
        Relation::AddRemove => {
            "relation: add/remove one record, Poisson sampling (replace-one: --relation substitution)"
                .to_string()
        }
        Relation::Substitution => format!(
            "relation: replace one record (sensitivity 2C: add/remove accountant at z/2 = {})",
            fmt(accounting::sgm_effective_noise_multiplier(z, r))
        ),
    }
}

fn sgm(a: SgmArgs) -> CliResult<Vec<String>> {
    check_q(a.sampling_rate)?;
    check_z(a.noise_multiplier)?;
    check_steps(a.steps)?;
    check_delta(a.delta)?;
    let (acc, rel): (Accountant, Relation) =
        (a.accounting.accountant.into(), a.accounting.relation.into());
    let z_eff = accounting::sgm_effective_noise_multiplier(a.noise_multiplier, rel);
    let mut out = vec![
        format!("accountant: {}", describe(acc)),
        describe_relation(rel, a.noise_multiplier),
        format!(
            "q = {}, z = {}, T = {}, δ = {}",
            a.sampling_rate, a.noise_multiplier, a.steps, a.delta
        ),
    ];
    let eps = match acc {
        Accountant::Prv => {
            let b = accounting::sgm_prv_bounds(a.sampling_rate, z_eff, a.steps, a.delta)
                .map_err(lift)?;
            out.push(format!(
                "ε bracket: lower {}, estimate {}, upper {} (printed: upper)",
                fmt(b.lower),
                fmt(b.estimate),
                fmt_up(b.upper)
            ));
            b.upper
        }
        Accountant::Gdp => {
            let mu = accounting::gdp_mu(a.sampling_rate, z_eff, a.steps).map_err(lift)?;
            out.push(format!("μ = {}", fmt_up(mu)));
            accounting::sgm_epsilon(acc, a.sampling_rate, z_eff, a.steps, a.delta).map_err(lift)?
        }
        Accountant::Rdp => {
            accounting::sgm_epsilon(acc, a.sampling_rate, z_eff, a.steps, a.delta).map_err(lift)?
        }
    };
    out.push("ε:".into());
    out.push(fmt_up(eps));
    Ok(out)
}

fn gaussian(a: GaussianArgs) -> CliResult<Vec<String>> {
    check_z(a.noise_multiplier)?;
    check_delta(a.delta)?;
    let eps = accounting::analytic_gaussian_epsilon(a.noise_multiplier, a.delta).map_err(lift)?;
    Ok(vec![
        "analytic Gaussian (Balle & Wang 2018, Thm 8): exact ε of one release with z = σ/Δ₂".into(),
        format!("z = {}, δ = {}", a.noise_multiplier, a.delta),
        "ε:".into(),
        fmt_up(eps),
    ])
}

fn noise_multiplier(a: NoiseMultiplierArgs) -> CliResult<Vec<String>> {
    check_q(a.sampling_rate)?;
    check_steps(a.steps)?;
    check_epsilon(a.epsilon)?;
    check_delta(a.delta)?;
    let (acc, rel): (Accountant, Relation) =
        (a.accounting.accountant.into(), a.accounting.relation.into());
    let z_ar = accounting::sgm_noise_multiplier(acc, a.sampling_rate, a.steps, a.epsilon, a.delta)
        .map_err(lift)?;
    // Substitution is accounted at z/2, so it needs twice the add/remove multiplier.
    let z = match rel {
        Relation::AddRemove => z_ar,
        Relation::Substitution => 2.0 * z_ar,
    };
    let achieved = accounting::sgm_epsilon_for(rel, acc, a.sampling_rate, z, a.steps, a.delta)
        .map_err(lift)?;
    Ok(vec![
        format!("accountant: {}", describe(acc)),
        describe_relation(rel, z),
        format!(
            "q = {}, T = {}, target (ε, δ) = ({}, {}); relative tolerance on z {:e}",
            a.sampling_rate,
            a.steps,
            a.epsilon,
            a.delta,
            accounting::NOISE_MULTIPLIER_TOLERANCE
        ),
        format!("ε at the returned z: {}", fmt_up(achieved)),
        "noise multiplier z:".into(),
        fmt_up(z),
    ])
}
