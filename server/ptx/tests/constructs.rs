//! One small PTX snippet per construct, with assertions on the tree.

use ptx::{
    Address, AddressBase, FloatLit, FunctionKind, Instruction, Item, Linkage, Module, Operand,
    Parse, Severity, Statement,
};

fn parse_clean(src: &str) -> Parse<'_> {
    let p = ptx::parse(src);
    assert!(
        p.errors.is_empty(),
        "unexpected diagnostics: {:#?}",
        p.errors
    );
    p
}

/// Wraps body text into a kernel and returns the body's statements.
fn body(src: &str) -> Vec<Statement<'_>> {
    let p = parse_clean(src);
    let f = p.module.functions().next().cloned().expect("a function");
    f.body.expect("a body").statements
}

fn instructions<'a>(stmts: &[Statement<'a>]) -> Vec<Instruction<'a>> {
    stmts
        .iter()
        .filter_map(|s| match s {
            Statement::Instruction(i) => Some(i.clone()),
            _ => None,
        })
        .collect()
}

const HEADER: &str = ".version 9.0\n.target sm_90a\n.address_size 64\n";

fn kernel(body_text: &str) -> String {
    format!("{HEADER}.visible .entry k()\n{{\n{body_text}\n}}\n")
}

#[test]
fn module_directives() {
    let src = ".version 9.5\n.target sm_90a, debug\n.address_size 64\n.file 1 \"k.cu\"\n.file 2 \"inc/h.h\", 1700000000, 1234\n";
    let p = parse_clean(src);
    let m: &Module<'_> = &p.module;
    assert_eq!(m.version, Some((9, 5)));
    assert_eq!(m.target, ["sm_90a", "debug"]);
    assert_eq!(m.address_size, Some(64));
    assert_eq!(m.files.len(), 2);
    assert_eq!(m.file(2), Some("inc/h.h"));
    assert_eq!(&src[m.files[0].span.range()], ".file 1 \"k.cu\"");
}

#[test]
fn debug_sections_are_skipped_as_one_item() {
    let src = format!(
        "{HEADER}.section .debug_info\n{{\n.b32 172\n.b8 2 // }} in a comment\n$L__info_string0: .b8 104,0 /* }} */\n.b64 $L__func_begin0\n}}\n.section .debug_macinfo {{ }}\n"
    );
    let p = parse_clean(&src);
    let sections: Vec<_> = p
        .module
        .items
        .iter()
        .filter(|it| matches!(it, Item::Section(_)))
        .collect();
    assert_eq!(sections.len(), 2);
    if let Item::Section(span) = sections[0] {
        assert!(src[span.range()].starts_with(".section .debug_info"));
        assert!(src[span.range()].ends_with('}'));
    }
}

#[test]
fn linkage_and_variables_in_every_state_space() {
    let src = format!(
        "{HEADER}.extern .func (.param .b32 func_retval0) vprintf\n(\n\t.param .b64 vprintf_param_0,\n\t.param .b64 vprintf_param_1\n)\n;\n\
         .const .align 4 .b8 coeffs[64];\n\
         .visible .global .align 4 .u32 gcounter;\n\
         .global .align 1 .b8 $str[13] = {{104, 101, 108, 108, 111, 32, 37, 100, 32, 37, 102, 10}};\n\
         .extern .shared .align 16 .b8 ds[];\n\
         .weak .global .v4 .f32 vec;\n\
         .global .u64 ptr = generic(gcounter)+4;\n\
         .common .global .align 8 .b8 m[2][3];\n\
         .global .attribute(.managed) .align 4 .u32 managed_v;\n\
         .global .texref tex0;\n"
    );
    let p = parse_clean(&src);
    let f = p.module.functions().next().expect("prototype");
    assert_eq!(
        (f.linkage, f.kind, f.name),
        (Linkage::Extern, FunctionKind::Func, "vprintf")
    );
    assert!(f.body.is_none());
    assert_eq!(f.return_params.len(), 1);
    assert_eq!(f.return_params[0].name, "func_retval0");
    assert_eq!(
        f.params.iter().map(|p| p.name).collect::<Vec<_>>(),
        ["vprintf_param_0", "vprintf_param_1"]
    );
    let vars: Vec<_> = p.module.variables().collect();
    let names: Vec<_> = vars.iter().map(|v| v.name).collect();
    assert_eq!(
        names,
        [
            "coeffs",
            "gcounter",
            "$str",
            "ds",
            "vec",
            "ptr",
            "m",
            "managed_v",
            "tex0"
        ]
    );
    assert_eq!(
        (
            vars[0].space,
            vars[0].align,
            vars[0].ty,
            vars[0].size_bytes()
        ),
        ("const", Some(4), "b8", Some(64))
    );
    assert_eq!(vars[1].linkage, Linkage::Visible);
    let init = vars[2].init.expect("initialiser");
    assert!(src[init.range()].starts_with("{104,") && src[init.range()].ends_with("10}"));
    assert_eq!(
        (vars[3].linkage, vars[3].space, vars[3].size_bytes()),
        (Linkage::Extern, "shared", None)
    );
    assert_eq!(
        (vars[4].linkage, vars[4].vector, vars[4].element_bytes()),
        (Linkage::Weak, Some(4), 16)
    );
    assert_eq!(
        &src[vars[5].init.expect("init").range()],
        "generic(gcounter)+4"
    );
    assert_eq!(
        (vars[6].linkage, vars[6].size_bytes()),
        (Linkage::Common, Some(6))
    );
    assert_eq!(vars[7].ty, "u32");
    assert_eq!(vars[8].ty, "texref");
    assert_eq!(&src[vars[1].name_span.range()], "gcounter");
}

