//! A compact, stable text rendering of a lowered function: blocks with their edges and
//! instruction mix, loops with nesting and trip counts. Used by the snapshot tests and
//! handy when debugging the analysis (`warpsight` can print it).

use std::fmt::Write;

use crate::ir::*;
use crate::trip::TripCount;

impl Function {
    /// Renders blocks, edges, dominators and loops (one line each).
    pub fn dump(&self) -> String {
        let mut out = String::new();
        let kind = match self.kind {
            FunctionKind::Entry => "entry",
            FunctionKind::Func => "func",
        };
        let regs: Vec<String> = self
            .reg_decls
            .iter()
            .map(|(t, n)| format!("{t}={n}"))
            .collect();
        let _ = writeln!(
            out,
            "{kind} {} params={} regs[{}] smem={} local={}",
            self.name,
            self.params.len(),
            regs.join(" "),
            self.static_smem_bytes,
            self.local_bytes
        );
        for (b, blk) in self.blocks.iter().enumerate() {
            let b = b as BlockId;
            let succs: Vec<String> = blk.succs.iter().map(|s| format!("bb{s}")).collect();
            let idom = match self.idom.get(b as usize).copied().flatten() {
                Some(d) => format!(" idom=bb{d}"),
                None => String::new(),
            };
            let lp = match blk.innermost_loop {
                Some(l) => format!(" loop={l}"),
                None => String::new(),
            };
            let mut mix: std::collections::BTreeMap<String, u32> = Default::default();
            for i in blk.instrs.clone() {
                if let Some(it) = self.instr(i) {
                    *mix.entry(it.class.name()).or_insert(0) += 1;
                }
            }
            let mix: Vec<String> = mix.iter().map(|(c, n)| format!("{c}:{n}")).collect();
            let _ = writeln!(
                out,
                "  bb{b}{} -> [{}]{idom}{lp} {{{}}}",
                blk.labels
                    .first()
                    .map(|l| format!(" {l}"))
                    .unwrap_or_default(),
                succs.join(" "),
                mix.join(" ")
            );
        }
        for (li, l) in self.loops.iter().enumerate() {
            let blocks: Vec<String> = l.blocks.iter().map(|b| format!("bb{b}")).collect();
            let trip = match &l.trip_count {
                TripCount::Constant(c) => format!("{c}"),
                TripCount::Symbolic { expr, .. } => expr.clone(),
                TripCount::Unknown => "unknown".to_string(),
            };
            let _ = write!(
                out,
                "  loop{li} header=bb{} depth={} parent={} blocks=[{}] trip={trip}",
                l.header,
                l.depth,
                l.parent.map_or("-".to_string(), |p| p.to_string()),
                blocks.join(" "),
            );
            if let Some(t) = &l.exit_test {
                let _ = write!(
                    out,
                    " test={} {:?} {} m={}",
                    self.reg_name(t.iv),
                    t.op,
                    t.bound,
                    t.offset_steps
                );
            }
            if let Some(loc) = &l.loc {
                let _ = write!(out, " loc={}:{}", loc.line, loc.column);
            }
            if let Some(note) = &l.trip_note {
                let _ = write!(out, " note=\"{note}\"");
            }
            for b in &l.trip_bounds {
                match b {
                    TripCount::Constant(c) => {
                        let _ = write!(out, " at_most={c}");
                    }
                    TripCount::Symbolic { expr, .. } => {
                        let _ = write!(out, " at_most=\"{expr}\"");
                    }
                    TripCount::Unknown => {}
                }
            }
            let _ = writeln!(out);
            for iv in &l.induction_vars {
                let op = match iv.kind {
                    IvKind::Add => "+",
                    IvKind::Shr => ">>",
                    IvKind::Shl => "<<",
                };
                let _ = writeln!(
                    out,
                    "    iv {} init={} step={op}{}",
                    self.reg_name(iv.reg),
                    iv.init.as_ref().map_or("?".to_string(), |e| e.to_string()),
                    iv.step
                );
            }
        }
        out
    }
}
