//! DP-FERMI baseline (spec 003 §2.6): to come.
