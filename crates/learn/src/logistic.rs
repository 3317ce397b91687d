//! L2-regularised logistic regression, binary (sigmoid) and multinomial (softmax): the model type
//! every linear learner of this crate returns, and the non-private reference fit.
//!
//! Objective (the form of Say et al.'s Phase 1 output perturbation, with Λ exposed directly):
//!
//! F(W, b) = (1/n) Σ_i ℓ(W x_i + b; y_i) + (Λ/2) (‖W‖_F² + \[penalize_intercept\] ‖b‖²)
//!
//! with ℓ the logistic loss (binary: one score per row, class 1 iff score > 0) or the softmax
//! cross-entropy (K ≥ 3: one score per class). scikit-learn's `C` maps to Λ = 1/(C n)
//! ([`LogisticConfig::sklearn_c`]). The minimiser is found by a line-searched Newton-CG method
//! (Hessian-vector products only, so multinomial problems never form the (K d)² Hessian) to
//! ‖∇F‖_∞ ≤ `tol`.

use crate::error::{LearnError, Result};
use crate::linalg::{sigmoid, softmax_in_place, softplus};
use crate::validate::{
    check_classification, check_predict_input, check_two_classes, non_negative, positive,
};
use ndarray::{Array1, Array2, ArrayView2, Axis, s};
use serde::{Deserialize, Serialize};

/// A fitted linear classifier: `coef` has one row (binary: the score of class 1) or one row per
/// class (multinomial); prediction applies the optional row clipping of output perturbation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LogisticModel {
    /// Number of classes K ≥ 2.
    pub n_classes: usize,
    /// Coefficients: 1 × d (binary) or K × d (multinomial).
    pub coef: Array2<f64>,
    /// Intercepts: length 1 (binary) or K.
    pub intercept: Array1<f64>,
    /// When set to R, each input row x is mapped to φ(x) = s·[x; 1] with s = min(1, R/‖[x; 1]‖₂)
    /// before scoring, the bounded feature map of output perturbation (Say et al., Phase 1, output perturbation
    /// step 1); the intercept is the weight of φ's last coordinate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub row_clip: Option<f64>,
}

impl LogisticModel {
    /// Number of score rows: 1 for binary, K for multinomial.
    pub(crate) fn score_rows(n_classes: usize) -> usize {
        if n_classes == 2 { 1 } else { n_classes }
    }

    /// Builds a model from the flat parameter layout shared with DP-SGD and output perturbation:
    /// `score_rows` blocks of `[w (d values), b]`.
    pub(crate) fn from_params(
        n_classes: usize,
        d: usize,
        theta: &[f64],
        row_clip: Option<f64>,
    ) -> Self {
        let m = Self::score_rows(n_classes);
        debug_assert_eq!(theta.len(), m * (d + 1));
        let full = ArrayView2::from_shape((m, d + 1), theta).expect("layout m × (d+1)");
        LogisticModel {
            n_classes,
            coef: full.slice(s![.., ..d]).to_owned(),
            intercept: full.column(d).to_owned(),
            row_clip,
        }
    }

    /// The flat parameter vector (inverse of `from_params`).
    #[cfg(test)]
    pub(crate) fn to_params(&self) -> Vec<f64> {
        let mut out = Vec::with_capacity(self.coef.len() + self.intercept.len());
        for (row, b) in self.coef.rows().into_iter().zip(&self.intercept) {
            out.extend(row.iter());
            out.push(*b);
        }
        out
    }

    /// Number of input features d.
    pub fn n_features(&self) -> usize {
        self.coef.ncols()
    }

    /// Scores: n × 1 (binary: log-odds of class 1) or n × K.
    pub fn decision_function(&self, x: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
        check_predict_input(x, self.n_features())?;
        let mut z = x.dot(&self.coef.t());
        z += &self.intercept;
        let mut z = standard(z);
        if let Some(r) = self.row_clip {
            for (mut zi, xi) in z.rows_mut().into_iter().zip(x.rows()) {
                let norm = (xi.dot(&xi) + 1.0).sqrt();
                let scale = (r / norm).min(1.0);
                zi *= scale;
            }
        }
        Ok(z)
    }

    /// Class probabilities, n × K (binary: columns P(y = 0), P(y = 1)).
    pub fn predict_proba(&self, x: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
        let z = self.decision_function(x)?;
        Ok(scores_to_proba(z, self.n_classes))
    }

