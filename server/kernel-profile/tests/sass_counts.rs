//! The profile's floating-point instruction counts against what ptxas really emits: each
//! fixture kernel's PTX is assembled with ptxas and disassembled with nvdisasm (static
//! counts, the SASS text), and the FADD + FMUL + FFMA (DADD + DMUL + DFMA) instructions are
//! compared with the profile's `add`/`sub`/`mul`/`fma` nodes after contraction.
//!
//! Needs the CUDA toolchain (`ptxas`, `nvdisasm`: `nvidia-cuda-nvcc` and
//! `nvidia-cuda-nvdisasm` from scripts/cuda-requirements.txt, under
//! `$WARPSIGHT_CUDA_HOME/bin`); skipped with a message without it, unless
//! WARPSIGHT_REQUIRE_CUDA is set.
//!
//! Tolerance: none. The kernels are chosen so that ptxas does nothing to their
//! floating-point arithmetic beyond what the profile models (contraction): no `div.rn`,
//! `sqrt.rn` or `ex2` (expanded into several instructions) and no loop that ptxas unrolls
//! again (`matmul_naive`'s main loop, unrolled by 4 by nvcc, is unrolled by 4 more by
//! ptxas: 29 FFMAs in the text for 5 in the PTX, the same dynamic count). One expansion is
//! accounted for explicitly: a `rsqrt.approx.f32` without `.ftz` becomes MUFU.RSQ between
//! two predicated FMULs that scale denormal inputs (by 2^24, the result by 2^12), as
//! nvdisasm shows for `nbody_forces`; the test adds those 2 FMULs per instruction, which
//! the profile (counting PTX `rsqrt` as one SFU instruction) does not.

use std::path::{Path, PathBuf};
use std::process::Command;

use kernel_profile::InstrClass;

mod common;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `ptxas` and `nvdisasm`, or `None` (with the reason) when the toolchain lacks them.
fn tools() -> Result<(PathBuf, PathBuf), String> {
    let home = std::env::var_os("WARPSIGHT_CUDA_HOME").map(PathBuf::from).unwrap_or_else(|| root().join(".cuda/lib/python3.11/site-packages/nvidia/cu13"));
    let ptxas = home.join("bin/ptxas");
    let nvdisasm = std::env::var_os("WARPSIGHT_NVDISASM").map(PathBuf::from).unwrap_or_else(|| home.join("bin/nvdisasm"));
    for t in [&ptxas, &nvdisasm] {
        if !t.exists() {
            return Err(format!("{} not found", t.display()));
        }
    }
    Ok((ptxas, nvdisasm))
}

/// [`tools`], or `None` after saying why the test is skipped (an error when
/// WARPSIGHT_REQUIRE_CUDA is set).
fn tools_or_skip() -> Option<(PathBuf, PathBuf)> {
    match tools() {
        Ok(t) => Some(t),
        Err(why) => {
            assert!(std::env::var_os("WARPSIGHT_REQUIRE_CUDA").is_none(), "WARPSIGHT_REQUIRE_CUDA is set but {why}");
            #[allow(clippy::print_stderr)]
            {
                eprintln!("skipped: {why} (install scripts/cuda-requirements.txt; set WARPSIGHT_REQUIRE_CUDA=1 to make this an error)");
            }
            None
        }
    }
}

/// Hand-written PTX with every case of contraction the profile models: `mul`+`add` and
/// `mul`+`sub` fuse, `mul.rn`/`add.rn` do not, a product read twice does not, `.ftz` pairs
/// fuse, and so does an f64 pair.
const CONTRACTION_PTX: &str = ".version 9.5
.target sm_80
.address_size 64

