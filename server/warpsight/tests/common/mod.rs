//! Helpers shared by the test crates that run `warpsight calibrate` (`calibrate_cli.rs` and
//! `validation_doc.rs`), so that both run the same command.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The repository root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `warpsight calibrate CORPUS --gpu GPU --hold-out-every 2 --format json -o OUT`, run in the
/// repository root: fit on every other row of the GPU's, judge on the rest.
#[allow(dead_code)] // not every test crate that includes this module calibrates
pub fn calibrate_halves(corpus: &str, gpu: &str, out: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_warpsight"))
        .current_dir(root())
        .args(["calibrate", corpus, "--gpu", gpu, "--hold-out-every", "2", "--format", "json", "-o"])
        .arg(out)
        .output()
        .expect("run warpsight calibrate")
}

/// nvcc as the CUDA front end would find it (the variables scripts/test-all.sh sets, or
/// PATH).
#[allow(dead_code)] // not every test crate that includes this module compiles CUDA
pub fn nvcc_available() -> bool {
    if let Ok(p) = std::env::var("WARPSIGHT_NVCC")
        && Path::new(&p).is_file()
    {
        return true;
    }
    for var in ["WARPSIGHT_CUDA_HOME", "CUDA_HOME", "CUDA_PATH"] {
        if let Ok(h) = std::env::var(var)
            && Path::new(&h).join("bin/nvcc").is_file()
        {
            return true;
        }
    }
    std::env::var_os("PATH").is_some_and(|p| std::env::split_paths(&p).any(|d| d.join("nvcc").is_file()))
}
