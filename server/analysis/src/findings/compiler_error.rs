//! `compiler-error`: the CUDA compiler rejected the source.
//!
//! ## What it does
//! Marks a diagnostic from the CUDA front end (nvcc, NVRTC or clang, parsed by
//! `cuda-frontend`) with an error severity. The analysis never produces it: the language
//! server converts the front end's diagnostics and uses [`CODE`] so that clients can
//! filter or reconfigure them like every other finding.
//!
//! ## Why is this bad?
//! Without PTX there is nothing to analyse: every other finding of the file is from the
//! last successful compile (or absent) until the error is fixed.
//!
//! ## Example
//! ```cuda
//! __global__ void k(float *x) { x[threadIdx.x] = y; }  // error: identifier "y" is undefined
//! ```
//!
//! ## Fix
//! Fix the source; the message is the compiler's own.

use crate::Severity;

pub const CODE: &str = "compiler-error";
pub const SEVERITY: Severity = Severity::Error;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_code_is_registered_as_an_error() {
        assert_eq!(crate::findings::default_severity(CODE), Some(Severity::Error));
        assert!(crate::findings::CODES.contains(&CODE));
    }
}