.visible .entry contraction(.param .u64 p0)
{
\t.reg .f32 %f<16>;
\t.reg .f64 %fd<4>;
\t.reg .b64 %rd<2>;
\tld.param.u64 %rd1, [p0];
\tld.global.f32 %f1, [%rd1];
\tld.global.f32 %f2, [%rd1+4];
\tld.global.f32 %f3, [%rd1+8];
\tmul.f32 %f4, %f1, %f2;
\tadd.f32 %f5, %f4, %f3;
\tmul.f32 %f6, %f5, %f1;
\tsub.f32 %f7, %f3, %f6;
\tmul.rn.f32 %f8, %f7, %f2;
\tadd.f32 %f9, %f8, %f1;
\tmul.f32 %f10, %f9, %f9;
\tadd.rn.f32 %f11, %f10, %f2;
\tmul.f32 %f12, %f11, %f3;
\tadd.f32 %f13, %f12, %f12;
\tmul.ftz.f32 %f14, %f13, %f3;
\tadd.ftz.f32 %f15, %f14, %f1;
\tst.global.f32 [%rd1], %f15;
\tld.global.f64 %fd1, [%rd1];
\tmul.f64 %fd2, %fd1, %fd1;
\tadd.f64 %fd3, %fd2, %fd1;
\tst.global.f64 [%rd1], %fd3;
\tret;
}
";

/// Per kernel (mangled name): (FADD+FMUL+FFMA, DADD+DMUL+DFMA) in the SASS of `ptx`.
fn sass_counts(ptxas: &Path, nvdisasm: &Path, ptx: &Path) -> Vec<(String, u64, u64)> {
    let name = ptx.file_stem().and_then(|s| s.to_str()).unwrap_or("k");
    let cubin = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("sass-counts-{name}.cubin"));
    let st = Command::new(ptxas).arg("-arch=sm_80").arg(ptx).arg("-o").arg(&cubin).status().expect("ptxas runs");
    assert!(st.success(), "ptxas failed on {}", ptx.display());
    let out = Command::new(nvdisasm).arg("-c").arg(&cubin).output().expect("nvdisasm runs");
    assert!(out.status.success(), "nvdisasm failed: {}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    let mut res: Vec<(String, u64, u64)> = Vec::new();
    for line in text.lines() {
        let l = line.trim();
        if let Some(name) = l.strip_prefix(".section\t.text.").or_else(|| l.strip_prefix(".section .text.")) {
            res.push((name.split(',').next().unwrap_or("").trim().to_string(), 0, 0));
            continue;
        }
        // `/*0390*/  @!P1 FFMA R0, ...`: the mnemonic after the address and the guard.
        let Some(rest) = l.strip_prefix("/*").and_then(|r| r.split_once("*/")).map(|(_, r)| r.trim()) else { continue };
        let mut words = rest.split_whitespace();
        let mut op = words.next().unwrap_or("");
        if op.starts_with('@') {
            op = words.next().unwrap_or("");
        }
        let base = op.split('.').next().unwrap_or("");
        if let Some(last) = res.last_mut() {
            match base {
                "FADD" | "FMUL" | "FFMA" => last.1 += 1,
                "DADD" | "DMUL" | "DFMA" => last.2 += 1,
                _ => {}
            }
        }
    }
    res
}

/// The profile's static (fp32, fp64) add/sub/mul/fma instructions as ptxas issues them.
fn profile_counts(p: &kernel_profile::KernelProfile) -> (u64, u64) {
    let mut n = (0, 0);
    for i in p.blocks.iter().flat_map(|b| &b.instructions) {
        let base = i.opcode.split('.').next().unwrap_or("");
        if !matches!(base, "add" | "sub" | "mul" | "fma") {
            continue;
        }
        match i.class {
            InstrClass::Fp32 if i.opcode.ends_with(".f32") => n.0 += 1,
            InstrClass::Fp64 if i.opcode.ends_with(".f64") => n.1 += 1,
            _ => {}
        }
    }
    n
}

/// `rsqrt.approx.f32` instructions without `.ftz` in the profile's blocks.
fn rsqrt_without_ftz(p: &kernel_profile::KernelProfile) -> u64 {
    p.blocks.iter().flat_map(|b| &b.instructions).filter(|i| i.opcode.starts_with("rsqrt.approx") && i.opcode.ends_with(".f32") && !i.opcode.contains(".ftz")).count() as u64
}

