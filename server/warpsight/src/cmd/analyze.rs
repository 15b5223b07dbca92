//! `warpsight analyze PATH...` (being written; see issue 2).

use std::path::PathBuf;

use crate::cmd::Exit;

#[derive(clap::Args)]
pub struct Args {
    /// Files or directories (searched for .ptx and .cu files).
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
}

pub fn run(_args: Args) -> anyhow::Result<Exit> {
    anyhow::bail!("`warpsight analyze` is not available yet")
}
