//! `gpu-spec`: the typed GPU database and NVIDIA's exact occupancy calculator.
//!
//! The data lives in human-readable TOML under `gpu-data/` (schema in
//! `gpu-data/README.md`), with a source for every number, and is compiled into the crate
//! so the `warpsight` binary stands alone. Consumers (the performance and power models,
//! the CLI, the language server) use four things:
//!
//! - [`Database::builtin`] and [`Database::gpu`] to find a [`Gpu`] by id or alias
//!   (`a100`, `h100-sxm`, `tesla-k20`, ...);
//! - the fields of [`Gpu`], which carry their units in their names, and helpers such as
//!   [`Gpu::peak_fp32_gflops`];
//! - [`occupancy`], a step-for-step reimplementation of `cuda_occupancy.h`, plus the
//!   what-if helpers (best block size, occupancy curve, waves);
//! - [`Database::paper_gpus`], the seed papers' GPUs exactly as each paper describes them,
//!   for the papers' reproductions.
//!
//! The crate does no IO: the files are embedded with `include_str!`.

pub mod cc;
pub mod db;
pub mod gpu;
pub mod occupancy;
pub mod paper;
pub mod throughput;

pub use cc::{CcLimits, ComputeCapability};
pub use db::{Database, DeviceMatch, LoadError, Reference, UnknownGpu};
pub use gpu::{Gpu, SmUnits};
pub use occupancy::{Limiters, Occupancy, OccupancyError};
pub use paper::PaperGpu;
