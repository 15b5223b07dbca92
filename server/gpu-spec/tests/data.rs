//! Checks on the GPU database itself: every file parses, every number has a source, the
//! seeds' GPUs are present, and the numbers are physically sane (bandwidth consistent with
//! bus width x data rate, plausible clocks and unit counts).

use gpu_spec::{ComputeCapability, Database};

fn db() -> &'static Database {
    Database::builtin()
}

#[test]
fn every_file_parses_and_validates() {
    let errors = db().errors();
    assert!(errors.is_empty(), "{}", errors.iter().map(|e| e.to_string()).collect::<Vec<_>>().join("\n"));
}

#[test]
fn at_least_45_gpus_and_every_required_one() {
    assert!(db().gpus().len() >= 45, "{} GPUs", db().gpus().len());
    for id in [
        "tesla-c1060", "gtx-280", "quadro-fx-5600", "tesla-k20", "tesla-k40", "tesla-k80", "gtx-660", "gtx-680", "gt-630",
        "gtx-titan", "gtx-titan-black", "jetson-tk1", "quadro-k4200", "tesla-m60", "gtx-750", "gtx-970", "gtx-980",
        "gtx-titan-x", "gtx-1050", "tesla-p100-sxm2", "tesla-v100-sxm2-16gb", "tesla-t4", "a100-sxm4-40gb", "a100-sxm4-80gb",
        "a100-pcie-40gb", "a100-pcie-80gb", "a10", "a30", "l4", "l40s", "rtx-2080-ti", "rtx-3080", "rtx-3090", "rtx-4090",
        "rtx-5090", "h100-sxm", "h100-pcie", "h200", "b200", "jetson-agx-orin",
    ] {
        assert!(db().gpu(id).is_ok(), "missing {id}");
    }
}

#[test]
fn aliases_resolve() {
    assert_eq!(db().gpu("a100").map(|g| g.id.as_str()), Ok("a100-sxm4-80gb"));
    assert_eq!(db().gpu("K20").map(|g| g.id.as_str()), Ok("tesla-k20"));
    assert_eq!(db().gpu("v100").map(|g| g.id.as_str()), Ok("tesla-v100-sxm2-16gb"));
    assert_eq!(db().gpu("h100").map(|g| g.id.as_str()), Ok("h100-sxm"));
    assert_eq!(db().gpu("NVIDIA GeForce RTX 4090").map(|g| g.id.as_str()), Ok("rtx-4090"));
    assert_eq!(db().gpu("rtx 4090").map(|g| g.id.as_str()), Ok("rtx-4090"));
}

#[test]
fn unknown_gpu_suggests_close_ids() {
    let err = db().gpu("h100-sxn").unwrap_err();
    assert_eq!(err.suggestions.first().map(String::as_str), Some("h100-sxm"), "{err}");
    let err = db().gpu("rtx-4095").unwrap_err();
    assert!(err.suggestions.iter().any(|s| s == "rtx-4090"), "{err}");
    assert!(err.to_string().contains("unknown GPU `rtx-4095`"));
}

#[test]
fn every_number_has_a_source() {
    // Fields whose value is a number: each must have a source entry.
    for g in db().gpus() {
        for field in [
            "sm_count", "base_clock_mhz", "boost_clock_mhz", "mem_bytes", "mem_bus_width_bits", "mem_data_rate_gbps",
            "mem_bandwidth_gbs", "l1_shared_bytes_per_sm", "l2_bytes", "tdp_w", "idle_power_w", "units.fp32_per_sm",
            "units.fp64_per_sm", "units.int32_per_sm", "units.sfu_per_sm", "units.ldst_per_sm", "units.tensor_cores_per_sm",
            "units.warp_schedulers_per_sm", "units.dispatch_units_per_sm", "dram_latency_cycles", "l2_latency_cycles",
            "l1_latency_cycles", "shared_latency_cycles", "departure_delay_coalesced_cycles",
            "departure_delay_uncoalesced_cycles", "l2_departure_delay_cycles", "dram_departure_delay_cycles",
        ] {
            let src = g.source(field).unwrap_or_else(|| panic!("{}: no source for {field}", g.id));
            assert!(src.len() >= 4, "{}: source of {field} too short: {src}", g.id);
        }
        for k in g.issue_cycles.keys() {
            assert!(g.source(&format!("issue_cycles.{k}")).is_some(), "{}: issue_cycles.{k}", g.id);
        }
        for k in g.instr_latency_cycles.keys() {
            assert!(g.source(&format!("instr_latency_cycles.{k}")).is_some(), "{}: instr_latency_cycles.{k}", g.id);
        }
        for k in g.model_params.keys() {
            assert!(g.source(&format!("model_params.{k}")).is_some(), "{}: model_params.{k}", g.id);
        }
        assert!(g.source("idle_power_w").is_some_and(|s| s.starts_with("estimate:")), "{}: idle power must say it is an estimate", g.id);
    }
    for cc in db().compute_capabilities() {
        let sources = db().cc_sources(cc.cc).expect("sources");
        assert!(sources.len() >= 20, "CC {}: {} sources", cc.cc, sources.len());
    }
}

