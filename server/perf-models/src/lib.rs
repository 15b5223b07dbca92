//! Analytical execution-time models, one module per model, one interface.
//!
//! Every model takes a [`kernel_profile::KernelProfile`] and a [`gpu_spec::Gpu`] and returns
//! a [`Prediction`]. Models never do IO and never panic on their input: a model that cannot
//! apply (missing data, a GPU outside its scope) returns `None` with nothing else, and its
//! `applicable` function says why.

pub mod prediction;

pub use prediction::{Bound, Confidence, Prediction};