#[test]
fn entry_with_params_and_performance_directives() {
    let src = format!(
        "{HEADER}.visible .entry _Z6reducePKfPfi(\n\t.param .u64 .ptr .global .align 8 p0,\n\t.param .align 16 .b8 p1[32],\n\t.param .u32 p2\n)\n.maxntid 256, 1, 1\n.minnctapersm 2\n.maxnreg 64\n.reqntid 128\n.pragma \"nounroll\";\n{{\n\tret;\n}}\n"
    );
    let p = parse_clean(&src);
    let f = p.module.functions().next().expect("kernel");
    assert_eq!(
        (f.kind, f.linkage, f.name),
        (FunctionKind::Entry, Linkage::Visible, "_Z6reducePKfPfi")
    );
    assert_eq!(&src[f.name_span.range()], "_Z6reducePKfPfi");
    assert_eq!(f.params.len(), 3);
    assert_eq!(f.params[0].attributes.as_slice(), ["ptr", "global"]);
    assert_eq!((f.params[0].align, f.params[0].ty), (Some(8), "u64"));
    assert_eq!(
        (f.params[1].ty, f.params[1].array_dims.as_slice()),
        ("b8", &[Some(32)][..])
    );
    let perf: Vec<_> = f.performance.iter().map(|d| (d.name, d.args)).collect();
    assert_eq!(
        perf,
        [
            ("maxntid", "256, 1, 1"),
            ("minnctapersm", "2"),
            ("maxnreg", "64"),
            ("reqntid", "128"),
            ("pragma", "\"nounroll\"")
        ]
    );
    assert!(src[f.span.range()].starts_with(".visible .entry"));
    assert!(src[f.span.range()].ends_with('}'));
}

#[test]
fn func_with_return_params_and_old_style_reg_params() {
    let src = format!(
        "{HEADER}.func (.reg .b32 r) add1(.reg .b32 a)\n{{\n\tadd.s32 r, a, 1;\n\tret;\n}}\n.weak .func noret() .noreturn\n{{\n\ttrap;\n}}\n"
    );
    let p = parse_clean(&src);
    let fs: Vec<_> = p.module.functions().collect();
    assert_eq!(fs[0].return_params[0].space, "reg");
    assert_eq!(fs[0].params[0].name, "a");
    assert_eq!(fs[1].linkage, Linkage::Weak);
    assert_eq!(fs[1].performance[0].name, "noreturn");
}

#[test]
fn reg_declarations_and_ranges() {
    let src =
        kernel(".reg .pred %p<17>;\n.reg .b32 %r<24>, %extra;\n.reg .v4 .f32 %v;\n.reg .b64 %SP;");
    let st = body(&src);
    let regs: Vec<_> = st
        .iter()
        .filter_map(|s| match s {
            Statement::RegDecl(r) => Some(r),
            _ => None,
        })
        .collect();
    assert_eq!(regs.len(), 4);
    assert_eq!(
        (regs[0].ty, regs[0].names[0].name, regs[0].names[0].range),
        ("pred", "%p", Some(17))
    );
    assert_eq!(regs[1].names.len(), 2);
    assert_eq!(
        (regs[1].names[1].name, regs[1].names[1].range),
        ("%extra", None)
    );
    assert_eq!((regs[2].ty, regs[2].vector), ("f32", Some(4)));
    assert_eq!(&src[regs[3].span.range()], ".reg .b64 %SP;");
}