#[test]
fn a_value_without_a_source_is_rejected() {
    let mut files: Vec<(&str, &str)> = gpu_spec::db::BUILTIN_FILES.iter().copied().filter(|(n, _)| !n.starts_with("gpus/")).collect();
    let bad_gpu = r#"
[[gpu]]
id = "bad"
name = "Bad"
sm_arch = "gk110"
cc = "3.5"
segment = "desktop"
year = 2013
mem_type = "GDDR5"
sm_count = 13
base_clock_mhz = { v = 700.0, src = "k20-ds" }
"#;
    files.push(("gpus/bad.toml", bad_gpu));
    let db = Database::from_files(&files);
    assert!(db.gpus().is_empty());
    assert!(db.errors().iter().any(|e| e.file == "gpus/bad.toml"), "{:?}", db.errors());

    let unknown_ref = gpu_spec::db::BUILTIN_FILES
        .iter()
        .find(|(n, _)| *n == "gpus/kepler.toml")
        .map(|(_, t)| t.replace("\"seed001 Table I\"", "\"nowhere 7\""))
        .expect("kepler file");
    let mut files: Vec<(&str, &str)> = gpu_spec::db::BUILTIN_FILES.iter().copied().filter(|(n, _)| !n.starts_with("gpus/")).collect();
    files.push(("gpus/kepler.toml", &unknown_ref));
    let db = Database::from_files(&files);
    assert!(db.errors().iter().any(|e| e.message.contains("nowhere 7")), "{:?}", db.errors());
}

#[test]
fn bandwidth_matches_bus_width_times_data_rate() {
    for g in db().gpus() {
        let computed = g.mem_bus_width_bits as f64 * g.mem_data_rate_gbps / 8.0;
        let rel = (computed - g.mem_bandwidth_gbs).abs() / g.mem_bandwidth_gbs;
        assert!(rel < 0.05, "{}: {} bit x {} Gbps = {computed:.1} GB/s vs {} GB/s", g.id, g.mem_bus_width_bits, g.mem_data_rate_gbps, g.mem_bandwidth_gbs);
    }
}

