//! One module per subcommand.

pub mod accountant;
pub mod audit;
pub mod common;
pub mod compare;
pub mod datasets;
pub mod demo;
pub mod evaluate;
pub mod federated;
pub mod fit;
pub mod ldp;
pub mod ledger;
pub mod predict;
pub mod report;
pub mod reproduce;
pub mod tune;
