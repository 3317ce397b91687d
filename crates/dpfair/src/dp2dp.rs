//! STUB: DP2DP (seed 004, issue #11).