#[test]
fn units_and_clocks_are_plausible() {
    for g in db().gpus() {
        assert!((300.0..=3000.0).contains(&g.boost_clock_mhz), "{}: boost {}", g.id, g.boost_clock_mhz);
        assert!((300.0..=3000.0).contains(&g.base_clock_mhz), "{}: base {}", g.id, g.base_clock_mhz);
        assert!(g.base_clock_mhz <= g.boost_clock_mhz, "{}: base above boost", g.id);
        assert!((1..=200).contains(&g.sm_count), "{}: {} SMs", g.id, g.sm_count);
        assert!([8, 32, 48, 64, 128, 192].contains(&g.units.fp32_per_sm), "{}: {} FP32/SM", g.id, g.units.fp32_per_sm);
        assert!((8..=25_000).contains(&g.cuda_cores()), "{}: {} cores", g.id, g.cuda_cores());
        assert!(g.units.warp_schedulers_per_sm >= 1 && g.units.dispatch_units_per_sm >= g.units.warp_schedulers_per_sm, "{}", g.id);
        assert!((32..=8192).contains(&g.mem_bus_width_bits), "{}: bus {}", g.id, g.mem_bus_width_bits);
        assert!((5.0..=10_000.0).contains(&g.mem_bandwidth_gbs), "{}: bandwidth {}", g.id, g.mem_bandwidth_gbs);
        assert!(g.mem_bytes >= 1 << 30, "{}: memory {}", g.id, g.mem_bytes);
        assert!((5.0..=1200.0).contains(&g.tdp_w), "{}: TDP {}", g.id, g.tdp_w);
        assert!(g.idle_power_w > 0.0 && g.idle_power_w < g.tdp_w, "{}: idle {}", g.id, g.idle_power_w);
        assert!(g.l1_shared_bytes_per_sm >= 16 * 1024, "{}", g.id);
        // Latencies are ordered: shared/L1 < L2 <= DRAM.
        assert!(g.shared_latency_cycles < g.l2_latency_cycles && g.l2_latency_cycles <= g.dram_latency_cycles, "{}", g.id);
        assert!(g.dram_latency_cycles >= 200.0 && g.dram_latency_cycles <= 1000.0, "{}: DRAM latency {}", g.id, g.dram_latency_cycles);
        // The CC's shared memory per SM fits in the SM's L1/shared storage.
        assert!(g.limits.smem_per_sm_bytes <= g.l1_shared_bytes_per_sm.max(48 * 1024) + 16 * 1024 || g.cc.major == 3, "{}", g.id);
        assert_eq!(g.limits.cc, g.cc);
    }
}

#[test]
fn published_peaks_are_reproduced() {
    // Peak FP32 from the whitepapers: V100 SXM2 15.7 TFLOPS (gv100-wp Table 1), A100 19.5
    // (ga100-wp Table 1), H100 SXM 67 (gh100-wp Table 3), RTX 4090 82.6 (ada-wp).
    for (id, tflops) in [("tesla-v100-sxm2-16gb", 15.7), ("a100-sxm4-80gb", 19.5), ("h100-sxm", 66.9), ("rtx-4090", 82.6)] {
        let g = db().gpu(id).expect("gpu");
        let got = g.peak_fp32_gflops() / 1000.0;
        assert!((got - tflops).abs() / tflops < 0.02, "{id}: {got:.2} TFLOPS vs {tflops}");
    }
    // FP64: A100 9.7 TFLOPS, H100 SXM 33.5.
    let a100 = db().gpu("a100").expect("a100");
    assert!((a100.peak_fp64_gflops() / 1000.0 - 9.7).abs() < 0.2);
}

#[test]
fn seed_values_are_carried() {
    let c1060 = db().gpu("tesla-c1060").expect("c1060");
    assert_eq!(c1060.dram_latency_cycles, 450.0);
    assert_eq!(c1060.model_params["seed002.dep_delay_128b_cycles"], 58.0);
    assert_eq!(c1060.issue_cycles("fp32"), 4.0);
    let tk1 = db().gpu("tk1").expect("tk1");
    assert_eq!(tk1.l2_latency_cycles, 164.0);
    assert_eq!(tk1.model_params["seed003.mem_ld_dram_cycles"], 332.0);
    let k20 = db().gpu("k20").expect("k20");
    assert_eq!((k20.sm_count, k20.limits.max_warps_per_sm, k20.limits.max_blocks_per_sm), (13, 64, 16));
    assert_eq!(k20.instr_latency_cycles["divf"], 894.5);
    assert_eq!(db().gpu("m60").expect("m60").instr_latency_cycles["fma"], 188.0);
}

#[test]
fn every_cc_from_1_0_to_12_x_is_present() {
    for cc in ["1.0", "1.3", "2.0", "2.1", "3.0", "3.2", "3.5", "3.7", "5.0", "5.2", "5.3", "6.0", "6.1", "6.2", "7.0", "7.2", "7.5", "8.0", "8.6", "8.7", "8.9", "9.0", "10.0", "10.3", "11.0", "12.0", "12.1"] {
        let cc: ComputeCapability = cc.parse().expect("cc");
        assert!(db().cc(cc).is_some(), "missing CC {cc}");
    }
}