#[test]
fn fp_counts_match_ptxas() {
    let Some((ptxas, nvdisasm)) = tools_or_skip() else { return };
    let files = ["vadd", "saxpy", "stencil2d", "stencil3d", "matmul_tiled", "conv2d", "conv1d", "traffic", "nbody", "reduce_tree", "grid_stride", "transpose_naive"];
    let (mut total_sass, mut total_ours) = (0u64, 0u64);
    let mut report = Vec::new();
    for file in files {
        let path = root().join(format!("tests/fixtures/ptx/sm_80/{file}.ptx"));
        for (kernel, f32s, f64s) in sass_counts(&ptxas, &nvdisasm, &path) {
            let p = common::profile(file, &kernel, [1, 1, 1], [256, 1, 1], &[]);
            let (o32, o64) = profile_counts(&p);
            let (sass, ours) = (f32s + f64s, o32 + o64);
            total_sass += sass;
            total_ours += ours;
            let expansions = 2 * rsqrt_without_ftz(&p);
            report.push(format!("{kernel}: SASS {f32s} fp32 + {f64s} fp64, profile {o32} + {o64}, rsqrt scaling {expansions}"));
            assert_eq!(sass, ours + expansions, "{kernel}: SASS {sass} against {ours} + {expansions}\n{}", report.join("\n"));
        }
    }
    assert!(total_sass > 150, "{total_sass}: the comparison covers too little");
    assert!(total_ours > 0);
}

#[test]
fn contraction_matches_ptxas() {
    let Some((ptxas, nvdisasm)) = tools_or_skip() else { return };
    let path = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("contraction.ptx");
    std::fs::write(&path, CONTRACTION_PTX).expect("write the PTX");
    let sass = sass_counts(&ptxas, &nvdisasm, &path);
    assert_eq!(sass.len(), 1, "{sass:?}");
    let p = common::profile_text(CONTRACTION_PTX, "contraction", "contraction", [1, 1, 1], [32, 1, 1], &[]);
    // 12 fp32 add/sub/mul in the text, 3 pairs fused (mul+add, mul+sub, the .ftz pair),
    // and the f64 pair: 9 fp32 + 1 fp64 issued.
    assert_eq!(profile_counts(&p), (9, 1));
    assert_eq!((sass[0].1, sass[0].2), profile_counts(&p));
}

/// Two bounds-checked tile loads, as nvcc writes `t[i] = (in range) ? a[...] : 0` twice: each
/// a branch around a body of `body` PTX instructions (the address arithmetic, then the
/// load), a shared store of the result after its join, then a barrier.
fn guarded_loads_ptx(body: usize, bodies: usize) -> String {
    let mut text = String::from(
        ".version 9.5\n.target sm_80\n.address_size 64\n.extern .shared .align 16 .b8 tiles[];\n\
         .visible .entry g(.param .u64 g_a, .param .u32 g_k)\n{\n\
         \t.reg .pred %p<4>;\n\t.reg .b32 %r<64>;\n\t.reg .b64 %rd<64>;\n\
         \tld.param.u64 %rd1, [g_a];\n\tld.param.u32 %r2, [g_k];\n\tcvta.to.global.u64 %rd3, %rd1;\n\
         \tmov.u32 %r3, %tid.x;\n\tmov.u32 %r4, %tid.y;\n\tmov.u32 %r14, tiles;\n\tshl.b32 %r15, %r3, 2;\n\tadd.s32 %r14, %r14, %r15;\n",
    );
    for b in 0..bodies {
        let (r, out) = (20 + 10 * b, 16 + b);
        text += &format!("\tsetp.ge.s32 %p{}, %r{}, %r2;\n\tmov.u32 %r{out}, 0;\n\t@%p{} bra $L{b};\n", b + 1, 3 + b % 2, b + 1);
        text += &format!("\tmad.lo.s32 %r{r}, %r4, %r2, %r3;\n");
        for _ in 0..body.saturating_sub(4) {
            text += &format!("\tmad.lo.s32 %r{r}, %r{r}, %r2, %r3;\n");
        }
        text += &format!("\tmul.wide.s32 %rd{r}, %r{r}, 4;\n\tadd.s64 %rd{}, %rd3, %rd{r};\n\tld.global.u32 %r{out}, [%rd{}];\n", r + 1, r + 1);
        text += &format!("$L{b}:\n\tst.shared.u32 [%r14+{}], %r{out};\n", 1024 * b);
    }
    text + "\tbar.sync 0;\n\tret;\n}\n"
}

