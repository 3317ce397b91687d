//! STUB: FDP-Fair (seed 000, issue #8).
