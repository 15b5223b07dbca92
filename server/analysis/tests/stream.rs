//! `KernelStream` (one kernel at a time, for the CLI's bounded memory) gives exactly what
//! `analyze` gives, on every fixture and with annotations that pick their kernel.

use analysis::{Context, KernelStream, Settings, analyze, report};

/// The `.ptx` fixtures of the workspace and of the `ptx` crate, sorted.
fn ptx_files() -> Vec<std::path::PathBuf> {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let walk = |dir: &str| walkdir::WalkDir::new(format!("{root}/{dir}")).into_iter().map(|e| e.expect("fixture directory"));
    let mut files: Vec<_> = walk("tests/fixtures/ptx").chain(walk("server/ptx/tests/data")).filter(|e| e.file_type().is_file()).map(walkdir::DirEntry::into_path).filter(|p| p.extension().is_some_and(|x| x == "ptx")).collect();
    files.sort();
    files
}

/// The kernel's report as JSON (a `Value`, so that two `NaN`s compare equal, as `null`).
fn kernel_json(k: &analysis::KernelAnalysis) -> serde_json::Value {
    serde_json::to_value(report::KernelReport::new(k)).expect("a report serialises")
}

fn assert_same(what: &str, text: &str, settings: &Settings) {
    let whole = analyze(text, settings, &Context::default());
    let mut stream = KernelStream::new(text.to_string(), settings, &Context::default());
    assert_eq!(format!("{:?}", whole.syntax), format!("{:?}", stream.syntax), "{what}: syntax diagnostics");
    assert_eq!((&whole.target, whole.version, &whole.unknown_gpus), (&stream.target, stream.version, &stream.unknown_gpus), "{what}");
    assert_eq!(stream.remaining(), whole.kernels.len(), "{what}: kernel count");
    for k in &whole.kernels {
        let s = stream.next_kernel().expect("as many kernels");
        assert_eq!(kernel_json(k), kernel_json(&s), "{what}: kernel {}", k.name);
        assert_eq!(format!("{:?}", k.findings), format!("{:?}", s.findings), "{what}: findings of {}", k.name);
        assert_eq!((k.span, k.name_span, k.ptx_line), (s.span, s.name_span, s.ptx_line), "{what}: positions of {}", k.name);
    }
    assert!(stream.next_kernel().is_none(), "{what}: no more kernels");
}

#[test]
fn the_stream_matches_analyze_on_every_fixture() {
    let files = ptx_files();
    assert!(files.len() > 100, "{} fixtures", files.len());
    let settings = Settings { gpus: vec!["a100-sxm4-80gb".into(), "tesla-v100".into(), "no-such-gpu".into()], ..Default::default() };
    for p in &files {
        let text = std::fs::read_to_string(p).expect("fixture");
        assert_same(&p.display().to_string(), &text, &settings);
    }
}

#[test]
fn annotations_go_to_the_next_kernel_in_the_stream_too() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/fixtures/ptx/sm_80");
    let text = std::fs::read_to_string(format!("{dir}/saxpy.ptx")).expect("fixture");
    // One annotation before each kernel, one with a kernel in between (it belongs to the
    // first), and one at the end (no kernel after it).
    let annotated = text
        .replacen(".visible .entry", "// warpsight: grid=64 block=128\n// warpsight: block=32\n.visible .entry", 1)
        .replacen("\t// .globl\t_Z5daxpy", "// warpsight: grid=7x3 block=96\n\t// .globl\t_Z5daxpy", 1)
        + "\n// warpsight: grid=1\n";
    assert_ne!(annotated, text);
    let whole = analyze(&annotated, &Settings::default(), &Context::default());
    let grids: Vec<[u32; 3]> = whole.kernels.iter().map(|k| k.launch.grid).collect();
    assert_eq!(grids, vec![[1024, 1, 1], [7, 3, 1]], "{:?}", whole.kernels.iter().map(|k| &k.launch).collect::<Vec<_>>());
    assert_same("annotated saxpy", &annotated, &Settings::default());
}