/// (predicated LDGs, conditional branches) in the SASS of `ptx`.
fn predicated_loads(ptxas: &Path, nvdisasm: &Path, ptx: &str, name: &str) -> (usize, usize) {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let (path, cubin) = (dir.join(format!("{name}.ptx")), dir.join(format!("{name}.cubin")));
    std::fs::write(&path, ptx).expect("write the PTX");
    let st = Command::new(ptxas).arg("-arch=sm_80").arg(&path).arg("-o").arg(&cubin).status().expect("ptxas runs");
    assert!(st.success(), "ptxas failed on {}", path.display());
    let out = Command::new(nvdisasm).arg(&cubin).output().expect("nvdisasm runs");
    let text = String::from_utf8_lossy(&out.stdout);
    let guarded = |op: &str| text.lines().filter(|l| l.contains(" @P") || l.contains(" @!P")).filter(|l| l.split_whitespace().any(|w| w.starts_with(op))).count();
    (guarded("LDG"), guarded("BRA"))
}

/// What the `bottleneck` model's guarded-body rule (`IF_CONVERTED_MAX_INSTRUCTIONS` = 20 in
/// perf-models/src/bottleneck.rs: consecutive bodies of at most that many instructions count
/// once, their loads in flight together) takes from ptxas: two consecutive bounds-checked
/// loads of 20 PTX instructions each are issued as predicated `LDG`s with no branch (ptxas
/// hoists both loads above both shared stores), of 21 keep their branches; a single such
/// body keeps its branch (the rule's group of one changes nothing then).
#[test]
fn ptxas_predicates_consecutive_guarded_loads_of_up_to_20_instructions() {
    let Some((ptxas, nvdisasm)) = tools_or_skip() else { return };
    assert_eq!(predicated_loads(&ptxas, &nvdisasm, &guarded_loads_ptx(4, 2), "guarded-4"), (2, 0));
    assert_eq!(predicated_loads(&ptxas, &nvdisasm, &guarded_loads_ptx(20, 2), "guarded-20"), (2, 0));
    assert_eq!(predicated_loads(&ptxas, &nvdisasm, &guarded_loads_ptx(21, 2), "guarded-21"), (0, 2));
    assert_eq!(predicated_loads(&ptxas, &nvdisasm, &guarded_loads_ptx(4, 1), "guarded-one"), (0, 1));
}

