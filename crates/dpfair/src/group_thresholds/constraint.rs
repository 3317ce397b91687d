//! The fairness constraints of the group-thresholds classifier, with Fairlearn's semantics: the
//! largest difference between two groups of the constrained rate(s) (`demographic_parity_difference`,
//! `equal_opportunity_difference`, `equalized_odds_difference`) is at most the level α.

use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};

/// Which rates the groups must share, each within α of every other group's.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Constraint {
    /// The positive rate `P(Ŷ = 1 | A = a)`.
    #[default]
    DemographicParity,
    /// The true-positive rate `P(Ŷ = 1 | Y = 1, A = a)`.
    EqualOpportunity,
    /// Both the true- and the false-positive rate, `P(Ŷ = 1 | Y = y, A = a)` for `y = 1, 0`.
    EqualizedOdds,
}

impl Constraint {
    /// Every constraint's name, as `--constraint` takes it.
    pub const NAMES: [&'static str; 3] =
        ["demographic-parity", "equal-opportunity", "equalized-odds"];

    /// The name `--constraint` takes.
    pub fn name(self) -> &'static str {
        match self {
            Constraint::DemographicParity => Self::NAMES[0],
            Constraint::EqualOpportunity => Self::NAMES[1],
            Constraint::EqualizedOdds => Self::NAMES[2],
        }
    }

    /// The constraint named `name` (an error naming the parameter `constraint` otherwise).
    ///
    /// ```
    /// use dpfair::group_thresholds::Constraint;
    /// assert_eq!(Constraint::parse("equal-opportunity")?, Constraint::EqualOpportunity);
    /// assert!(Constraint::parse("parity").is_err());
    /// # Ok::<(), dpfair::Error>(())
    /// ```
    pub fn parse(name: &str) -> Result<Constraint> {
        match name {
            "demographic-parity" => Ok(Constraint::DemographicParity),
            "equal-opportunity" => Ok(Constraint::EqualOpportunity),
            "equalized-odds" => Ok(Constraint::EqualizedOdds),
            other => Err(Error::invalid(
                "constraint",
                format!("`{other}`: expected one of {}", Self::NAMES.join(", ")),
            )),
        }
    }
}

impl std::str::FromStr for Constraint {
    type Err = Error;
    fn from_str(s: &str) -> Result<Constraint> {
        Constraint::parse(s)
    }
}

impl std::fmt::Display for Constraint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
