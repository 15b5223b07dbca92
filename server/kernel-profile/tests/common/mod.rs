//! Helpers shared by the fixture tests: the recorded PTX of the corpus (sm_80, nvcc 13.5)
//! and its profile under a launch.
#![allow(dead_code)]

use std::collections::BTreeMap;

use kernel_profile::{KernelProfile, LaunchConfig, LaunchSource, ProfileInput, ProfileOptions};

pub fn fixture(name: &str) -> String {
    let path = format!("{}/../../tests/fixtures/ptx/sm_80/{name}.ptx", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The 1-based line of the first line of `tests/fixtures/cu/{file}.cu` containing `needle`.
pub fn line_of(file: &str, needle: &str) -> u32 {
    let path = format!("{}/../../tests/fixtures/cu/{file}.cu", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    text.lines().position(|l| l.contains(needle)).unwrap_or_else(|| panic!("`{needle}` not in {path}")) as u32 + 1
}

pub fn profile(file: &str, kernel: &str, grid: [u32; 3], block: [u32; 3], args: &[(&str, i64)]) -> KernelProfile {
    profile_text(&fixture(file), file, kernel, grid, block, args)
}

/// The profile of `kernel` in the PTX `text` (`file` names it in messages).
pub fn profile_text(text: &str, file: &str, kernel: &str, grid: [u32; 3], block: [u32; 3], args: &[(&str, i64)]) -> KernelProfile {
    profile_with(text, file, kernel, grid, block, args, &ProfileOptions::default())
}

/// [`profile_text`] with the profile's options (the default trip count, ...).
pub fn profile_with(text: &str, file: &str, kernel: &str, grid: [u32; 3], block: [u32; 3], args: &[(&str, i64)], options: &ProfileOptions) -> KernelProfile {
    profile_launch(text, file, kernel, (8, 0), launch_config(grid, block, args, &[], None), options)
}

/// A launch stated by the test: its arguments, allocations and footprint.
fn launch_config(grid: [u32; 3], block: [u32; 3], args: &[(&str, i64)], allocated: &[(&str, u64)], footprint: Option<u64>) -> LaunchConfig {
    LaunchConfig {
        grid,
        block,
        dynamic_smem: 0,
        args: args.iter().map(|(k, v)| (k.to_string(), *v)).collect::<BTreeMap<_, _>>(),
        footprint_bytes: footprint,
        array_bytes: allocated.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
        source: LaunchSource::Setting,
    }
}

/// [`profile_text`] with the bytes the host allocates for pointer arguments, by name
/// (`LaunchConfig::array_bytes`).
pub fn profile_allocated(text: &str, file: &str, kernel: &str, grid: [u32; 3], block: [u32; 3], args: &[(&str, i64)], allocated: &[(&str, u64)]) -> KernelProfile {
    profile_stated(text, file, kernel, (8, 0), grid, block, args, allocated, None)
}

/// [`profile_allocated`] for a compute capability, with the launch's `footprint`.
#[allow(clippy::too_many_arguments)]
pub fn profile_stated(
    text: &str,
    file: &str,
    kernel: &str,
    cc: (u32, u32),
    grid: [u32; 3],
    block: [u32; 3],
    args: &[(&str, i64)],
    allocated: &[(&str, u64)],
    footprint: Option<u64>,
) -> KernelProfile {
    profile_launch(text, file, kernel, cc, launch_config(grid, block, args, allocated, footprint), &ProfileOptions::default())
}

/// The profile of `kernel` in the PTX `text` for compute capability `cc` under `launch`.
fn profile_launch(text: &str, file: &str, kernel: &str, cc: (u32, u32), launch: LaunchConfig, options: &ProfileOptions) -> KernelProfile {
    let (module, errors) = ptx_ir::parse_and_lower(text);
    assert!(errors.is_empty(), "{file}: {errors:?}");
    let name = module.kernels().find(|k| k.name.contains(kernel)).unwrap_or_else(|| panic!("no kernel {kernel} in {file}")).name.clone();
    let input = ProfileInput {
        module: &module,
        kernel: &name,
        gpu_id: "a100-sxm4-80gb",
        compute_capability: cc,
        launch,
        resources: None,
        source_param_names: &[],
        demangled: None,
        options,
        stated_trips: &[],
    };
    kernel_profile::build(&input).expect("profile")
}
