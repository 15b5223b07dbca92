//! Tests that need no CUDA toolchain: the recorded-PTX fallback, the timeout and the
//! cancellation of a hung compiler (a fake `nvcc` shell script that sleeps).

mod common;

use std::time::{Duration, Instant};

use common::{fake_slow_nvcc, scratch};
use cuda_frontend::{DiscoveryEnv, Options, PtxOrigin, Scheduler, Severity, SiteOrigin, prepare};

const SRC: &str = "// warpsight: block=128\n__global__ void vadd(const float* a, const float* b, float* c, int n) {\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) c[i] = a[i] + b[i];\n}\nint main() { vadd<<<(4096 + 127) / 128, 128>>>(0, 0, 0, 4096); }\n";

#[test]
fn without_any_toolchain_the_recorded_ptx_beside_the_source_is_used_and_said() {
    let dir_tmp = scratch("recorded");
    let dir = dir_tmp.path();
    let cu = dir.join("vadd.cu");
    std::fs::write(&cu, SRC).unwrap_or_else(|e| panic!("{e}"));
    // With nothing recorded: no PTX, and the note says how to get a compiler.
    let opts = Options {
        env: Some(DiscoveryEnv::empty()),
        cache_dir: Some(dir.join("cache")),
        ..Options::default()
    };
    let p = prepare(&cu, &opts);
    assert_eq!(p.origin, PtxOrigin::None);
    assert!(p.toolchain.is_none());
    assert!(
        p.toolchain_note.contains("warpsight setup-cuda"),
        "{}",
        p.toolchain_note
    );
    // Launch sites do not need a compiler: the launch in main, and the annotation site
    // on the kernel (block only).
    let sites: Vec<_> = p
        .launch_sites
        .iter()
        .map(|s| (s.origin, s.line, s.grid, s.block, s.arg("n")))
        .collect();
    assert_eq!(
        sites,
        [
            (SiteOrigin::Annotation, 2, None, Some([128, 1, 1]), None),
            (
                SiteOrigin::Launch,
                6,
                Some([32, 1, 1]),
                Some([128, 1, 1]),
                Some(4096)
            )
        ]
    );

    std::fs::write(
        dir.join("vadd.ptx"),
        include_str!("../testdata/vadd_sm80.ptx"),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let p = prepare(&cu, &opts);
    assert_eq!(p.origin, PtxOrigin::RecordedBeside(dir.join("vadd.ptx")));
    assert!(
        p.toolchain_note
            .starts_with("No CUDA compiler found: using the recorded PTX file"),
        "{}",
        p.toolchain_note
    );
    assert_eq!(p.arch.as_deref(), Some("sm_80"));
    assert_eq!(p.kernels.len(), 1);
    assert_eq!(
        (p.kernels[0].base_name.as_str(), p.kernels[0].line),
        ("vadd", Some(2))
    );
    // No ptxas either: resources are unknown and a note says why.
    assert!(p.resources.is_empty());
    assert!(
        p.notes.iter().any(|n| n.contains("ptxas not found")),
        "{:?}",
        p.notes
    );
}

#[test]
fn a_hung_compiler_is_stopped_at_the_timeout_with_a_clear_diagnostic() {
    let dir_tmp = scratch("timeout");
    let dir = dir_tmp.path();
    let nvcc = fake_slow_nvcc(dir);
    let cu = dir.join("k.cu");
    std::fs::write(&cu, SRC).unwrap_or_else(|e| panic!("{e}"));
    let opts = Options {
        nvcc: Some(nvcc),
        env: Some(DiscoveryEnv::empty()),
        cache_dir: Some(dir.join("cache")),
        timeout: Duration::from_millis(800),
        ..Options::default()
    };
    let t = Instant::now();
    let p = prepare(&cu, &opts);
    assert!(
        t.elapsed() < Duration::from_secs(10),
        "took {:?}",
        t.elapsed()
    );
    assert_eq!(p.origin, PtxOrigin::Failed(cuda_frontend::CompilerKind::Nvcc));
    assert!(p.toolchain_note.starts_with("No PTX: nvcc failed to compile the file. First error: nvcc did not finish within 0.8 s"), "{}", p.toolchain_note);
    let d: Vec<&str> = p
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .map(|d| d.message.as_str())
        .collect();
    assert_eq!(d.len(), 1, "{d:?}");
    assert!(
        d[0].starts_with("nvcc did not finish within 0.8 s and was stopped"),
        "{}",
        d[0]
    );
    assert!(
        p.toolchain_note.contains("nvcc 99.0.1"),
        "{}",
        p.toolchain_note
    );
    // A timeout is not cached: the next run tries again (and times out again).
    let again = prepare(&cu, &opts);
    assert_eq!(again.diagnostics.len(), 1);
}

#[test]
fn a_newer_edit_cancels_the_compile_in_flight() {
    let dir_tmp = scratch("cancel");
    let dir = dir_tmp.path();
    let nvcc = fake_slow_nvcc(dir);
    let cu = dir.join("k.cu");
    std::fs::write(&cu, SRC).unwrap_or_else(|e| panic!("{e}"));
    let opts = Options {
        nvcc: Some(nvcc),
        env: Some(DiscoveryEnv::empty()),
        cache_dir: Some(dir.join("cache")),
        timeout: Duration::from_secs(60),
        ..Options::default()
    };
    let sched = Scheduler::new();
    let t = Instant::now();
    let first = sched.submit(cu.clone(), Some(SRC.to_string()), opts.clone());
    std::thread::sleep(Duration::from_millis(300));
    let second = sched.submit(cu.clone(), Some(format!("{SRC}\n// edited\n")), opts);
    let r1 = first.wait_timeout(Duration::from_secs(10));
    assert!(t.elapsed() < Duration::from_secs(10));
    let r1 = r1.unwrap_or_else(|| panic!("the cancelled compile did not report back"));
    assert!(r1.cancelled);
    assert!(
        r1.toolchain_note.contains("cancelled by a newer edit"),
        "{}",
        r1.toolchain_note
    );
    // The second is still running; cancel it directly to end the test quickly.
    assert!(second.try_result().is_none());
    second.cancel();
    let r2 = second.wait_timeout(Duration::from_secs(10));
    assert!(r2.is_some_and(|r| r.cancelled));
}

#[test]
fn discovery_follows_the_documented_order() {
    use cuda_frontend::{FoundBy, discover};
    let dir_tmp = scratch("order");
    let dir = dir_tmp.path();
    // Five fake CUDA roots, one per discovery source.
    let make = |name: &str| fake_slow_nvcc(&dir.join(name));
    let explicit = make("explicit");
    let envvar = make("envvar");
    let home = make("home");
    let path = make("path");
    // The managed venv layout: <prefix>/lib/python3.X/site-packages/nvidia/cu13/bin/nvcc.
    let managed_prefix = dir.join("venv");
    let managed_bin = managed_prefix.join("lib/python3.11/site-packages/nvidia/cu13/bin");
    std::fs::create_dir_all(&managed_bin).unwrap_or_else(|e| panic!("{e}"));
    std::fs::copy(&explicit, managed_bin.join("nvcc")).unwrap_or_else(|e| panic!("{e}"));
    let root_of = |nvcc: &std::path::Path| {
        nvcc.parent()
            .and_then(|p| p.parent())
            .map(|p| p.display().to_string())
            .unwrap_or_default()
    };
    let bin_of = |nvcc: &std::path::Path| {
        nvcc.parent()
            .map(|p| p.display().to_string())
            .unwrap_or_default()
    };

    let mut env = DiscoveryEnv::empty();
    env.explicit_nvcc = Some(explicit.clone());
    env.vars
        .insert("WARPSIGHT_NVCC".into(), envvar.display().to_string());
    env.vars.insert("CUDA_HOME".into(), root_of(&home));
    env.vars
        .insert("PATH".into(), format!("/nonexistent:{}", bin_of(&path)));
    env.managed_prefix = Some(managed_prefix.clone());
    let home_nvcc = std::path::PathBuf::from(root_of(&home)).join("bin/nvcc");
    let expected = [
        (FoundBy::Explicit, explicit.clone()),
        (FoundBy::EnvVar, envvar),
        (FoundBy::CudaHome, home_nvcc),
        (FoundBy::Path, path.clone()),
        (FoundBy::Managed, managed_bin.join("nvcc")),
    ];
    for (by, nvcc) in expected {
        let found = discover(&env).nvcc.map(|t| (t.found_by, t.path, t.version));
        assert_eq!(found, Some((by, nvcc.clone(), "99.0.1".to_string())));
        // Remove this source and look again.
        match by {
            FoundBy::Explicit => env.explicit_nvcc = None,
            FoundBy::EnvVar => drop(env.vars.remove("WARPSIGHT_NVCC")),
            FoundBy::CudaHome => drop(env.vars.remove("CUDA_HOME")),
            FoundBy::Path => drop(env.vars.remove("PATH")),
            _ => env.managed_prefix = None,
        }
    }
    assert!(discover(&env).nvcc.is_none());
}

#[test]
fn a_toolchain_inside_the_workspace_is_named_but_never_run() {
    // The layout scripts/test-all.sh makes: <repo>/.cuda/lib/python3.X/site-packages/
    // nvidia/cu13/bin/nvcc. Here it is a fake that leaves a marker when run.
    let repo_tmp = scratch("workspace-venv");
    let repo = repo_tmp.path();
    let bin = repo.join(".cuda/lib/python3.11/site-packages/nvidia/cu13/bin");
    std::fs::create_dir_all(&bin).unwrap_or_else(|e| panic!("{e}"));
    let marker = repo.join("MARKER-ran");
    let nvcc = bin.join("nvcc");
    std::fs::write(&nvcc, format!("#!/bin/sh\ntouch '{}'\necho 'Cuda compilation tools, release 13.5, V13.5.37'\n", marker.display()))
        .unwrap_or_else(|e| panic!("{e}"));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(&nvcc, std::fs::Permissions::from_mode(0o755));
    }
    std::fs::create_dir_all(repo.join("src")).unwrap_or_else(|e| panic!("{e}"));
    let cu = repo.join("src/vadd.cu");
    std::fs::write(&cu, SRC).unwrap_or_else(|e| panic!("{e}"));
    let opts = Options { env: Some(DiscoveryEnv::empty()), cache_dir: Some(repo.join("cache")), ..Options::default() };
    let p = prepare(&cu, &opts);
    assert_eq!(p.origin, PtxOrigin::None);
    assert!(p.toolchain.is_none());
    assert!(!marker.exists(), "the workspace's nvcc was run");
    let hint = p.notes.iter().find(|n| n.contains("is not used")).unwrap_or_else(|| panic!("{:?}", p.notes));
    assert!(hint.contains(&nvcc.display().to_string()) && hint.contains("--nvcc") && hint.contains("warpsight setup-cuda"), "{hint}");
    // Named explicitly, it is used.
    let p = prepare(&cu, &Options { nvcc: Some(nvcc.clone()), run_ptxas: false, ..opts });
    assert!(p.toolchain.is_some_and(|t| t.path == nvcc));
    assert!(marker.exists());
}
