//! `warpsight lsp`: the language server on stdin/stdout.

use crate::cmd::Exit;

#[derive(clap::Args)]
pub struct Args {
    /// Accepted for compatibility with clients that pass it; stdio is the only transport.
    #[arg(long)]
    pub stdio: bool,
}

pub fn run(_args: Args) -> anyhow::Result<Exit> {
    lsp::run_stdio()?;
    Ok(Exit::Success)
}
