//! Built-in data sets of the papers, read from a data directory and verified by sha256 (STUB: issue #4).
