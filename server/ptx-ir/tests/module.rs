//! Module facts, instruction classes, def-use chains, `.loc` mapping, calls and resources
//! on real nvcc output (`tests/data/mix.cu` → `mix.ptx`).
//!
//! The shared-memory and stack figures are checked against `ptxas -v -arch=sm_80` on the
//! same PTX (CUDA 13.5): `_Z3mixPfPKdPK6__halfyi` 256 bytes smem, 64 bytes stack frame.

use ptx_ir::{Dim, Function, InstrClass, Module, Space, SpecialReg, VarSpace};

fn load() -> (Module, String) {
    let path = format!("{}/tests/data/mix.ptx", env!("CARGO_MANIFEST_DIR"));
    let src = std::fs::read_to_string(path).expect("fixture");
    let (m, errors) = ptx_ir::parse_and_lower(&src);
    assert!(errors.is_empty(), "{errors:?}");
    (m, src)
}

fn func<'m>(m: &'m Module, name: &str) -> &'m Function {
    m.function(name)
        .unwrap_or_else(|| panic!("no function {name}"))
}

/// The 1-based line of the first line containing `needle`.
fn line_of(src: &str, needle: &str) -> u32 {
    src.lines()
        .position(|l| l.contains(needle))
        .expect("needle in source") as u32
        + 1
}

#[test]
fn module_level_facts() {
    let (m, _) = load();
    assert_eq!(m.version, Some((9, 5)));
    assert_eq!(m.target.as_deref(), Some("sm_80"));
    assert_eq!(m.sm, Some(80));
    assert_eq!(m.address_size, Some(64));
    assert_eq!(m.file(1), Some("mix.cu"));
    assert_eq!(m.files.len(), 6);
    let coeffs = m.variable("coeffs").expect("coeffs");
    assert_eq!(
        (coeffs.space, coeffs.size_bytes),
        (VarSpace::Const, Some(64))
    );
    let counter = m.variable("counter").expect("counter");
    assert_eq!(
        (counter.space, counter.size_bytes),
        (VarSpace::Global, Some(4))
    );
    let dynamic: Vec<&str> = m.extern_shared().map(|v| v.name.as_str()).collect();
    assert_eq!(dynamic, ["dyn"]);
    let kernels: Vec<&str> = m.kernels().map(|f| f.name.as_str()).collect();
    assert_eq!(kernels, ["_Z3mixPfPKdPK6__halfyi", "_Z2tcPK6__halfS1_Pf"]);
}

#[test]
fn instruction_classes_of_a_mixed_kernel() {
    let (m, _) = load();
    let f = func(&m, "_Z3mixPfPKdPK6__halfyi");
    let c = f.class_counts();
    let n = |k: InstrClass| c.get(&k).copied().unwrap_or(0);
    assert_eq!(n(InstrClass::Load(Space::Texture)), 1, "tex1Dfetch");
    assert_eq!(n(InstrClass::Atomic(Space::Global)), 1, "atomicAdd");
    assert_eq!(n(InstrClass::WarpLevel), 1, "__shfl_down_sync");
    assert_eq!(n(InstrClass::Barrier), 1, "__syncthreads");
    assert_eq!(n(InstrClass::Call), 1, "helper() is noinline");
    assert_eq!(n(InstrClass::Load(Space::Shared)), 1);
    assert_eq!(n(InstrClass::Store(Space::Shared)), 1);
    assert!(n(InstrClass::Fp64) >= 1, "d * 2.0 + 1.0");
    assert!(n(InstrClass::Fp16) >= 1, "__hadd");
    assert!(n(InstrClass::Store(Space::Local)) >= 1, "local_arr");
    assert_eq!(
        n(InstrClass::Other),
        0,
        "every opcode of this kernel has a class"
    );

    let helper = func(&m, "_Z6helperf");
    assert_eq!(
        helper.class_counts().get(&InstrClass::Sfu),
        Some(&1),
        "__expf → ex2.approx"
    );
    assert_eq!(
        helper.class_counts().get(&InstrClass::Load(Space::Const)),
        Some(&1)
    );

    let tc = func(&m, "_Z2tcPK6__halfS1_Pf");
    let c = tc.class_counts();
    assert_eq!(c.get(&InstrClass::Tensor), Some(&1), "wmma.mma");
    assert_eq!(
        c.get(&InstrClass::Load(Space::Global)),
        Some(&2),
        "wmma.load a, b"
    );
    assert_eq!(
        c.get(&InstrClass::Store(Space::Global)),
        Some(&1),
        "wmma.store"
    );
}

