//! Empirical privacy auditing: high-confidence *lower* bounds on the ε a mechanism or a whole
//! training actually spends. A bound above the claimed ε proves a privacy defect (at the stated
//! confidence); a bound at or below it is evidence, never a proof of privacy.
//!
//! One auditor per file:
//!
//! * [`threshold`]: the two-sample auditor: many runs on two fixed neighbouring inputs, a
//!   threshold event picked on one half of the samples, Clopper–Pearson bounds on the other
//!   ([`audit`]).
//! * [`one_run`]: Steinke, Nasr & Jagielski (2023), *Privacy auditing with one (1) training run*:
//!   m canaries, each included by a fair coin, one training, guesses from canary scores, and
//!   their bound on the number of correct guesses under (ε, δ)-DP turned into an ε lower bound.
//! * [`local`]: the audits of the ε-LDP Laplace and Hadamard randomisers on a worst-case pair of inputs, projected
//!   on the pair's exact privacy-loss statistic (the most powerful event).
//! * [`search`]: a search over candidate neighbouring pairs for the one with the largest
//!   empirical privacy loss (in the spirit of DP-Auditorium's testers), confirmed on fresh samples.
//! * [`distribution`]: goodness-of-fit tests of a release path's noise against its claimed law
//!   (Kolmogorov–Smirnov, Pearson chi-square), with a power check against a wrong scale.
//!
//! What each audit of the project runs, its neighbours, its event and its power: the repository's
//! `docs/audits.md`.

pub mod distribution;
pub mod local;
pub mod one_run;
pub mod search;
pub mod threshold;

pub use threshold::{AuditReport, Event, audit, clopper_pearson, expected_lower_bound};
