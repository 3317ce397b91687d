//! Options shared by `dpfair fit fdp-fair` and `dpfair federated`: the public basis every site
//! uses, the server's round-1 choices (depth, weights) and its round-2 threshold search.

use dpfair::fdp_fair::correction::Clip;
use dpfair::fdp_fair::protocol::DEFAULT_BASIS_SEED;
use dpfair::fdp_fair::{DepthRule, Monotoniser, SearchConfig, ServerParams, Weights};

/// The public random-feature basis the sites release their estimators in (all sites must agree).
#[derive(clap::Args, Clone, Debug)]
pub struct BasisArgs {
    /// Kernel bandwidth h on the [0, 1]-scaled features; every site must use the same value
    /// [default: `federated site`: the public rule max(n^{−1/(2+d)}, (nε)^{−1/(1+d)}) on the
    /// site's training size n = ⌈N_s/2⌉; `fit fdp-fair`: the federation's rule
    /// max((Σ n_s)^{−1/(2+d)}, (Σ n_s²ε_s²)^{−1/(2+2d)}); both rounded to 0.01].
    #[arg(long, value_name = "H")]
    pub bandwidth: Option<f64>,
    /// Random Fourier frequencies D of the public basis.
    #[arg(long, value_name = "D", default_value_t = dpfair::cdp_fair::DEFAULT_FREQUENCIES)]
    pub frequencies: usize,
    /// Seed of the public basis (the same at every site).
    #[arg(long, value_name = "N", default_value_t = DEFAULT_BASIS_SEED)]
    pub basis_seed: u64,
    #[command(flatten)]
    pub eta: EtaModelArgs,
}

