//! Analytical execution-time models, one module per model, one interface.
//!
//! Every model reads a [`kernel_profile::KernelProfile`] and the GPU's facts and returns a
//! [`Prediction`]. Models never do IO and never panic on their input: a model that cannot
//! apply (missing data, a GPU outside its scope) returns `None`, and
//! [`consensus::run_all`] records why. A profile no model can be trusted with (absurd
//! counts, a launch of more than 2^64 threads) is refused as a whole ([`guard`]).
//!
//! Each model module has two layers: a "paper" layer with the paper's own symbols, which
//! the reproductions in `tests/` feed with the papers' published inputs, and an adapter
//! `predict(profile, gpu, ...)` that derives those inputs from the static profile. The
//! models and the rule that picks a headline among them are described in `docs/models.md`.

pub mod bottleneck;
pub mod bsp;
pub mod consensus;
pub mod gpu;
pub mod guard;
pub mod power_limit;
pub mod prediction;
pub mod roofline;
pub mod scheduling;
pub mod wave;

pub use consensus::{Headline, ModelConfig, Report, run_all, run_all_for_gpu};
pub use gpu::GpuParams;
pub use prediction::{Bound, Confidence, Pipe, Prediction};
pub mod cgpredict;
pub mod mwp_cwp;
