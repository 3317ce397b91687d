//! STUB: LPCT and LPCT-prune (seed 002, issue #10).
