//! Snapshot tests: the IR dump (blocks, edges, dominators, instruction mix, loops, trip
//! counts) of every PTX file in `tests/data/` against `tests/data/<name>.ir`.
//!
//! The PTX files are real nvcc 13.5 output (`nvcc -ptx -lineinfo -arch=sm_80`) of the
//! `.cu` files beside them, with `.file` paths scrubbed to bare names. Rerun with
//! `UPDATE_EXPECT=1` to regenerate the snapshots after an intended change, then review
//! the diff: the trip counts in them were checked by hand (see `tests/loops.rs`).

use std::path::Path;

fn render(src: &str) -> String {
    let (m, errors) = ptx_ir::parse_and_lower(src);
    let mut out = String::new();
    out.push_str(&format!(
        "target={:?} sm={:?} version={:?} parse_errors={} diagnostics={}\n",
        m.target,
        m.sm,
        m.version,
        errors.len(),
        m.diagnostics.len()
    ));
    for f in &m.functions {
        out.push_str(&f.dump());
    }
    out
}

#[test]
fn ir_snapshots_match() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .expect("tests/data exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "ptx"))
        .collect();
    names.sort();
    assert!(
        names.len() >= 3,
        "expected the PTX fixtures, found {names:?}"
    );
    let update = std::env::var_os("UPDATE_EXPECT").is_some();
    let mut mismatches = Vec::new();
    for ptx in names {
        let src = std::fs::read_to_string(&ptx).expect("readable fixture");
        let got = render(&src);
        let snap = ptx.with_extension("ir");
        if update {
            std::fs::write(&snap, &got).expect("writable snapshot");
            continue;
        }
        let want = std::fs::read_to_string(&snap).unwrap_or_default();
        if got != want {
            mismatches.push(format!(
                "{} differs from its snapshot (UPDATE_EXPECT=1 to regenerate)\n--- got ---\n{got}",
                snap.display()
            ));
        }
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}
