//! STUB: see the crate docs; filled in by the privacy-core work.
