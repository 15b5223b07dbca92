//! Where an address comes from: a backwards walk over the def-use chains of the IR from a
//! memory instruction's address register to the kernel parameters and `.shared`
//! variables it is computed from.
//!
//! Why here and not in the profile: only the fixes need it (which pointer parameter to
//! mark `__restrict__`, which shared array to pad), and a conservative answer is enough:
//! the walk returns candidates, and a fix is offered only when there is exactly one.

use std::collections::BTreeSet;

use ptx_ir::{AddrBase, Function, Instr, InstrClass, InstrId, Operand, Space, VarSpace};

/// The sources of one address.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Origins {
    /// Indices of 64-bit parameters the address is computed from.
    pub params: BTreeSet<u32>,
    /// Of those, the parameters that reach the address through `cvta.to.global` (the
    /// compiler's marker of a global pointer).
    pub global_params: BTreeSet<u32>,
    /// `.shared` variables the address is computed from.
    pub shared_vars: BTreeSet<String>,
}

impl Origins {
    /// The pointer parameter the address is based on, when there is exactly one.
    pub fn pointer_param(&self) -> Option<u32> {
        let set = if self.global_params.is_empty() { &self.params } else { &self.global_params };
        (set.len() == 1).then(|| set.iter().next().copied()).flatten()
    }
    /// The shared variable the address is based on, when there is exactly one.
    pub fn shared_var(&self) -> Option<&str> {
        (self.shared_vars.len() == 1).then(|| self.shared_vars.iter().next().map(String::as_str)).flatten()
    }
}

/// The maximum number of instructions visited per walk: address arithmetic is short, and
/// the bound keeps a pathological kernel cheap.
const MAX_VISITS: usize = 256;

/// The address operand of a memory instruction.
fn address(func: &Function, instr: &Instr) -> Option<AddrBase> {
    func.operands_of(instr).iter().find_map(|op| match op {
        Operand::Addr { base, .. } => Some(base.clone()),
        _ => None,
    })
}

fn is_shared(module: &ptx_ir::Module, func: &Function, name: &str) -> bool {
    func.variables.iter().chain(module.variables.iter()).any(|v| v.name == name && v.space == VarSpace::Shared)
}

/// The origins of the address of the memory instruction on `ptx_line` of `func` (the
/// first memory instruction on that line whose class matches `pred`).
pub(crate) fn origins_at_line(module: &ptx_ir::Module, func: &Function, ptx_line: u32, pred: impl Fn(&Instr) -> bool) -> Origins {
    let Some(id) = func.instrs.iter().position(|i| i.ptx_line == ptx_line && pred(i)) else {
        return Origins::default();
    };
    origins(module, func, id as InstrId)
}

/// The origins of the address of instruction `id`.
pub(crate) fn origins(module: &ptx_ir::Module, func: &Function, id: InstrId) -> Origins {
    let mut res = Origins::default();
    let Some(instr) = func.instr(id) else { return res };
    let mut work: Vec<(InstrId, bool)> = Vec::new();
    match address(func, instr) {
        Some(AddrBase::Reg(r)) => work.extend(func.defs_of(r).iter().map(|d| (*d, false))),
        Some(AddrBase::Symbol(s)) if is_shared(module, func, &s) => {
            res.shared_vars.insert(s.to_string());
        }
        _ => {}
    }
    let mut seen = BTreeSet::new();
    while let Some((id, via_cvta)) = work.pop() {
        if !seen.insert(id) || seen.len() > MAX_VISITS {
            continue;
        }
        let Some(def) = func.instr(id) else { continue };
        let via_cvta = via_cvta || (def.base() == "cvta" && def.has_modifier("global"));
        if def.base() == "ld" && def.has_modifier("param") {
            if let Some(AddrBase::Symbol(p)) = address(func, def)
                && let Some(idx) = func.param_index(&p)
                && func.params.get(idx as usize).is_some_and(|it| it.size_bytes == 8)
            {
                res.params.insert(idx);
                if via_cvta {
                    res.global_params.insert(idx);
                }
            }
            continue;
        }
        for op in func.operands_of(def) {
            let sym = match op {
                Operand::Symbol(s) => Some(s),
                Operand::Addr { base: AddrBase::Symbol(s), .. } => Some(s),
                _ => None,
            };
            if let Some(s) = sym.filter(|s| is_shared(module, func, s)) {
                res.shared_vars.insert(s.to_string());
            }
        }
        // Follow every register the definition reads, except its guard.
        let guard = def.guard.map(|g| g.reg);
        for r in func.srcs(def) {
            if Some(*r) == guard {
                continue;
            }
            work.extend(func.defs_of(*r).iter().map(|d| (*d, via_cvta)));
        }
    }
    res
}

