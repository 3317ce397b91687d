//! Which neighbouring data sets a guarantee is certified for. A ledger certifies one relation
//! ([`super::Ledger::relation`]); an entry certified for another is converted soundly when it is
//! charged ([`super::Cost::add_remove_to_substitution`]) or refused.

use serde::{Deserialize, Serialize};
use std::fmt;

/// Which neighbouring data sets a guarantee is certified for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Relation {
    /// Replace one record (substitution): dpfair's default. The number of rows is public.
    #[default]
    Substitution,
    /// Add or remove one record.
    AddRemove,
}

impl Relation {
    /// The relation in words, as printed with every total.
    pub fn describe(self) -> &'static str {
        match self {
            Relation::Substitution => "replace-one (substitution) neighbours",
            Relation::AddRemove => "add/remove-one neighbours",
        }
    }
}

impl fmt::Display for Relation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Relation::Substitution => "substitution",
            Relation::AddRemove => "add/remove",
        })
    }
}
