//! Empty: this crate only holds the OpenDP comparison test and bench.
