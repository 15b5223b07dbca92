//! One module per subcommand; each has `Args` (clap) and `run(Args) -> anyhow::Result<Exit>`.

pub mod analyze;
pub mod calibrate;
pub mod gpus;
pub mod lsp;
pub mod occupancy;
pub mod predict;
pub mod profile;
pub mod setup_cuda;
pub mod validate;

use std::process::ExitCode;

/// The documented exit codes (docs/cli.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// 0: success.
    Success,
    /// 1: the input has errors (parse or compile errors); results were still printed.
    InputErrors,
    /// 2: usage or IO error.
    Usage,
    /// 1: `warpsight lsp` ended without a `shutdown` request (LSP 3.17, exit notification).
    Failure,
}

impl From<Exit> for ExitCode {
    fn from(e: Exit) -> ExitCode {
        match e {
            Exit::Success => ExitCode::SUCCESS,
            Exit::InputErrors | Exit::Failure => ExitCode::from(1),
            Exit::Usage => ExitCode::from(2),
        }
    }
}
