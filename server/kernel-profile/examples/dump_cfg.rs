//! Development aid: prints each function's basic blocks, successors and loops.
//! `cargo run -p kernel-profile --example dump_cfg -- FILE.ptx`
#![allow(clippy::print_stdout)]

fn main() {
    let path = std::env::args().nth(1).expect("usage: dump_cfg FILE.ptx");
    let text = std::fs::read_to_string(&path).expect("read");
    let (module, _) = ptx_ir::parse_and_lower(&text);
    for d in &module.diagnostics {
        println!("diagnostic: {}", d.message);
    }
    for f in &module.functions {
        println!("{}", f.name);
        for (i, b) in f.blocks.iter().enumerate() {
            let last = b.terminator().and_then(|t| f.instr(t)).map(|t| t.opcode.to_string()).unwrap_or_default();
            println!("  BB{i} {:?} line {} succs {:?} reachable {} last `{last}`", b.labels, b.ptx_line, b.succs, b.reachable);
        }
        for l in &f.loops {
            println!("  loop header BB{} blocks {:?} trip {:?}", l.header, l.blocks, l.trip_count);
        }
    }
}