/// `true` when some global store or atomic of the kernel writes through parameter
/// `param` (or through an address whose base is unknown, to stay conservative).
pub(crate) fn param_is_written(module: &ptx_ir::Module, func: &Function, param: u32) -> bool {
    func.instrs.iter().enumerate().any(|(id, i)| {
        let writes = match i.class {
            InstrClass::Store(s) | InstrClass::Atomic(s) => matches!(s, Space::Global | Space::Generic),
            _ => false,
        };
        if !writes {
            return false;
        }
        let o = origins(module, func, id as InstrId);
        o.params.contains(&param) || o.params.is_empty()
    })
}

/// The source name of a `.shared` variable: `_ZZ15transpose_naivePfPKfiiE4tile` (a
/// function-local static, Itanium ABI `Z <encoding> E <name>`) is `tile`; a plain name is
/// itself.
pub(crate) fn source_var_name(ptx_name: &str) -> String {
    if let Some(rest) = ptx_name.strip_prefix("_ZZ") {
        // The name is the `<length><name>` suffix after some `E` that spans the rest.
        for (e, _) in rest.match_indices('E').collect::<Vec<_>>().into_iter().rev() {
            let tail = &rest[e + 1..];
            let digits: String = tail.chars().take_while(char::is_ascii_digit).collect();
            if let Ok(n) = digits.parse::<usize>()
                && digits.len() + n == tail.len()
                && n > 0
            {
                return tail[digits.len()..].to_string();
            }
        }
    }
    ptx_name.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::findings::test_support::fixture;

    #[test]
    fn local_static_names_are_demangled() {
        assert_eq!(source_var_name("_ZZ15transpose_naivePfPKfiiE4tile"), "tile");
        assert_eq!(source_var_name("_ZZ11reduce_treePKfPfiE5sdata"), "sdata");
        assert_eq!(source_var_name("smem"), "smem");
        assert_eq!(source_var_name("_ZZ1kvE4tilE"), "tilE");
    }

    #[test]
    fn transpose_addresses_trace_to_their_parameter_and_tile() {
        let text = fixture("transpose_naive");
        let (module, _) = ptx_ir::parse_and_lower(&text);
        let func = module.kernels().next().expect("kernel");
        let ld_shared = func.instrs.iter().position(|i| i.opcode.starts_with("ld.shared")).expect("ld.shared") as InstrId;
        assert_eq!(origins(&module, func, ld_shared).shared_var(), Some("_ZZ15transpose_naivePfPKfiiE4tile"));
        let ld_global = func.instrs.iter().position(|i| i.opcode.starts_with("ld.global")).expect("ld.global") as InstrId;
        // `in` is the second parameter.
        assert_eq!(origins(&module, func, ld_global).pointer_param(), Some(1));
        assert!(!param_is_written(&module, func, 1));
        assert!(param_is_written(&module, func, 0));
    }

    #[test]
    fn the_pointer_is_the_parameter_that_reaches_the_address_through_cvta() {
        // `a[offset + i]` with `const float *a` and `size_t offset`: both parameters are
        // 64-bit and both reach the address, but only `a` goes through
        // `cvta.to.global`, the compiler's marker of a global pointer (PTX ISA, `cvta`).
        // Mutation survivor: `via_cvta ||` → `&&` lost the marker, and the fix had no
        // single pointer to offer.
        let text = "\
.version 8.0
.target sm_80
.address_size 64

.visible .entry k(
\t.param .u64 k_param_0,
\t.param .u64 k_param_1
)
{
\t.reg .f32 %f<2>;
\t.reg .b64 %rd<6>;

\tld.param.u64 %rd1, [k_param_0];
\tld.param.u64 %rd2, [k_param_1];
\tcvta.to.global.u64 %rd3, %rd1;
\tshl.b64 %rd4, %rd2, 2;
\tadd.s64 %rd5, %rd3, %rd4;
\tld.global.f32 %f1, [%rd5];
\tret;
}
";
        let (module, errors) = ptx_ir::parse_and_lower(text);
        assert!(errors.is_empty(), "{errors:?}");
        let func = module.kernels().next().expect("kernel");
        let ld = func.instrs.iter().position(|i| i.opcode.starts_with("ld.global")).expect("ld.global") as InstrId;
        let o = origins(&module, func, ld);
        assert_eq!(o.params, BTreeSet::from([0, 1]));
        assert_eq!(o.global_params, BTreeSet::from([0]));
        assert_eq!(o.pointer_param(), Some(0));
    }
}