/// `--eta-model`: the estimator of η_a(x) = P(Y=1 | X=x, A=a) in the plug-in (CDP-Fair, FDP-Fair).
#[derive(clap::Args, Clone, Debug)]
pub struct EtaModelArgs {
    /// Estimator of η_a(x) = P(Y=1 | X=x, A=a): `kernel` (the paper's kernel ratio on the
    /// training half), `logistic` (output-perturbed logistic regression with the group as a
    /// feature, released jointly with π̃ at the same (ε, δ); strict accounting only; in the file
    /// protocol each site releases its weights and the server averages them), `dp-sgd` (DP-SGD
    /// logistic regression with the group as a feature: CDP-Fair on all rows, then π̃ and τ̃ on
    /// all rows, sequential composition; an FDP-Fair site on its training half, beside π̃ from a
    /// Laplace count, and the server averages the weights), or `auto`: CDP-Fair `dp-sgd`; FDP-Fair
    /// the kernel for at most 3 feature columns after one-hot encoding, the logistic plug-in
    /// above; the kernel with --accounting paper (public rules: the column count, never the
    /// data). See docs/choosing.md.
    #[arg(long, value_enum, default_value_t = EtaModelArg::Auto)]
    pub eta_model: EtaModelArg,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum EtaModelArg {
    Kernel,
    Logistic,
    DpSgd,
    Auto,
}

impl From<EtaModelArg> for dpfair::plugin::EtaModel {
    fn from(e: EtaModelArg) -> Self {
        match e {
            EtaModelArg::Kernel => dpfair::plugin::EtaModel::Kernel,
            EtaModelArg::Logistic => dpfair::plugin::EtaModel::Logistic,
            EtaModelArg::DpSgd => dpfair::plugin::EtaModel::DpSgd,
            EtaModelArg::Auto => dpfair::plugin::EtaModel::Auto,
        }
    }
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum DepthRuleArg {
    /// The authors' code: min(max(⌊log2 Σ_s min(N_s, N_s²ε_s²)⌋, 1), 6).
    Code,
    /// The paper's §5.1.2 rule: max(⌊log2 Σ_s min(N_s, N_s²ε_s²)⌋ + 1, 6) (13–14 at N_s = 2000).
    Paper,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum WeightsArg {
    /// Eq. (8)–(9): ν_s ∝ N_s ∧ N_s²ε_s²h^d, μ_s ∝ N_s ∧ N_s²ε_s² (1/S for equal sites).
    Paper,
    /// ν_s = μ_s = 1/S.
    Equal,
}

/// The server's round-1 choices.
#[derive(clap::Args, Clone, Debug)]
pub struct ServerArgs {
    /// Tree depth M of Algorithm 2 (2^M leaves over [−1, 1]) [default: from --depth-rule].
    #[arg(long, value_name = "M")]
    pub depth: Option<usize>,
    /// Rule for M when --depth is not given.
    #[arg(long, value_enum, default_value_t = DepthRuleArg::Code)]
    pub depth_rule: DepthRuleArg,
    /// Site weights ν_s (estimators) and μ_s (disparity curve).
    #[arg(long, value_enum, default_value_t = WeightsArg::Paper)]
    pub weights: WeightsArg,
}

impl ServerArgs {
    pub fn params(&self) -> ServerParams {
        ServerParams {
            depth: match (self.depth, self.depth_rule) {
                (Some(depth), _) => DepthRule::Fixed { depth },
                (None, DepthRuleArg::Code) => DepthRule::Code,
                (None, DepthRuleArg::Paper) => DepthRule::Paper,
            },
            weights: match self.weights {
                WeightsArg::Paper => Weights::Paper,
                WeightsArg::Equal => Weights::Equal,
            },
            ..ServerParams::default()
        }
    }
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum BandArg {
    Inside,
    Centred,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum StraddleArg {
    Randomise,
    Interpolate,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum MonotoniserArg {
    /// Algorithm 6 (the paper's experiments).
    Numerical,
    /// Algorithm 4; falls back to Algorithm 6 when it returns NULL.
    Theory,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClipArg {
    /// [−1, 1], the range of the disparity (strict default).
    Symmetric,
    /// [0, 1] as printed in Algorithm 6 (paper default; leaves negative disparities unmonotonised).
    Paper,
}

/// The server's threshold search (Algorithm 2 S2–S3).
#[derive(clap::Args, Clone, Debug)]
pub struct SearchArgs {
    /// Disparity level α ≥ 0: the classifier keeps |P(Ŷ=1 | A=1) − P(Ŷ=1 | A=0)| ≤ α (up to ρ*).
    #[arg(
        long,
        value_name = "A",
        default_value_t = 0.1,
        allow_hyphen_values = true
    )]
    pub alpha: f64,
    /// Half-width ρ* of the band the threshold is chosen in: |D̃D(τ)| ∈ [α − 2b, α] with
    /// b = min(ρ*, α) (--band inside, default), or [α − ρ*, α + ρ*] (--band centred, the paper).
    #[arg(long, value_name = "R", default_value_t = 0.03)]
    pub rho_star: f64,
    /// Where the selection band lies: `inside` the target (the released estimate of |DD| at τ̃
    /// is at most α), or `centred` on α as in the paper (it may exceed α by ρ*).
    #[arg(long, value_enum, default_value_t = BandArg::Inside)]
    pub band: BandArg,
    /// Noise margin z ≥ 0: the threshold is chosen so that the server's estimate of |DD| plus z
    /// of its standard deviations (from the trees' public noise scale and the released counts)
    /// is within α; 1.645 is a one-sided 95% bound, 0 the paper's selection.
    #[arg(
        long,
        value_name = "Z",
        default_value_t = dpfair::estimators::DEFAULT_MARGIN_Z,
        allow_hyphen_values = true
    )]
    pub margin_z: f64,
    /// Where no grid point lies in the band: mix the two straddling grid points' thresholds at
    /// random, so that the mixture's estimated disparity is on the band's centre (`randomise`),
    /// or interpolate τ̃ between them as the paper (`interpolate`; the disparity between grid
    /// points is not estimated, and where a small group's scores fill few leaves it can be far
    /// off).
    #[arg(long, value_enum, default_value_t = StraddleArg::Randomise)]
    pub straddle: StraddleArg,
    /// Clip each site's noisy tail counts to [0, N] before dividing (the authors' code). Off by
    /// default: the clipping biases the disparity estimate where a group's scores lie all on one
    /// side of τ (docs/deviations.md, `fdp-fair-unclipped-tails`).
    #[arg(long)]
    pub clip_tails: bool,
    /// C_ω of the monotone correction's tolerance ω.
    #[arg(long, value_name = "C", default_value_t = 0.1)]
    pub c_omega: f64,
    /// η_tol inside ω.
    #[arg(long, value_name = "T", default_value_t = 0.01)]
    pub eta_tol: f64,
    /// Monotone correction of the noisy disparity curve.
    #[arg(long, value_enum, default_value_t = MonotoniserArg::Numerical)]
    pub monotoniser: MonotoniserArg,
    /// Clipping range of Algorithm 6 [default: symmetric (strict), paper (--accounting paper)].
    #[arg(long, value_enum)]
    pub clip: Option<ClipArg>,
    /// Accept τ̃ = 0 when |D̃D(0)| ≤ α + ρ* (the authors' code) instead of ≤ α (the paper).
    #[arg(long)]
    pub zero_within_band: bool,
}

impl SearchArgs {
    pub fn config(&self) -> SearchConfig {
        SearchConfig {
            alpha: self.alpha,
            rho_star: self.rho_star,
            c_omega: self.c_omega,
            eta_tol: self.eta_tol,
            monotoniser: match self.monotoniser {
                MonotoniserArg::Numerical => Monotoniser::Numerical,
                MonotoniserArg::Theory => Monotoniser::Theory,
            },
            clip: self.clip.map(|c| match c {
                ClipArg::Symmetric => Clip::Symmetric,
                ClipArg::Paper => Clip::Paper,
            }),
            zero_within_band: self.zero_within_band,
            band_inside: self.band == BandArg::Inside,
            margin_z: self.margin_z,
            randomise_straddle: self.straddle == StraddleArg::Randomise,
            clip_tails: self.clip_tails,
        }
    }
}