    /// Predicted classes: binary 1 iff P(y = 1) > 1/2 (strict, as the reference code of
    /// Ghoukasian & Asoodeh's DP-SGD base classifier); multinomial the most probable class (lowest index on ties).
    pub fn predict(&self, x: ArrayView2<'_, f64>) -> Result<Vec<u32>> {
        let z = self.decision_function(x)?;
        Ok(argmax_scores(&z))
    }
}

/// `a` in row-major layout (matrix products may return column-major results).
pub(crate) fn standard(a: Array2<f64>) -> Array2<f64> {
    if a.is_standard_layout() {
        a
    } else {
        a.as_standard_layout().into_owned()
    }
}

/// Turns scores (n × 1 binary or n × K) into n × K probabilities.
pub(crate) fn scores_to_proba(z: Array2<f64>, n_classes: usize) -> Array2<f64> {
    if n_classes == 2 && z.ncols() == 1 {
        let mut p = Array2::zeros((z.nrows(), 2));
        for (mut pi, zi) in p.rows_mut().into_iter().zip(z.column(0)) {
            let p1 = sigmoid(*zi);
            pi[0] = 1.0 - p1;
            pi[1] = p1;
        }
        p
    } else {
        let mut z = standard(z);
        for mut row in z.rows_mut() {
            softmax_in_place(row.as_slice_mut().expect("standard layout"));
        }
        z
    }
}

/// Class decisions from scores: binary score > 0, else the first maximal score.
pub(crate) fn argmax_scores(z: &Array2<f64>) -> Vec<u32> {
    if z.ncols() == 1 {
        return z.column(0).iter().map(|&v| u32::from(v > 0.0)).collect();
    }
    z.rows()
        .into_iter()
        .map(|r| {
            let mut best = 0;
            for (k, &v) in r.iter().enumerate() {
                if v > r[best] {
                    best = k;
                }
            }
            best as u32
        })
        .collect()
}

/// Hyperparameters of the non-private reference fit.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LogisticConfig {
    /// Λ ≥ 0, the L2 strength per sample (objective in the module doc). Default 1e-4.
    pub l2: f64,
    /// Fit an intercept. Default true.
    pub fit_intercept: bool,
    /// Include the intercept in the penalty (needed for strong convexity in output
    /// perturbation; scikit-learn does not). Default false.
    pub penalize_intercept: bool,
    /// Stop when ‖∇F‖_∞ ≤ tol. Default 1e-10.
    pub tol: f64,
    /// Newton iterations before giving up with [`LearnError::NotConverged`]. Default 100.
    pub max_iter: usize,
}

impl Default for LogisticConfig {
    fn default() -> Self {
        LogisticConfig {
            l2: 1e-4,
            fit_intercept: true,
            penalize_intercept: false,
            tol: 1e-10,
            max_iter: 100,
        }
    }
}

impl LogisticConfig {
    /// scikit-learn's convention `½‖w‖² + C Σ_i loss_i` on `n` rows: Λ = 1/(C n) (Say et al., Phase 1).
    pub fn sklearn_c(c: f64, n: usize) -> Result<Self> {
        positive("C", c)?;
        Ok(LogisticConfig {
            l2: 1.0 / (c * n.max(1) as f64),
            ..Default::default()
        })
    }

    fn validate(&self) -> Result<()> {
        non_negative("l2", self.l2)?;
        positive("tol", self.tol)?;
        crate::validate::at_least("max_iter", self.max_iter, 1)
    }
}

/// Fits L2-regularised logistic regression (binary if `n_classes == 2`, else multinomial) to
/// ‖∇F‖_∞ ≤ `cfg.tol`. Labels are class codes `0..n_classes`.
pub fn fit_logistic(
    cfg: &LogisticConfig,
    x: ArrayView2<'_, f64>,
    y: &[u32],
    n_classes: usize,
) -> Result<LogisticModel> {
    cfg.validate()?;
    check_classification(x, y, n_classes, "logistic regression")?;
    check_two_classes(y, "logistic regression")?;
    let problem = Problem {
        x,
        y,
        m: LogisticModel::score_rows(n_classes),
        l2: cfg.l2,
        fit_intercept: cfg.fit_intercept,
        penalize_intercept: cfg.penalize_intercept,
    };
    let theta = newton_cg(&problem, cfg.tol, cfg.max_iter)?;
    Ok(LogisticModel::from_params(
        n_classes,
        x.ncols(),
        &theta,
        None,
    ))
}

