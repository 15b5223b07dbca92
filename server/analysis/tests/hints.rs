//! The text of inlay hints and of the memory-access hover, shared by the front ends
//! (`analysis::hover`): the kernel summary with chosen parts, loop shares and memory
//! access labels.

use analysis::hover::{InlayParts, kernel_label, loop_label, loop_share, memory_label, source_line_accesses};
use analysis::{Context, Settings, analyze};

fn fixture(name: &str) -> String {
    let path = format!("{}/../../tests/fixtures/ptx/sm_80/{name}.ptx", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn kernel_label_shows_the_chosen_parts() {
    let file = analyze(&fixture("saxpy"), &Settings::default(), &Context::default());
    let t = &file.kernels[0].targets[0];
    let all = kernel_label(t, &InlayParts::default());
    assert!(all.starts_with("occ ") && all.contains("-bound") && all.contains('≈'), "{all}");
    let only_bound = kernel_label(t, &InlayParts { occupancy: false, bound: true, time: false, power: false, loops: false, memory: false });
    assert!(only_bound.ends_with("-bound") && !only_bound.contains(" · "), "{only_bound}");
    let none = kernel_label(t, &InlayParts { occupancy: false, bound: false, time: false, power: false, loops: false, memory: false });
    assert_eq!(none, "");
}

#[test]
fn loops_show_their_trip_count_and_share() {
    let file = analyze(&fixture("matmul_tiled"), &Settings::default(), &Context::default());
    let t = &file.kernels[0].targets[0];
    let l = t.profile.loops.first().expect("the tiled matmul has a loop");
    let func = file.module.function(&file.kernels[0].name);
    let share = loop_share(t, l, func);
    assert!((0.0..=100.0).contains(&share));
    let label = loop_label(t, l, func);
    assert!(label.starts_with('×') && label.ends_with("% of instructions"), "{label}");
}

#[test]
fn memory_labels_name_the_class_or_the_bank_conflict() {
    let file = analyze(&fixture("transpose_naive"), &Settings::default(), &Context::default());
    let t = &file.kernels[0].targets[0];
    let labels: Vec<String> = t.profile.memory_accesses.iter().filter_map(memory_label).collect();
    assert!(labels.iter().any(|l| l == "32-way bank conflict"), "{labels:?}");
    assert!(labels.iter().any(|l| l.starts_with("global ") && l.ends_with(" sectors")), "{labels:?}");
    // Every access of the first line with accesses, as a Markdown list.
    let line = t.profile.memory_accesses[0].ptx_line;
    let card = source_line_accesses(&file, |m| m.ptx_line == line).expect("accesses on that line");
    assert!(card.starts_with("- ") && card.contains("sector(s)/request"), "{card}");
    assert_eq!(source_line_accesses(&file, |_| false), None);
}
