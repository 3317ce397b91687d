//! STUB: private fair regression (seed 001, issue #9).