/// The regularised empirical risk F of the module doc, on the flat layout `m` blocks of
/// `[w (d), b]`.
pub(crate) struct Problem<'a> {
    pub x: ArrayView2<'a, f64>,
    pub y: &'a [u32],
    /// Score rows: 1 (binary) or K.
    pub m: usize,
    pub l2: f64,
    pub fit_intercept: bool,
    pub penalize_intercept: bool,
}

/// What a Hessian-vector product needs from the last gradient evaluation: the probabilities.
pub(crate) struct Curvature {
    p: Array2<f64>,
}

impl Problem<'_> {
    fn d(&self) -> usize {
        self.x.ncols()
    }

    pub(crate) fn dim(&self) -> usize {
        self.m * (self.d() + 1)
    }

    /// Scores Z = X Wᵀ + b, n × m.
    fn scores(&self, theta: &[f64]) -> Array2<f64> {
        let d = self.d();
        let t = ArrayView2::from_shape((self.m, d + 1), theta).expect("layout");
        let mut z = self.x.dot(&t.slice(s![.., ..d]).t());
        if self.fit_intercept {
            z += &t.column(d);
        }
        standard(z)
    }

    fn penalty_mask(&self, j: usize) -> f64 {
        let is_b = j % (self.d() + 1) == self.d();
        if !is_b || self.penalize_intercept {
            1.0
        } else {
            0.0
        }
    }

    /// F(θ) alone (line search).
    pub(crate) fn value(&self, theta: &[f64]) -> f64 {
        let z = self.scores(theta);
        let n = self.x.nrows() as f64;
        let mut loss = CompensatedSum::default();
        for (zi, &yi) in z.rows().into_iter().zip(self.y) {
            loss.add(if self.m == 1 {
                softplus(zi[0]) - f64::from(yi) * zi[0]
            } else {
                let mut v = zi.to_vec();
                softmax_in_place(&mut v) - zi[yi as usize]
            });
        }
        loss.total() / n + self.penalty(theta)
    }

    fn penalty(&self, theta: &[f64]) -> f64 {
        0.5 * self.l2
            * theta
                .iter()
                .enumerate()
                .map(|(j, t)| self.penalty_mask(j) * t * t)
                .sum::<f64>()
    }

    /// F(θ), ∇F(θ) and the curvature data for Hessian-vector products.
    pub(crate) fn value_grad(&self, theta: &[f64]) -> (f64, Vec<f64>, Curvature) {
        let mut p = self.scores(theta);
        let n = self.x.nrows() as f64;
        let mut loss = CompensatedSum::default();
        // r = p − onehot(y), written over p's copy.
        let mut r = Array2::zeros(p.raw_dim());
        for ((mut pi, mut ri), &yi) in p.rows_mut().into_iter().zip(r.rows_mut()).zip(self.y) {
            if self.m == 1 {
                let z = pi[0];
                loss.add(softplus(z) - f64::from(yi) * z);
                pi[0] = sigmoid(z);
                ri[0] = pi[0] - f64::from(yi);
            } else {
                let zy = pi[yi as usize];
                let lse = softmax_in_place(pi.as_slice_mut().expect("standard layout"));
                loss.add(lse - zy);
                ri.assign(&pi);
                ri[yi as usize] -= 1.0;
            }
        }
        let grad = self.backprop(&r, theta);
        (
            loss.total() / n + self.penalty(theta),
            grad,
            Curvature { p },
        )
    }

    /// (1/n)[Rᵀ X, Σ_i R_i] + Λ·mask⊙θ on the flat layout.
    fn backprop(&self, r: &Array2<f64>, theta: &[f64]) -> Vec<f64> {
        let d = self.d();
        let n = self.x.nrows() as f64;
        let gw = r.t().dot(&self.x);
        let gb = r.sum_axis(Axis(0));
        let mut g = vec![0.0; self.dim()];
        for k in 0..self.m {
            for j in 0..d {
                g[k * (d + 1) + j] = gw[[k, j]] / n;
            }
            if self.fit_intercept {
                g[k * (d + 1) + d] = gb[k] / n;
            }
        }
        for (j, gj) in g.iter_mut().enumerate() {
            *gj += self.l2 * self.penalty_mask(j) * theta[j];
        }
        g
    }

    /// ∇²F(θ) v, from the probabilities of the last gradient evaluation.
    pub(crate) fn hess_vec(&self, c: &Curvature, v: &[f64]) -> Vec<f64> {
        let mut u = self.scores(v); // X Vᵀ + v_b: the directional derivative of the scores
        for (mut ui, pi) in u.rows_mut().into_iter().zip(c.p.rows()) {
            if self.m == 1 {
                ui[0] *= pi[0] * (1.0 - pi[0]);
            } else {
                let pu = pi.dot(&ui);
                for k in 0..self.m {
                    ui[k] = pi[k] * (ui[k] - pu);
                }
            }
        }
        self.backprop(&u, v)
    }
}