/// The self loops of the SASS of `ptx` (sm_86) by kernel: for each kernel, (instructions,
/// loads) of the block between a label and a conditional branch back to it with the most
/// loads.
fn sass_loops(ptxas: &Path, nvdisasm: &Path, ptx: &Path) -> Vec<(String, usize, usize)> {
    let cubin = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("sass-loops.cubin");
    let st = Command::new(ptxas).arg("-arch=sm_86").arg(ptx).arg("-o").arg(&cubin).status().expect("ptxas runs");
    assert!(st.success(), "ptxas failed on {}", ptx.display());
    let out = Command::new(nvdisasm).arg(&cubin).output().expect("nvdisasm runs");
    assert!(out.status.success(), "nvdisasm failed: {}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    let mut res: Vec<(String, usize, usize)> = Vec::new();
    let (mut label, mut n, mut loads) = (String::new(), 0, 0);
    for line in text.lines() {
        let l = line.trim();
        if let Some(name) = l.strip_prefix(".text.").and_then(|r| r.strip_suffix(':')) {
            res.push((name.to_string(), 0, 0));
            (label, n, loads) = (String::new(), 0, 0);
            continue;
        }
        if let Some(lab) = l.strip_suffix(':').filter(|x| x.starts_with(".L_")) {
            (label, n, loads) = (lab.to_string(), 0, 0);
            continue;
        }
        let Some(rest) = l.strip_prefix("/*").and_then(|r| r.split_once("*/")).map(|(_, r)| r.trim()) else { continue };
        n += 1;
        if rest.contains("LDS") || rest.contains("LDG") {
            loads += 1;
        }
        if rest.starts_with('@')
            && rest.contains("BRA")
            && !label.is_empty()
            && rest.contains(&format!("`({label})"))
            && let Some(last) = res.last_mut().filter(|r| loads > r.2)
        {
            (last.1, last.2) = (n, loads);
        }
    }
    res
}

/// `sass.rs` item 8 against ptxas: nvcc's loops unrolled by 4 with a run-time trip count
/// (tests/ptx/partial_unroll.cu) are unrolled by 4 more unless four copies of their body
/// pass `PARTIAL_UNROLL_INSTRUCTIONS`, their exit tests a sum rather than their counter, or
/// the source said `#pragma unroll 1`. The profile's instructions per thread for 1024 more
/// iterations are what the SASS loop issues for them (its instructions once per group of
/// copies), within 3 % (`grid_sum`, a grid-stride sum, with items 9 and 10 as well: its
/// adds as three-input `IADD3`s, `in + i` as `IMAD.WIDE`); `dot_unsigned`, whose PTX spends a `mul.wide` and an `add` per
/// load where the SASS spends an `IMAD.WIDE.U32` and moves, within 12 %; `taps_rolled`,
/// whose one copy keeps `b + j` in uniform registers and moves it into a register pair
/// for each load (`IMAD.U32`, `MOV`: 11 instructions where the profile counts 9), within
/// 20 %.
#[test]
fn loops_unrolled_in_part_issue_what_ptxas_issues() {
    let Some((ptxas, nvdisasm)) = tools_or_skip() else { return };
    let path = root().join("server/kernel-profile/tests/ptx/partial_unroll.ptx");
    let text = std::fs::read_to_string(&path).expect("the fixture PTX");
    let loops = sass_loops(&ptxas, &nvdisasm, &path);
    // (kernel, its bound parameter, loads per source iteration, copies ptxas issues per
    // loop iteration, tolerance, the bound per iteration of a thread: 64 for the grid-stride
    // loop over 64 threads).
    let cases = [
        ("taps_shared", "taps_shared_param_3", 2, 16, 0.03, 1),
        ("taps_eight", "taps_eight_param_2", 8, 16, 0.03, 1),
        ("taps_ten", "taps_ten_param_2", 10, 4, 0.03, 1),
        ("dot_signed", "dot_signed_param_3", 2, 16, 0.03, 1),
        ("dot_unsigned", "dot_unsigned_param_3", 2, 4, 0.12, 1),
        ("taps_rolled", "taps_rolled_param_3", 2, 1, 0.20, 1),
        ("grid_sum", "grid_sum_param_2", 1, 16, 0.03, 64),
    ];
    for (kernel, bound, per_iteration, copies, tolerance, scale) in cases {
        let &(_, instrs, loads) = loops.iter().find(|l| l.0 == kernel).unwrap_or_else(|| panic!("{kernel} not in the SASS: {loops:?}"));
        assert_eq!(loads, per_iteration * copies, "{kernel}: ptxas's loop holds {loads} loads ({instrs} instructions)");
        let total = |n: i64| common::profile_text(&text, "partial_unroll", kernel, [1, 1, 1], [64, 1, 1], &[(bound, n * scale)]).counts.total_dynamic();
        let ours = total(2048) - total(1024);
        let sass = (1024 / copies * instrs) as f64;
        assert!((ours / sass - 1.0).abs() <= tolerance, "{kernel}: the profile issues {ours} instructions for 1024 iterations, the SASS {sass} ({instrs} per {copies})");
    }
}
