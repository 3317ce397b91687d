//! STUB: the model file envelope every fitted model is saved in (issue #2).