/// Neumaier's compensated sum: its error is a few ulps of the total whatever the number of
/// terms. The line search compares losses that differ by roundoff-sized amounts near the
/// optimum; a plain running sum over millions of rows has an error growing with n, which made
/// Armijo's test fail by noise and the solver backtrack for many iterations (at 5M rows).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct CompensatedSum {
    sum: f64,
    carry: f64,
}

impl CompensatedSum {
    pub(crate) fn add(&mut self, x: f64) {
        let t = self.sum + x;
        self.carry += if self.sum.abs() >= x.abs() {
            (self.sum - t) + x
        } else {
            (x - t) + self.sum
        };
        self.sum = t;
    }

    pub(crate) fn total(self) -> f64 {
        self.sum + self.carry
    }
}

/// Line-searched Newton-CG (Nocedal & Wright, Algorithm 7.1) from θ = 0: the inexact Newton
/// direction solves ∇²F p = −∇F by conjugate gradients to a relative residual
/// min(1/2, √‖∇F‖), then Armijo backtracking (with a few ulps of slack so that the last,
/// roundoff-sized decreases are accepted).
pub(crate) fn newton_cg(problem: &Problem<'_>, tol: f64, max_iter: usize) -> Result<Vec<f64>> {
    let dim = problem.dim();
    let mut theta = vec![0.0; dim];
    let (mut f, mut g, mut curv) = problem.value_grad(&theta);
    let mut gnorm = inf_norm(&g);
    for _ in 0..max_iter {
        if gnorm <= tol {
            return Ok(theta);
        }
        let g2 = g.iter().map(|v| v * v).sum::<f64>().sqrt();
        let forcing = g2.sqrt().min(0.5) * g2;
        let p = conjugate_gradient(|v| problem.hess_vec(&curv, v), &g, forcing, 2 * dim + 10);
        let slope: f64 = g.iter().zip(&p).map(|(a, b)| a * b).sum();
        let slack = 64.0 * f64::EPSILON * f.abs().max(1.0);
        let mut alpha = 1.0;
        let mut next = None;
        while alpha > 1e-12 {
            let cand: Vec<f64> = theta.iter().zip(&p).map(|(t, pj)| t + alpha * pj).collect();
            let fc = problem.value(&cand);
            if fc <= f + 1e-4 * alpha * slope + slack {
                next = Some(cand);
                break;
            }
            alpha *= 0.5;
        }
        let Some(cand) = next else { break };
        theta = cand;
        (f, g, curv) = problem.value_grad(&theta);
        gnorm = inf_norm(&g);
    }
    if gnorm <= tol {
        return Ok(theta);
    }
    Err(LearnError::NotConverged {
        solver: "Newton-CG (logistic regression)",
        iterations: max_iter,
        grad_norm: gnorm,
        tol,
    })
}

fn inf_norm(v: &[f64]) -> f64 {
    v.iter().fold(0.0, |m, x| m.max(x.abs()))
}