#[test]
fn def_use_chains() {
    let (m, _) = load();
    let f = func(&m, "_Z6helperf");
    let reg = |name: &str| f.reg_by_name(name).unwrap_or_else(|| panic!("{name}"));
    // add.s32 %r5, %r4, %r3;
    let def = f.unique_def(reg("%r5")).expect("one def of %r5");
    let add = &f.instrs[def as usize];
    assert_eq!(&*add.opcode, "add.s32");
    assert_eq!(f.dsts(add), [reg("%r5")]);
    assert_eq!(f.srcs(add), [reg("%r4"), reg("%r3")]);
    // st.shared.f32 [%r5], %f1;  → no destination, reads the address base and the value.
    let st = f
        .instrs
        .iter()
        .find(|i| &*i.opcode == "st.shared.f32")
        .expect("store");
    assert!(f.dsts(st).is_empty());
    assert_eq!(f.srcs(st), [reg("%r5"), reg("%f1")]);
    assert_eq!(f.uses_of(reg("%r5")).len(), 1);
    // mov.u32 %r1, %tid.x;  → %tid.x is a special register with no definition.
    let tid = reg("%tid.x");
    assert_eq!(
        f.register(tid).and_then(|r| r.special),
        Some(SpecialReg::Tid(Dim::X))
    );
    assert!(f.defs_of(tid).is_empty());
    // The affine chain the profile follows: %r2 = shl %r1, 2 with %r1 = %tid.x.
    let shl = &f.instrs[f.unique_def(reg("%r2")).expect("def") as usize];
    assert_eq!(shl.base(), "shl");
    assert_eq!(f.operands_of(shl)[2].imm(), Some(2));
    assert_eq!(
        f.register(reg("%r2")).and_then(|r| r.ty.as_deref()),
        Some("b32")
    );
    // Declared registers by type.
    assert_eq!(f.reg_decls.get("f32"), Some(&8));
    assert_eq!(f.reg_decls.get("b32"), Some(&9));
    assert_eq!(f.reg_decls.get("b64"), Some(&5));

    // `shfl.sync.down.b32 %r19|%p1, ...` writes both halves of the pair.
    let k = func(&m, "_Z3mixPfPKdPK6__halfyi");
    let shfl = k.instrs.iter().find(|i| i.base() == "shfl").expect("shfl");
    let dsts: Vec<&str> = k.dsts(shfl).iter().map(|&r| k.reg_name(r)).collect();
    assert_eq!(dsts, ["%r19", "%p1"]);
    // `tex.1d.v4.f32.s32 {%f22, ...}, [%rd6, {%r13}]` writes 4 and reads the handle and
    // the coordinate.
    let tex = k.instrs.iter().find(|i| i.base() == "tex").expect("tex");
    assert_eq!(k.dsts(tex).len(), 4);
    let srcs: Vec<&str> = k.srcs(tex).iter().map(|&r| k.reg_name(r)).collect();
    assert_eq!(srcs, ["%rd6", "%r13"]);
    assert_eq!(tex.vector_width(), 4);
}

#[test]
fn loc_and_ptx_lines() {
    let (m, src) = load();
    let f = func(&m, "_Z6helperf");
    // `bar.warp.sync` comes from __syncwarp() inlined from cuda headers (file 2) at
    // mix.cu:13:5.
    let bar = f
        .instrs
        .iter()
        .find(|i| &*i.opcode == "bar.warp.sync")
        .expect("bar");
    let loc = f.loc(bar).expect("loc");
    assert_eq!(loc.file, 2);
    assert_eq!(loc.inlined_at, Some((1, 13, 5)));
    assert_eq!(bar.ptx_line, line_of(&src, "bar.warp.sync"));
    assert_eq!(bar.class, InstrClass::Barrier);
    // ex2.approx.f32 follows `.loc 1 14 5`.
    let ex2 = f.instrs.iter().find(|i| i.base() == "ex2").expect("ex2");
    let loc = f.loc(ex2).expect("loc");
    assert_eq!((loc.file, loc.line, loc.column), (1, 14, 5));
    assert_eq!(m.file(loc.file), Some("mix.cu"));
    assert_eq!(ex2.ptx_line, line_of(&src, "ex2.approx.f32"));
    // The very first instruction follows the function's opening `.loc 1 11 0`.
    let first = &f.instrs[0];
    assert_eq!(f.loc(first).map(|l| l.line), Some(11));
    assert_eq!(
        f.ptx_line,
        line_of(&src, ".func  (.param .b32 func_retval0) _Z6helperf(")
    );
}

#[test]
fn calls_resources_and_directives() {
    let (m, _) = load();
    let k = func(&m, "_Z3mixPfPKdPK6__halfyi");
    let callees: Vec<Option<&str>> = k.calls.iter().map(|c| c.callee.as_deref()).collect();
    assert_eq!(callees, [Some("_Z6helperf")]);
    assert_eq!(k.instrs[k.calls[0].instr as usize].class, InstrClass::Call);
    // The demoted `__shared__` array of helper counts for the kernel that calls it.
    let helper = func(&m, "_Z6helperf");
    assert_eq!(helper.static_smem_bytes, 256);
    assert_eq!(k.static_smem_bytes, 256, "ptxas -v: 256 bytes smem");
    assert_eq!(k.local_bytes, 64, "ptxas -v: 64 bytes stack frame");
    assert_eq!(k.perf.maxntid, Some([128, 1, 1]));
    assert_eq!(k.perf.minnctapersm, None);
    assert_eq!(k.params.len(), 5);
    assert_eq!(k.param_index("_Z3mixPfPKdPK6__halfyi_param_4"), Some(4));
    let tc = func(&m, "_Z2tcPK6__halfS1_Pf");
    assert_eq!(tc.static_smem_bytes, 0);
    assert!(tc.calls.is_empty());
}
