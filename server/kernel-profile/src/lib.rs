//! The static kernel profile: the inputs of every model, derived from PTX without running
//! anything on a GPU.

pub mod model;

pub use model::*;