#[test]
fn labels_guards_and_loc() {
    let src = kernel(
        "\t.loc\t1 7 3\n$L__BB1_2:\n\t@%p1 bra \t$L__BB1_2;\n\t@!%p2 bra.uni $L__BB1_2;\n\t.loc\t4 439 9, function_name $L__info_string2, inlined_at 1 18 3\n\t.loc 2 1 0, function_name $L__info_string0+12\n\tret;",
    );
    let st = body(&src);
    match &st[0] {
        Statement::Loc(l) => assert_eq!((l.file, l.line, l.column, l.inlined_at), (1, 7, 3, None)),
        other => panic!("{other:?}"),
    }
    match &st[1] {
        Statement::Label { name, span } => {
            assert_eq!(*name, "$L__BB1_2");
            assert_eq!(&src[span.range()], "$L__BB1_2");
        }
        other => panic!("{other:?}"),
    }
    let ins = instructions(&st);
    let g0 = ins[0].guard.expect("guard");
    assert_eq!((g0.negated, g0.register), (false, "%p1"));
    assert_eq!(&src[g0.span.range()], "@%p1");
    assert_eq!(ins[0].operands[0], Operand::Symbol("$L__BB1_2"));
    let g1 = ins[1].guard.expect("guard");
    assert_eq!((g1.negated, g1.register), (true, "%p2"));
    assert_eq!(ins[1].modifiers.as_slice(), ["uni"]);
    match &st[4] {
        Statement::Loc(l) => assert_eq!((l.file, l.line, l.inlined_at), (4, 439, Some((1, 18, 3)))),
        other => panic!("{other:?}"),
    }
    assert!(matches!(&st[5], Statement::Loc(l) if l.file == 2));
}

#[test]
fn opcodes_modifiers_and_types() {
    let src = kernel(
        "ld.global.nc.L1::no_allocate.v4.f32 {%f1, %f2, %f3, _}, [%rd1+16];\n\
         cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r4], [%rd1, {%r19, %r20}], [%r2];\n\
         tcgen05.mma.cta_group::1.kind::f16 [%r1], %rd2, %rd3, %r4, %p1;\n\
         wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%f1, %f2, %f3, %f4}, %rd4, %rd5, 1, 1, 1, 0, 0;\n\
         mad.lo.s32 %r1, %r3, %r4, %r5;",
    );
    let ins = instructions(&body(&src));
    assert_eq!(ins[0].opcode, "ld");
    assert_eq!(
        ins[0].modifiers.as_slice(),
        ["global", "nc", "L1::no_allocate", "v4", "f32"]
    );
    assert!(ins[0].has_modifier("nc"));
    assert_eq!(
        ins[0].operands[0],
        Operand::Vector(vec![
            Operand::Register("%f1"),
            Operand::Register("%f2"),
            Operand::Register("%f3"),
            Operand::Symbol("_")
        ])
    );
    assert_eq!(
        ins[0].operands[1],
        Operand::Address(Address {
            base: AddressBase::Register("%rd1"),
            offset: 16
        })
    );
    assert_eq!(&src[ins[0].operand_spans[1].range()], "[%rd1+16]");
    assert_eq!(ins[1].opcode, "cp");
    assert_eq!(ins[1].modifiers[6], "mbarrier::complete_tx::bytes");
    assert_eq!(ins[1].operands[1], Operand::Expr("[%rd1, {%r19, %r20}]"));
    assert_eq!(
        ins[1].operands[1].registers().as_slice(),
        ["%rd1", "%r19", "%r20"]
    );
    assert_eq!(
        ins[2].modifiers.as_slice(),
        ["mma", "cta_group::1", "kind::f16"]
    );
    assert_eq!(ins[3].operands.len(), 8);
    assert_eq!(ins[3].operands[3], Operand::Int(1));
    assert!(ins.iter().all(|i| i.known_opcode));
    assert_eq!(&src[ins[4].span.range()], "mad.lo.s32 %r1, %r3, %r4, %r5;");
}

