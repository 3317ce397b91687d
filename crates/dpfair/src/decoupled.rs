//! STUB: decoupled private fair classifier (seed 003, issue #6).
