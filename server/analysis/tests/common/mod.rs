//! Helpers shared by the analysis integration tests: the repository's files and the
//! `ptxas -v` record of the fixture corpus.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use analysis::{Context, KernelContext};
use kernel_profile::{ResourceSource, Resources};

pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A file of the repository, by its path from the root.
pub fn read(rel: &str) -> String {
    let p = root().join(rel);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// A kernel's resources from the `ptxas -v` record of the fixtures
/// (`tests/fixtures/resources/sm_80.json`, made from `sm_80.txt`), as the CUDA front end
/// would pass them: the kernel's PTX name, its resources and a context holding them.
pub fn ptxas_context(file: &str, kernel: &str) -> (String, Resources, Context) {
    let json: serde_json::Value = serde_json::from_str(&read("tests/fixtures/resources/sm_80.json")).expect("json");
    let funcs = json["files"][format!("tests/fixtures/ptx/sm_80/{file}.ptx")]["functions"].as_object().expect("file in resources").clone();
    let (name, r) = funcs.into_iter().find(|(k, _)| k.contains(kernel)).expect("kernel in resources");
    let n = |k: &str| r[k].as_u64().unwrap_or(0) as u32;
    let res = Resources {
        registers_per_thread: n("registers"),
        static_smem_bytes: n("smem_bytes"),
        local_bytes_per_thread: n("stack_frame_bytes"),
        spill_store_bytes: n("spill_store_bytes"),
        spill_load_bytes: n("spill_load_bytes"),
        stack_frame_bytes: n("stack_frame_bytes"),
        barriers: n("barriers"),
        source: ResourceSource::Ptxas,
    };
    let mut context = Context::default();
    context.kernels.insert(name.clone(), KernelContext { resources: Some(res.clone()), ..Default::default() });
    (name, res, context)
}
