//! Module-level declarations (linkage, variables, parameters, performance directives)
//! and the module's `.shared` accounting.

use super::*;

pub(super) fn lower_linkage(l: ptx::Linkage) -> Linkage {
    match l {
        ptx::Linkage::None => Linkage::None,
        ptx::Linkage::Visible => Linkage::Visible,
        ptx::Linkage::Extern => Linkage::Extern,
        ptx::Linkage::Weak => Linkage::Weak,
        ptx::Linkage::Common => Linkage::Common,
    }
}

pub(super) fn lower_var(v: &ptx::VarDecl<'_>) -> Variable {
    Variable {
        name: v.name.to_string(),
        space: VarSpace::from_name(v.space),
        ty: v.ty.to_string(),
        align: v.align,
        vector: v.vector,
        array_dims: v.array_dims.to_vec(),
        size_bytes: v.size_bytes(),
        linkage: lower_linkage(v.linkage),
        has_init: v.init.is_some(),
        span: v.span,
    }
}

pub(super) fn lower_param(p: &ptx::Param<'_>) -> Param {
    let mut size = ptx::type_bytes(p.ty);
    for d in &p.array_dims {
        size = size.saturating_mul(d.unwrap_or(0));
    }
    Param {
        name: p.name.to_string(),
        ty: p.ty.to_string(),
        align: p.align,
        attributes: p.attributes.iter().map(|it| it.to_string()).collect(),
        size_bytes: size,
    }
}

pub(super) fn parse_dims(args: &str) -> Option<[u32; 3]> {
    let mut res = [1u32; 3];
    let mut n = 0;
    for (i, part) in args.split(',').enumerate() {
        let v: u32 = part.trim().parse().ok()?;
        *res.get_mut(i)? = v;
        n += 1;
    }
    (n > 0).then_some(res)
}

pub(super) fn lower_perf(dirs: &[ptx::Directive<'_>]) -> PerfDirectives {
    let mut res = PerfDirectives::default();
    for d in dirs {
        let args = d.args.trim();
        match d.name.trim_start_matches('.') {
            "maxntid" => res.maxntid = parse_dims(args),
            "reqntid" => res.reqntid = parse_dims(args),
            "minnctapersm" => res.minnctapersm = args.parse().ok(),
            "maxnreg" => res.maxnreg = args.parse().ok(),
            "noreturn" => res.noreturn = true,
            name => res.other.push((name.to_string(), args.to_string())),
        }
    }
    res
}

pub(super) fn close_block(func: &mut Function, open: &mut Option<BasicBlock>, end: InstrId) {
    if let Some(mut b) = open.take() {
        b.instrs.end = end;
        func.blocks.push(b);
    }
}

/// Fills `shared_vars` (transitively through calls) and `static_smem_bytes`.
///
/// The byte count is an estimate of the `ptxas -v` "smem" figure: each variable is placed
/// at the next multiple of its `.align` in declaration order. ptxas may reorder variables or
/// drop unused ones, so its figure can differ by padding; when ptxas is available the
/// profile should prefer it (ResourceSource::Ptxas).
pub(super) fn finish_shared(m: &mut Module, direct: &[HashSet<String>]) {
    let index: HashMap<&str, usize> = m
        .functions
        .iter()
        .enumerate()
        .filter(|(_, f)| f.has_body)
        .map(|(i, f)| (f.name.as_str(), i))
        .collect();
    let mut results: Vec<(Vec<String>, u64)> = Vec::with_capacity(m.functions.len());
    // `seen[f] == fi + 1` marks `f` as visited in the walk from `fi`: one array for all
    // walks keeps this linear in the call graph instead of quadratic in functions.
    let mut seen = vec![0usize; m.functions.len()];
    let mut stack = Vec::new();
    for fi in 0..m.functions.len() {
        stack.clear();
        stack.push(fi);
        let mut used: HashSet<&str> = HashSet::new();
        // Body-level `.shared` variables of this function and of every function it calls
        // (nvcc "demotes" a `__shared__` used by one function into its body).
        let mut body_vars: Vec<&Variable> = Vec::new();
        while let Some(cur) = stack.pop() {
            if std::mem::replace(&mut seen[cur], fi + 1) == fi + 1 {
                continue;
            }
            if let Some(d) = direct.get(cur) {
                used.extend(d.iter().map(|s| s.as_str()));
            }
            let func = &m.functions[cur];
            body_vars.extend(
                func.variables
                    .iter()
                    .filter(|v| v.space == VarSpace::Shared),
            );
            for c in &func.calls {
                if let Some(&callee) = c.callee.as_deref().and_then(|n| index.get(n)) {
                    stack.push(callee);
                }
            }
        }
        let mut names: Vec<String> = used.iter().map(|s| s.to_string()).collect();
        names.sort();
        let mut bytes = 0u64;
        let module_vars = names
            .iter()
            .filter_map(|n| m.variables.iter().find(|v| &v.name == n));
        for v in module_vars.chain(body_vars) {
            if v.is_extern_array() {
                continue;
            }
            let align = u64::from(v.align.unwrap_or(1).max(1));
            bytes = bytes.div_ceil(align) * align + v.size_bytes.unwrap_or(0);
        }
        results.push((names, bytes));
    }
    for (f, (names, bytes)) in m.functions.iter_mut().zip(results) {
        f.shared_vars = names;
        f.static_smem_bytes = bytes;
    }
}
