//! STUB: CDP-Fair (seed 000, issue #7).
