//! End-to-end tests of `warpsight occupancy` and `warpsight gpus`: they run the built
//! binary, as a user would, and check the text and JSON outputs and the exit codes.

use std::process::{Command, Output};

fn warpsight(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_warpsight")).args(args).output().expect("run warpsight")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn json(o: &Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("bad JSON ({e}): {}", stdout(o)))
}

#[test]
fn occupancy_text_for_a_cc() {
    // Golden vector: CC 9.0, 128 threads, 32 registers, 16 KB dynamic shared memory.
    let o = warpsight(&["occupancy", "--cc", "9.0", "--threads", "128", "--regs", "32", "--dyn-smem", "16384"]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let out = stdout(&o);
    assert!(out.contains("blocks_per_sm: 13\n"), "{out}");
    assert!(out.contains("warps_per_sm: 52 of 64\n"), "{out}");
    assert!(out.contains("occupancy: 81.2%\n") || out.contains("occupancy: 81.3%\n"), "{out}");
    assert!(out.contains("limiters: shared_memory\n"), "{out}");
}

#[test]
fn occupancy_json_for_a_gpu() {
    let o = warpsight(&["occupancy", "--gpu", "h100-sxm", "--threads", "128", "--regs", "40", "--json", "--grid", "2000"]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let v = json(&o);
    assert_eq!(v["gpu"], "h100-sxm");
    assert_eq!(v["cc"], "9.0");
    assert_eq!(v["blocks_per_sm"], 12);
    assert_eq!(v["warps_per_sm"], 48);
    assert_eq!(v["occupancy"], 0.75);
    assert_eq!(v["limiters"], serde_json::json!(["registers"]));
    // 132 SMs x 12 blocks = 1584 per wave: 2000 blocks take 2 waves, the last 416 blocks.
    assert_eq!(v["waves"]["waves"], 2);
    assert_eq!(v["waves"]["last_wave_blocks"], 416);
}

#[test]
fn occupancy_best_block_size_and_alias() {
    let o = warpsight(&["occupancy", "--gpu", "a100", "--threads", "96", "--regs", "32", "--best", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let v = json(&o);
    assert_eq!(v["gpu"], "a100-sxm4-80gb");
    // 32 registers fit 64 warps; 1024 threads x 2 blocks = 2048 = full occupancy.
    assert_eq!(v["best"]["block_size"], 1024);
    assert_eq!(v["best"]["blocks_per_sm"], 2);
    assert_eq!(v["best"]["min_grid_size"], 216);
    let o = warpsight(&["occupancy", "--cc", "8.6", "--threads", "96", "--regs", "32", "--best"]);
    assert!(stdout(&o).contains("best block size: 768 (2 blocks/SM, occupancy 100.0%)"), "{}", stdout(&o));
}

#[test]
fn a_configuration_that_cannot_launch_reports_why() {
    let o = warpsight(&["occupancy", "--cc", "8.6", "--threads", "1024", "--regs", "80"]);
    // The report is printed, and the exit code says the configuration cannot launch.
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let out = stdout(&o);
    assert!(out.contains("blocks_per_sm: 0\n"), "{out}");
    assert!(out.contains("limiters: registers"), "{out}");
    assert!(out.contains("cannot launch: 80 registers"), "{out}");
}

#[test]
fn more_registers_than_the_architecture_allows_exits_non_zero() {
    // 255 registers per thread is the most any CC 8.0 thread can use (CUDA C++
    // Programming Guide, "Technical Specifications per Compute Capability").
    let o = warpsight(&["occupancy", "--cc", "8.0", "--threads", "128", "--regs", "300"]);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    assert!(stdout(&o).contains("cannot launch: 300 registers per thread exceed the maximum of 255"), "{}", stdout(&o));
    let o = warpsight(&["occupancy", "--gpu", "a100", "--threads", "128", "--regs", "300", "--json"]);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    assert_eq!(json(&o)["blocks_per_sm"], 0);
    // One that can launch still exits with 0, and the help documents the codes.
    let o = warpsight(&["occupancy", "--cc", "8.0", "--threads", "128", "--regs", "255"]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let o = warpsight(&["occupancy", "--help"]);
    assert!(stdout(&o).contains("Exit codes: 0 the configuration can launch; 1 it cannot"), "{}", stdout(&o));
}

#[test]
fn an_unknown_gpu_is_a_usage_error_with_suggestions() {
    let o = warpsight(&["occupancy", "--gpu", "h100-sxn", "--threads", "128", "--regs", "32"]);
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("unknown GPU `h100-sxn`") && err.contains("h100-sxm"), "{err}");
    let o = warpsight(&["occupancy", "--cc", "4.0", "--threads", "128", "--regs", "32"]);
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    let o = warpsight(&["occupancy", "--threads", "128", "--regs", "32"]);
    assert_eq!(o.status.code(), Some(2), "--cc or --gpu is required: {o:?}");
}

#[test]
fn gpus_lists_at_least_45() {
    let o = warpsight(&["gpus"]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let out = stdout(&o);
    for id in ["tesla-c1060", "tesla-k20", "a100-sxm4-80gb", "h100-sxm", "rtx-5090", "jetson-agx-orin"] {
        assert!(out.lines().any(|l| l.starts_with(id)), "{id} missing:\n{out}");
    }
    let o = warpsight(&["gpus", "--json"]);
    let v = json(&o);
    let list = v.as_array().expect("array");
    assert!(list.len() >= 45, "{} GPUs", list.len());
    let k20 = list.iter().find(|g| g["id"] == "tesla-k20").expect("k20");
    assert_eq!(k20["sm_count"], 13);
    assert!(k20["sources"]["sm_count"].as_str().is_some_and(|s| s.contains("seed001")));
    assert!(k20["peak_fp32_gflops"].as_f64().is_some_and(|f| f > 3000.0));
}
