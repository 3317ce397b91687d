//! [`Session`]: one privacy budget, one ledger and one source of randomness for several fits.
//!
//! Every fit through the library API ([`crate::Estimator::fit`]) runs in a session. Before a fit
//! touches its data the session checks that the fit's declared spend ([`Spend`]) fits in what is
//! left of the budget, under basic composition (a bound no composition rule exceeds); a fit that
//! would overspend is refused with [`Error::BudgetExceeded`] and no noise is drawn. The fit's own
//! releases go into a fresh ledger (saved in its model file) and then into the session's ledger,
//! so [`Session::ledger`] composes every fit made in it (also those that failed half-way: a
//! release made is a release paid for).
//!
//! Release noise comes from the operating system's CSPRNG ([`Session::new`]);
//! [`Session::insecure_seeded`] is for tests and simulations only, and its ledgers say "NOT
//! PRIVATE". See `docs/privacy.md` for the ledger's composition rules.

use crate::error::{Error, Result};
use dpfair_privacy::ledger::readable;
use dpfair_privacy::{Budget, Ledger, Noise, Relation};

/// What one fit will spend, declared before it reads data.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Spend {
    /// ε of the fit; `f64::INFINITY` for a non-private reference or a paper procedure whose real
    /// cost is recorded, not bounded (only allowed in an unlimited session).
    pub epsilon: f64,
    /// δ of the fit (0 for pure DP).
    pub delta: f64,
    /// The neighbouring relation the fit certifies.
    pub relation: Relation,
}

impl Spend {
    /// The spend restated for a ledger certifying `relation`: an add/remove-one `(ε, δ)` is a
    /// replace-one `(2ε, (1 + e^ε)δ)` (group privacy for two changes); the reverse is refused.
    pub fn for_relation(self, relation: Relation) -> Result<Spend> {
        match (self.relation, relation) {
            (a, b) if a == b => Ok(self),
            (Relation::AddRemove, Relation::Substitution) => Ok(Spend {
                epsilon: 2.0 * self.epsilon,
                delta: ((1.0 + self.epsilon.exp()) * self.delta).min(1.0),
                relation,
            }),
            (from, to) => Err(Error::invalid(
                "relation",
                format!(
                    "the fit certifies {}, which does not imply the session's {}",
                    from.describe(),
                    to.describe()
                ),
            )),
        }
    }
}

/// A privacy budget, the ledger of every release made against it, and the randomness.
///
/// ```
/// use dpfair::Session;
/// let session = Session::new(2.0, 1e-5)?;
/// assert_eq!(session.remaining().0, 2.0);
/// # Ok::<(), dpfair::Error>(())
/// ```
pub struct Session {
    ledger: Ledger,
    noise: Noise,
}

impl Session {
    /// A session with budget `(epsilon, delta)` certifying replace-one neighbours (dpfair's
    /// default relation), release noise from the operating system.
    pub fn new(epsilon: f64, delta: f64) -> Result<Session> {
        Self::with_relation(epsilon, delta, Relation::Substitution)
    }

    /// A session certifying `relation` (fits certifying add/remove-one neighbours are restated
    /// for a replace-one session; the reverse is refused).
    pub fn with_relation(epsilon: f64, delta: f64, relation: Relation) -> Result<Session> {
        Ok(Session {
            ledger: Ledger::for_relation(Budget::approx(epsilon, delta)?, relation),
            noise: Noise::os(),
        })
    }

    /// A session without a budget limit: for non-private references and for running a paper's
    /// procedure whose ledger records what it really spends (`ε = ∞` where it is not private).
    pub fn unlimited() -> Session {
        Session {
            ledger: Ledger::unlimited(),
            noise: Noise::os(),
        }
    }

    /// Replace the source of randomness: e.g. [`Noise::os_with_public_seed`] to make the public
    /// choices (splits, random bases) reproducible while the release noise stays private.
    pub fn with_noise(mut self, noise: Noise) -> Session {
        self.noise = noise;
        self
    }

    /// **Not private**: release noise reproducible from `seed`, for tests and simulations. The
    /// ledgers of its fits record the seeded source and say "NOT PRIVATE".
    pub fn insecure_seeded(epsilon: f64, delta: f64, seed: u64) -> Result<Session> {
        Ok(Self::new(epsilon, delta)?.with_noise(Noise::seeded(seed)))
    }

    /// The session's ledger: every release of every fit made in it.
    pub fn ledger(&self) -> &Ledger {
        &self.ledger
    }

    /// The randomness (for randomized predictors and public choices).
    pub fn noise(&mut self) -> &mut Noise {
        &mut self.noise
    }

    /// `(ε, δ)` left under basic composition of what has been spent.
    pub fn remaining(&self) -> (f64, f64) {
        let b = self.ledger.budget();
        match self.ledger.total() {
            Ok(t) => (
                (b.epsilon - t.epsilon).max(0.0),
                (b.delta - t.delta).max(0.0),
            ),
            Err(_) => (0.0, 0.0),
        }
    }

    /// Refuse `spend` if it does not fit in what is left (module docs); returns the spend
    /// restated for the session's relation.
    pub fn check_spend(&self, spend: Spend) -> Result<Spend> {
        let spend = spend.for_relation(self.ledger.relation())?;
        let budget = self.ledger.budget();
        if budget.epsilon == f64::INFINITY {
            return Ok(spend);
        }
        let (eps, delta) = self.remaining();
        const SLACK: f64 = 1e-9;
        if spend.epsilon > eps * (1.0 + SLACK) || spend.delta > delta * (1.0 + SLACK) + 1e-300 {
            return Err(Error::BudgetExceeded(format!(
                "the fit asks (ε, δ) = ({}, {}) and the session has ({}, {}) left of ({}, {})",
                readable(spend.epsilon),
                readable(spend.delta),
                readable(eps),
                readable(delta),
                readable(budget.epsilon),
                readable(budget.delta)
            )));
        }
        Ok(spend)
    }

    /// Run `fit` against a fresh ledger for `spend` (checked first), then add its releases to
    /// the session's ledger whatever the outcome. Returns the fit's result and its ledger.
    pub fn run<T>(
        &mut self,
        spend: Spend,
        fit: impl FnOnce(&mut Ledger, &mut Noise) -> Result<T>,
    ) -> Result<(T, Ledger)> {
        self.check_spend(spend)?;
        let budget = if spend.epsilon == f64::INFINITY {
            Budget {
                epsilon: f64::INFINITY,
                delta: spend.delta.max(self.ledger.budget().delta),
            }
        } else {
            Budget::approx(spend.epsilon, spend.delta)?
        };
        let mut ledger = Ledger::for_relation(budget, spend.relation);
        ledger.record_noise(&self.noise);
        let out = fit(&mut ledger, &mut self.noise);
        self.ledger.record_noise(&self.noise);
        for entry in ledger.entries() {
            self.ledger.charge(entry.clone())?;
        }
        Ok((out?, ledger))
    }
}