#[test]
fn operand_forms() {
    let src = kernel(
        "mov.u32 %r1, %tid.x;\n\
         mov.u32 %r2, %ctaid.y;\n\
         mov.b32 %f1, 0f3F800000;\n\
         mov.f64 %fd1, 0d3FF0000000000000;\n\
         mov.b32 %f2, -0f3F800000;\n\
         add.s32 %r3, %r2, -4;\n\
         mov.u64 %rd1, 0xFFFFFFFFFFFFFFFF;\n\
         and.b32 %r4, %r1, 0b1010;\n\
         mov.u32 %r5, 42U;\n\
         mov.f32 %f3, 1.5;\n\
         shfl.sync.down.b32 %r12|%p12, %r7, %r10, %r9, %r11;\n\
         setp.ne.and.b32 %p1|%p2, %r1, 0, !%p3;\n\
         ld.shared.f32 %f4, [smem+-8];\n\
         ld.const.f32 %f5, [coeffs+12];\n\
         ld.global.u32 %r6, [1024];\n\
         st.param.f32 [func_retval0+0], %f4;\n\
         ld.local.u32 %r7, [%SP];\n\
         mov.u64 %rd2, $str;\n\
         mov.u64 %rd3, gvar+8;\n\
         mov.b64 {%r8, %r9}, %rd1;",
    );
    let ins = instructions(&body(&src));
    let ops: Vec<Operand<'_>> = ins
        .iter()
        .map(|i| i.operands.last().cloned().expect("operand"))
        .collect();
    assert_eq!(ops[0], Operand::Register("%tid.x"));
    assert_eq!(ops[1], Operand::Register("%ctaid.y"));
    assert_eq!(ops[2], Operand::Float(FloatLit::F32Bits(0x3F80_0000)));
    assert_eq!(
        ops[2].clone(),
        Operand::Float(FloatLit::F32Bits(0x3F80_0000))
    );
    if let Operand::Float(f) = ops[3] {
        assert_eq!(f.value(), 1.0);
    }
    assert_eq!(ops[4], Operand::Float(FloatLit::F32Bits(0xBF80_0000)));
    assert_eq!(ops[5], Operand::Int(-4));
    assert_eq!(ops[6], Operand::Int(-1));
    assert_eq!(ops[7], Operand::Int(10));
    assert_eq!(ops[8], Operand::Int(42));
    assert_eq!(ops[9], Operand::Float(FloatLit::Decimal(1.5)));
    assert_eq!(ins[10].operands[0], Operand::Pair("%r12", "%p12"));
    assert_eq!(ins[11].operands[0], Operand::Pair("%p1", "%p2"));
    assert_eq!(ins[11].operands[3], Operand::NegatedRegister("%p3"));
    assert_eq!(
        ins[12].operands[1],
        Operand::Address(Address {
            base: AddressBase::Symbol("smem"),
            offset: -8
        })
    );
    assert_eq!(
        ins[13].operands[1],
        Operand::Address(Address {
            base: AddressBase::Symbol("coeffs"),
            offset: 12
        })
    );
    assert_eq!(
        ins[14].operands[1],
        Operand::Address(Address {
            base: AddressBase::Absolute,
            offset: 1024
        })
    );
    assert_eq!(
        ins[15].operands[0],
        Operand::Address(Address {
            base: AddressBase::Symbol("func_retval0"),
            offset: 0
        })
    );
    assert_eq!(
        ins[16].operands[1],
        Operand::Address(Address {
            base: AddressBase::Register("%SP"),
            offset: 0
        })
    );
    assert_eq!(ops[17], Operand::Symbol("$str"));
    assert_eq!(ops[18], Operand::Expr("gvar+8"));
    assert_eq!(
        ins[19].operands[0],
        Operand::Vector(vec![Operand::Register("%r8"), Operand::Register("%r9")])
    );
}

