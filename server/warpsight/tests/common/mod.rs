//! Helpers shared by the test crates that run `warpsight calibrate` (`calibrate_cli.rs` and
//! `validation_doc.rs`), so that both run the same command, and by those that need nvcc or
//! the measured data beside the repository, so that all skip alike.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The repository root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `warpsight calibrate FILES... --gpu GPU --hold-out-every 2 --format json -o OUT`, run in the
/// repository root: fit on every other row of the GPU's, judge on the rest.
#[allow(dead_code)] // not every test crate that includes this module calibrates
pub fn calibrate_halves(files: &[&str], gpu: &str, out: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_warpsight"))
        .current_dir(root())
        .arg("calibrate")
        .args(files)
        .args(["--gpu", gpu, "--hold-out-every", "2", "--format", "json", "-o"])
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

/// Whether a test that needs nvcc for `what` should stop here: true (after saying so on
/// stderr) when no nvcc is found; with `WARPSIGHT_REQUIRE_CUDA=1` (CI) a missing nvcc fails
/// the test instead.
#[allow(dead_code)] // not every test crate that includes this module compiles CUDA
pub fn skip_without_nvcc(what: &str) -> bool {
    if nvcc_available() {
        return false;
    }
    assert!(!std::env::var("WARPSIGHT_REQUIRE_CUDA").is_ok_and(|v| v == "1"), "WARPSIGHT_REQUIRE_CUDA=1 but no nvcc was found");
    eprintln!("skipped: no nvcc ({what})");
    true
}

/// `../shared/data/measured/<rel>` beside the repository, or `None` (after saying so on
/// stderr) where it is absent: the measured data is never copied into the repository.
#[allow(dead_code)] // not every test crate that includes this module reads the measured data
pub fn measured(rel: &str) -> Option<PathBuf> {
    let path = root().join("../shared/data/measured").join(rel);
    if path.is_dir() {
        Some(path)
    } else {
        eprintln!("skipped: {} is absent (the measured data lives beside the repository)", path.display());
        None
    }
}
