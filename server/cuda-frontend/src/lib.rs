//! The CUDA source front end: turns a `.cu` file into PTX plus what the performance models
//! need from the source: per-kernel ptxas resources, compiler diagnostics, the mapping from
//! PTX kernels to `__global__` functions, and launch sites with folded grid, block, shared
//! memory and arguments.
//!
//! This is an IO crate: it discovers and runs compilers (always through an argument
//! vector, never a shell; nvcc's own shell only ever sees a fixed file name and flags
//! proven inert, see [`safety`] and docs/security.md), reads files, and keeps a cache on
//! disk. It never panics on user
//! input and has no LSP dependency. The one high-level entry point is [`prepare`] (or
//! [`prepare_text`] for an editor buffer, and [`Scheduler`] to cancel superseded compiles);
//! the modules below are usable on their own. docs/cuda.md describes discovery, the cache
//! key, the annotation syntax and the launch-site rules.

pub mod cache;
pub mod compile;
pub mod compile_commands;
pub mod consteval;
pub mod context;
pub mod devicecode;
pub mod diagnostics;
pub mod files;
mod incremental;
pub mod launch;
pub mod lex;
pub mod mapping;
pub mod nvrtc;
pub mod process;
pub mod ptxas;
pub mod safety;
pub mod setup;
pub mod toolchain;

pub use compile::{
    CompileCommands, CompileHandle, CompilerChoice, Options, Prepared, PtxOrigin, Scheduler,
    parse_arg, prepare, prepare_text, spawn_prepare,
};
pub use diagnostics::{CompilerDiagnostic, Severity};
pub use incremental::{KernelSpan, kernel_spans};
pub use launch::{
    Annotation, AnnotationTarget, KernelDecl, KernelParam, LaunchBounds, LaunchSite, LoopAnnotation, ScanInput,
    SiteOrigin, SourceScan, scan_source, scan_source_with,
};
pub use launch_spec::PartialLaunch;
pub use mapping::{KernelMapping, base_name, demangle, scrub_file_paths};
pub use process::CancelToken;
pub use ptxas::KernelResources;
pub use toolchain::{CompilerKind, DiscoveryEnv, FoundBy, Toolchain, Toolchains, discover};