#[test]
fn call_sequences_in_scopes() {
    let src = kernel(
        "\t{ // callseq 0, 0\n\t.reg .b32 temp_param_reg;\n\t.param .b32 param0;\n\t.param .align 4 .b8 retval0[16];\n\tst.param.f32 [param0+0], %f10;\n\tcall.uni (retval0), \n\t_Z6helperff, \n\t(\n\tparam0, \n\tparam1\n\t);\n\tld.param.f32 %f11, [retval0+0];\n\t} // callseq 0\n\
         \tprototype_3 : .callprototype (.param .b32 _) _ (.param .b32 _);\n\
         \tcall (retval0), %rd5, (param0), prototype_3;\n\
         \tcall.uni _Z4noopv, ();\n\
         $L_brx_0: .branchtargets $L__BB0_1, $L__BB0_2;\n\
         \tbrx.idx %r1, $L_brx_0;",
    );
    let st = body(&src);
    let Statement::Block(b) = &st[0] else {
        panic!("{:?}", st[0])
    };
    assert!(
        matches!(&b.statements[0], Statement::RegDecl(r) if r.names[0].name == "temp_param_reg")
    );
    assert!(
        matches!(&b.statements[1], Statement::Variable(v) if v.space == "param" && v.name == "param0")
    );
    assert!(
        matches!(&b.statements[2], Statement::Variable(v) if v.size_bytes() == Some(16) && v.align == Some(4))
    );
    let calls = instructions(&b.statements);
    let call = &calls[1];
    assert_eq!(
        (call.opcode, call.modifiers.as_slice()),
        ("call", &["uni"][..])
    );
    assert_eq!(
        call.operands.as_slice(),
        [
            Operand::List(vec![Operand::Symbol("retval0")]),
            Operand::Symbol("_Z6helperff"),
            Operand::List(vec![Operand::Symbol("param0"), Operand::Symbol("param1")])
        ]
    );
    assert!(matches!(
        &st[1],
        Statement::Label {
            name: "prototype_3",
            ..
        }
    ));
    assert!(
        matches!(&st[2], Statement::Directive(d) if d.name == "callprototype" && d.args == "(.param .b32 _) _ (.param .b32 _)")
    );
    let rest = instructions(&st);
    assert_eq!(rest[0].operands.len(), 4);
    assert_eq!(rest[0].operands[3], Operand::Symbol("prototype_3"));
    assert_eq!(rest[1].operands[1], Operand::List(vec![]));
    assert!(matches!(&st[6], Statement::Directive(d) if d.name == "branchtargets"));
}

#[test]
fn comments_everywhere() {
    let src = format!(
        "// header comment\n{HEADER}/* block\n comment */ .visible .entry k( /* no params */ )\n{{\n\tadd.s32 %r1, /* inline */ %r2, 1; // trailing\n\tret; /* multi\n line */\n}}\n"
    );
    let p = parse_clean(&src);
    let ins = instructions(
        &p.module
            .functions()
            .next()
            .and_then(|f| f.body.clone())
            .expect("body")
            .statements,
    );
    assert_eq!(ins.len(), 2);
    assert_eq!(ins[0].operands[1], Operand::Register("%r2"));
}

#[test]
fn pragma_in_body_and_inline_asm_scope() {
    let src = kernel(
        "\t.pragma \"nounroll\";\n\t{\n\t.reg .pred P1;\n\tLAB_WAIT:\n\tmbarrier.try_wait.parity.shared::cta.b64 P1, [%r2], 0;\n\t@P1 bra DONE;\n\tbra LAB_WAIT;\n\tDONE:\n\t}",
    );
    let st = body(&src);
    assert!(
        matches!(&st[0], Statement::Directive(d) if d.name == "pragma" && d.args == "\"nounroll\"")
    );
    let Statement::Block(b) = &st[1] else {
        panic!()
    };
    let ins = instructions(&b.statements);
    assert_eq!(ins[0].opcode, "mbarrier");
    assert_eq!(ins[0].operands[0], Operand::Symbol("P1"));
    assert_eq!(ins[1].guard.map(|g| g.register), Some("P1"));
}

#[test]
fn unknown_opcode_is_kept_with_a_warning() {
    let src = kernel("\tfrobnicate.sync.b32 %r1, %r2;\n\tret;");
    let p = ptx::parse(&src);
    assert_eq!(p.errors.len(), 1);
    assert_eq!(p.errors[0].severity, Severity::Warning);
    assert_eq!(&src[p.errors[0].span.range()], "frobnicate");
    assert!(!p.has_errors());
    let st = &p
        .module
        .functions()
        .next()
        .and_then(|f| f.body.clone())
        .expect("body")
        .statements;
    let ins = instructions(st);
    assert_eq!(
        (ins[0].opcode, ins[0].known_opcode, ins[0].operands.len()),
        ("frobnicate", false, 2)
    );
    assert!(ins[1].known_opcode);
}

#[test]
fn spans_cover_the_source_text() {
    let src = kernel("\tld.param.u64 \t%rd1, [vadd_param_0];");
    let p = parse_clean(&src);
    let f = p.module.functions().next().expect("f");
    let ins = instructions(&f.body.as_ref().expect("body").statements);
    assert_eq!(
        &src[ins[0].span.range()],
        "ld.param.u64 \t%rd1, [vadd_param_0];"
    );
    assert_eq!(&src[ins[0].operand_spans[0].range()], "%rd1");
    assert_eq!(p.module.span.range(), 0..src.len());
}
