//! Synthetic data-generating designs of the five papers (STUB: issue #4).
