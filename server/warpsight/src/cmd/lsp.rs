//! `warpsight lsp`: the language server on stdin/stdout.

use crate::cmd::Exit;

#[derive(clap::Args)]
pub struct Args {
    /// Accepted for compatibility with clients that pass it; stdio is the only transport.
    #[arg(long)]
    pub stdio: bool,
}

/// Exit code 0 after `shutdown` and `exit`; 1 when `exit` came without `shutdown`, or
/// the input ended first (LSP 3.17, exit notification).
pub fn run(_args: Args) -> anyhow::Result<Exit> {
    Ok(match lsp::run_stdio()? {
        lsp::SessionEnd::AfterShutdown => Exit::Success,
        lsp::SessionEnd::WithoutShutdown => Exit::Failure,
    })
}
