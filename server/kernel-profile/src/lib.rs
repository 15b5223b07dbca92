//! The static kernel profile: the inputs of every model, derived from PTX without running
//! anything on a GPU.
//!
//! [`build`] turns the IR of one kernel, a launch configuration and a target into a
//! [`KernelProfile`] (`model.rs`), whose JSON form is documented in `docs/profile.md`.

pub mod access;
pub mod affine;
mod build;
pub mod concrete;
mod frequency;
pub mod index_range;
mod predicate;
pub mod sass;
mod simt;
pub mod traffic;
pub mod model;
mod work;

#[cfg(test)]
mod scale_tests;

pub use build::{MAX_ANNOTATION_NOTES, ProfileInput, ProfileOptions, build};
pub use model::*;
