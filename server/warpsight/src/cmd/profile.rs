//! `warpsight profile FILE --kernel NAME`: the static profile of one kernel as JSON
//! (docs/profile.md), the input every model reads.

use std::path::PathBuf;

use anyhow::bail;

use crate::cmd::Exit;
use crate::input::{self, LaunchArgs};

#[derive(clap::Args)]
pub struct Args {
    /// A .ptx or .cu file.
    pub file: PathBuf,
    /// The kernel: its PTX (mangled) name, its demangled signature or its base name.
    #[arg(long)]
    pub kernel: String,
    #[command(flatten)]
    pub launch: LaunchArgs,
}

/// `true` when `want` names the kernel (`ptx::demangle::kernel_matches`).
pub fn matches_kernel(k: &analysis::KernelAnalysis, want: &str) -> bool {
    ptx::demangle::kernel_matches(&k.name, k.demangled.as_deref(), want)
}

pub fn run(args: Args) -> anyhow::Result<Exit> {
    let loaded = input::load(&args.file, &args.launch)?;
    for note in args.launch.float_arg_notes() {
        eprintln!("note: {note}");
    }
    let kernels = &loaded.analysis.kernels;
    let found: Vec<&analysis::KernelAnalysis> = kernels.iter().filter(|k| matches_kernel(k, &args.kernel)).collect();
    let k = match found.as_slice() {
        [one] => *one,
        [] if kernels.is_empty() && !loaded.notes.is_empty() => {
            bail!("no kernels in {}: {}", args.file.display(), loaded.notes.join(" "));
        }
        [] => {
            let names: Vec<String> = kernels.iter().map(|k| k.demangled.clone().unwrap_or_else(|| k.name.clone())).collect();
            bail!("no kernel `{}` in {} (kernels: {})", args.kernel, args.file.display(), names.join(", "));
        }
        many => bail!("`{}` names {} kernels; give the mangled name: {}", args.kernel, many.len(), many.iter().map(|k| k.name.as_str()).collect::<Vec<_>>().join(", ")),
    };
    let Some(target) = k.targets.first() else {
        bail!("no target GPU could be analysed (see `warpsight gpus`)");
    };
    println!("{}", serde_json::to_string_pretty(&target.profile)?);
    Ok(if loaded.has_errors() { Exit::InputErrors } else { Exit::Success })
}
