//! `warpsight setup-cuda [--prefix DIR] [--with-nvrtc] [--with-cublas]`: installs a CUDA
//! compiler and the common headers from PyPI.
//!
//! No GPU and no system CUDA are needed: NVIDIA's pip wheels carry nvcc, cicc, ptxas and
//! the headers (docs/cuda.md, "Getting a compiler"). The environment goes to the user's
//! data directory by default, where toolchain discovery looks last, so after this command
//! `warpsight analyze file.cu` compiles with no further setting.

use std::path::PathBuf;

use crate::cmd::Exit;

#[derive(clap::Args)]
pub struct Args {
    /// Where to create the Python virtual environment (default: the user's data
    /// directory, e.g. ~/.local/share/warpsight/cuda).
    #[arg(long)]
    pub prefix: Option<PathBuf>,
    /// Also install NVRTC (58 MB more) for in-process compiles, about ten times faster.
    #[arg(long)]
    pub with_nvrtc: bool,
    /// Also install cuBLAS (444 MB more) for files that include cublas_v2.h.
    #[arg(long)]
    pub with_cublas: bool,
    /// The Python interpreter that creates the venv.
    #[arg(long, default_value = "python3")]
    pub python: PathBuf,
}

pub fn run(args: Args) -> anyhow::Result<Exit> {
    let prefix_is_default = args.prefix.is_none();
    let Some(prefix) = args.prefix.or_else(cuda_frontend::setup::default_prefix) else {
        anyhow::bail!("no user data directory is known on this system; pass --prefix DIR");
    };
    let mut packages: Vec<&str> = cuda_frontend::setup::PACKAGES.to_vec();
    let mut megabytes = 210;
    if args.with_nvrtc {
        packages.push(cuda_frontend::setup::NVRTC_PACKAGE);
        megabytes += 58;
    }
    if args.with_cublas {
        for p in cuda_frontend::setup::CUBLAS_PACKAGES {
            if !packages.contains(p) {
                packages.push(p);
            }
        }
        megabytes += 444;
    }
    eprintln!(
        "Creating a Python venv at {} and installing {} (about {megabytes} MB to download) ...",
        prefix.display(),
        packages.join(" ")
    );
    let report = cuda_frontend::setup::install(&prefix, Some(&args.python), args.with_nvrtc, args.with_cublas)?;
    match &report.nvcc {
        Some(nvcc) => {
            println!("CUDA toolchain installed in {}", report.prefix.display());
            println!("nvcc: {}", nvcc.display());
            if prefix_is_default {
                println!(
                    "warpsight finds it automatically (last in the discovery order; see docs/cuda.md)."
                );
            } else {
                println!(
                    "Point warpsight at it with --nvcc {} or WARPSIGHT_NVCC.",
                    nvcc.display()
                );
            }
            Ok(Exit::Success)
        }
        None => anyhow::bail!(
            "pip finished but no nvcc was found under {}",
            report.prefix.display()
        ),
    }
}
