//! `warpsight occupancy` (being written; see issue 3).

use crate::cmd::Exit;

#[derive(clap::Args)]
pub struct Args {}

pub fn run(_args: Args) -> anyhow::Result<Exit> {
    anyhow::bail!("`warpsight occupancy` is not available yet")
}