/// Solves H p = −g by conjugate gradients (H symmetric positive semi-definite; stops on a
/// residual below `tol`, on non-positive curvature, or after `max_iter` products).
fn conjugate_gradient(
    hv: impl Fn(&[f64]) -> Vec<f64>,
    g: &[f64],
    tol: f64,
    max_iter: usize,
) -> Vec<f64> {
    let mut p = vec![0.0; g.len()];
    let mut r: Vec<f64> = g.iter().map(|v| -v).collect();
    let mut dir = r.clone();
    let mut rr: f64 = r.iter().map(|v| v * v).sum();
    for _ in 0..max_iter {
        if rr.sqrt() <= tol {
            break;
        }
        let hd = hv(&dir);
        let curv: f64 = dir.iter().zip(&hd).map(|(a, b)| a * b).sum();
        if curv <= 0.0 {
            if p.iter().all(|v| *v == 0.0) {
                p.clone_from(&r);
            }
            break;
        }
        let a = rr / curv;
        for i in 0..p.len() {
            p[i] += a * dir[i];
            r[i] -= a * hd[i];
        }
        let rr_new: f64 = r.iter().map(|v| v * v).sum();
        let beta = rr_new / rr;
        rr = rr_new;
        for i in 0..dir.len() {
            dir[i] = r[i] + beta * dir[i];
        }
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{blobs, fd_grad};

    fn problem<'a>(x: ArrayView2<'a, f64>, y: &'a [u32], m: usize, pen_b: bool) -> Problem<'a> {
        Problem {
            x,
            y,
            m,
            l2: 0.05,
            fit_intercept: true,
            penalize_intercept: pen_b,
        }
    }

    #[test]
    fn compensated_sum_is_exact_where_a_running_sum_is_not() {
        // 1 + 10⁷ × 1e-16: a running sum stays at 1 (each term is below half an ulp of 1);
        // the exact total is 1 + 1e-9.
        let mut s = CompensatedSum::default();
        let mut naive = 0.0;
        s.add(1.0);
        naive += 1.0;
        for _ in 0..10_000_000 {
            s.add(1e-16);
            naive += 1e-16;
        }
        assert_eq!(naive, 1.0);
        assert!(
            (s.total() - (1.0 + 1e-9)).abs() <= 4.0 * f64::EPSILON,
            "{}",
            s.total()
        );
    }

    #[test]
    fn gradient_and_hessian_match_finite_differences() {
        for k in [2usize, 4] {
            let (x, y) = blobs(60, 3, k, 1.0, 11);
            let pr = problem(x.view(), &y, LogisticModel::score_rows(k), k == 4);
            let theta: Vec<f64> = (0..pr.dim())
                .map(|j| 0.3 * ((j as f64) * 1.7).sin())
                .collect();
            let (_, g, curv) = pr.value_grad(&theta);
            let fd = fd_grad(|t| pr.value(t), &theta, 1e-6);
            // Central differences: error O(h²·F''') ≈ 1e-12, far below 1e-7.
            for (a, b) in g.iter().zip(&fd) {
                assert!((a - b).abs() < 1e-7, "k={k}: {a} vs {b}");
            }
            // Hessian-vector product against differences of the analytic gradient.
            let v: Vec<f64> = (0..pr.dim()).map(|j| ((j as f64) * 0.9).cos()).collect();
            let hv = pr.hess_vec(&curv, &v);
            let h = 1e-6;
            let plus: Vec<f64> = theta.iter().zip(&v).map(|(t, v)| t + h * v).collect();
            let minus: Vec<f64> = theta.iter().zip(&v).map(|(t, v)| t - h * v).collect();
            let (gp, gm) = (pr.value_grad(&plus).1, pr.value_grad(&minus).1);
            for j in 0..pr.dim() {
                let fdj = (gp[j] - gm[j]) / (2.0 * h);
                assert!(
                    (hv[j] - fdj).abs() < 1e-7,
                    "k={k} j={j}: {} vs {fdj}",
                    hv[j]
                );
            }
        }
    }

    #[test]
    fn intercept_only_matches_closed_form() {
        // With no penalty on b and w ≡ 0 forced by the data (one constant zero feature), the
        // optimum has sigmoid(b) = mean(y): b = logit(7/20).
        let x = Array2::zeros((20, 1));
        let y: Vec<u32> = (0..20).map(|i| u32::from(i < 7)).collect();
        let m = fit_logistic(&LogisticConfig::default(), x.view(), &y, 2).unwrap();
        let want = (7.0f64 / 13.0).ln();
        assert!((m.intercept[0] - want).abs() < 1e-9, "{}", m.intercept[0]);
        // Multinomial: softmax(b) = class frequencies (b is identified up to a constant; the
        // iterates stay orthogonal to it, see `conjugate_gradient`).
        let y: Vec<u32> = (0..20).map(|i| (i % 5).min(2) as u32).collect(); // 4, 4, 12
        let m = fit_logistic(&LogisticConfig::default(), x.view(), &y, 3).unwrap();
        let p = m.predict_proba(x.view()).unwrap();
        for (c, want) in [(0, 0.2), (1, 0.2), (2, 0.6)] {
            assert!((p[[0, c]] - want).abs() < 1e-9);
        }
    }

    #[test]
    fn one_feature_problem_matches_bisection() {
        // No intercept, one feature: the optimum solves the scalar equation
        // F'(w) = (1/n) Σ (σ(w x_i) − y_i) x_i + Λ w = 0; F' is increasing, so bisection on it
        // to machine precision is an independent high-precision reference.
        let xs = [-2.0, -1.0, -0.5, 0.2, 0.4, 1.0, 1.5, -0.3, 2.5, 0.9];
        let ys = [0u32, 0, 1, 0, 1, 1, 1, 0, 0, 1];
        let l2 = 0.1;
        let dfdw = |w: f64| {
            xs.iter()
                .zip(&ys)
                .map(|(x, y)| (sigmoid(w * x) - f64::from(*y)) * x)
                .sum::<f64>()
                / xs.len() as f64
                + l2 * w
        };
        let (mut lo, mut hi) = (-50.0, 50.0);
        for _ in 0..200 {
            let mid = 0.5 * (lo + hi);
            if dfdw(mid) > 0.0 { hi = mid } else { lo = mid }
        }
        let x = Array2::from_shape_vec((10, 1), xs.to_vec()).unwrap();
        let cfg = LogisticConfig {
            l2,
            fit_intercept: false,
            tol: 1e-13,
            ..Default::default()
        };
        let m = fit_logistic(&cfg, x.view(), &ys, 2).unwrap();
        assert!((m.coef[[0, 0]] - 0.5 * (lo + hi)).abs() < 1e-11);
        assert_eq!(m.intercept[0], 0.0);
    }

    #[test]
    fn fit_is_stationary_and_predicts_well_separated_blobs() {
        let (x, y) = blobs(300, 4, 3, 4.0, 5);
        let cfg = LogisticConfig {
            l2: 1e-3,
            ..Default::default()
        };
        let m = fit_logistic(&cfg, x.view(), &y, 3).unwrap();
        let pr = problem(x.view(), &y, 3, false);
        let pr = Problem { l2: 1e-3, ..pr };
        let (_, g, _) = pr.value_grad(&m.to_params());
        assert!(inf_norm(&g) <= 1e-10);
        let acc = m
            .predict(x.view())
            .unwrap()
            .iter()
            .zip(&y)
            .filter(|(a, b)| a == b)
            .count();
        // Centres 4 standard deviations apart: the Bayes error is below 3%.
        assert!(acc as f64 / 300.0 > 0.93, "{acc}");
        let p = m.predict_proba(x.view()).unwrap();
        assert!(p.rows().into_iter().all(|r| (r.sum() - 1.0).abs() < 1e-12));
    }

    #[test]
    fn bad_input_is_refused() {
        let (x, y) = blobs(10, 2, 2, 1.0, 1);
        let cfg = LogisticConfig {
            l2: -1.0,
            ..Default::default()
        };
        assert!(matches!(
            fit_logistic(&cfg, x.view(), &y, 2),
            Err(LearnError::InvalidParameter { name: "l2", .. })
        ));
        assert!(matches!(
            fit_logistic(&LogisticConfig::default(), x.view(), &[0; 10], 2),
            Err(LearnError::SingleClass { .. })
        ));
        // Too few iterations for the tolerance: reported, not returned silently.
        let x = ndarray::array![[-1.0], [1.0]];
        let cfg = LogisticConfig {
            l2: 0.0,
            max_iter: 2,
            ..Default::default()
        };
        assert!(matches!(
            fit_logistic(&cfg, x.view(), &[0, 1], 2),
            Err(LearnError::NotConverged { .. })
        ));
        let m = fit_logistic(&LogisticConfig::default(), x.view(), &[0, 1], 2).unwrap();
        assert!(m.predict(ndarray::array![[1.0, 2.0]].view()).is_err());
    }
}
