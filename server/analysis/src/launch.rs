//! The launch configuration of a kernel, from the documented order of sources
//! (`docs/profile.md` § Launch configuration): explicit settings, then a
//! `// warpsight:` annotation, then a launch site found in the CUDA source, then defaults.
//!
//! Annotation syntax (one line comment, in a `.cu` or `.ptx` file, before the kernel it
//! describes): `// warpsight: grid=4096 block=256 smem=0 n=1048576`. The grammar and the
//! type ([`PartialLaunch`]) are those of the `launch-spec` crate, shared with the CLI
//! flags, the editor settings and the CUDA front end (docs/cuda.md § Stating a launch).

use std::collections::BTreeMap;

use kernel_profile::{LaunchConfig, LaunchSource};

/// The default launch when nothing says otherwise: 256 threads per block (the block size
/// NVIDIA's Best Practices Guide §"Thread and Block Heuristics" names as a good start) and
/// 1024 blocks (enough for several waves on every GPU in the database).
pub const DEFAULT_BLOCK: [u32; 3] = [256, 1, 1];
pub const DEFAULT_GRID: [u32; 3] = [1024, 1, 1];

pub use launch_spec::{ArgValue, PartialLaunch, dims_from_parts, dims_spec, display_dims, eval_const, float_literal, parse_arg, parse_dims, parse_footprint, parse_int, parse_items, valid_arg_name};

/// An annotation comment found in a text, with the byte offset of its line.
#[derive(Debug, Clone, PartialEq)]
pub struct Annotation {
    pub offset: usize,
    pub launch: PartialLaunch,
    /// Items that could not be read (`grid=abc`), for a diagnostic.
    pub errors: Vec<String>,
}

/// Every `// warpsight:` launch annotation of a text (the grammar of [`launch_spec`]; in
/// PTX there are no names to fold, so values are integer constant expressions). Loop
/// annotations (`trips=`) are the second list of [`ptx_annotations`], which reads both.
pub fn annotations(text: &str) -> Vec<Annotation> {
    ptx_annotations(text).0
}

fn launch_annotation(offset: usize, body: &str) -> Annotation {
    let (launch, errors) = parse_items(body, &mut eval_const);
    Annotation { offset, launch, errors }
}

/// The annotation comments of a text: (byte offset of the line, 0-based line index, body).
fn annotation_lines(text: &str) -> impl Iterator<Item = (usize, usize, &str)> {
    let mut offset = 0;
    text.split_inclusive('\n').enumerate().filter_map(move |(index, line)| {
        let start = offset;
        offset += line.len();
        let pos = line.find("warpsight:")?;
        let before = line[..pos].trim_end();
        if !before.ends_with("//") && !before.ends_with("/*") && !before.ends_with('*') {
            return None;
        }
        launch_spec::annotation_body(&line[pos..]).map(|body| (start, index, body))
    })
}

/// A `// warpsight: trips=N` comment in a PTX text: the trip count of the loop whose
/// header starts on the line it ends (a trailing comment) or on the next line holding
/// code, a label and the instruction after it (docs/cuda.md § Stating a launch).
#[derive(Debug, Clone, PartialEq)]
pub struct LoopAnnotation {
    pub offset: usize,
    /// 1-based line of the comment.
    pub line: u32,
    /// `None` when the comment could not be read (`errors` says why).
    pub stated: Option<kernel_profile::StatedTrips>,
    pub errors: Vec<String>,
}

/// The launch and the loop annotations of a PTX text, in text order, from one pass over
/// its lines (an analysis of a PTX document runs on every keystroke). The table of code
/// lines that places a loop annotation is built only when the text has one.
pub fn ptx_annotations(text: &str) -> (Vec<Annotation>, Vec<LoopAnnotation>) {
    let mut launches = Vec::new();
    let mut loops = Vec::new();
    for (offset, index, body) in annotation_lines(text) {
        if launch_spec::is_loop_annotation(body) {
            loops.push((offset, index, body));
        } else {
            launches.push(launch_annotation(offset, body));
        }
    }
    if loops.is_empty() {
        return (launches, Vec::new());
    }
    let lines: Vec<&str> = text.lines().collect();
    // A line holding PTX: not blank, not only a comment.
    let code = |l: &str| {
        let t = l.trim();
        !t.is_empty() && !t.starts_with("//") && !t.starts_with("/*") && !t.starts_with('*')
    };
    // The next line holding code at or after each line, computed once from the end.
    let mut next: Vec<Option<usize>> = vec![None; lines.len() + 1];
    for i in (0..lines.len()).rev() {
        next[i] = if code(lines[i]) { Some(i) } else { next[i + 1] };
    }
    let next_code = |from: usize| next.get(from).copied().flatten();
    let loops = loops
        .into_iter()
        .map(|(offset, index, body)| {
            let (trips, mut errors) = launch_spec::parse_trips(body, &mut eval_const);
            let own = lines.get(index).and_then(|l| l.find("//").or_else(|| l.find("/*")).map(|p| &l[..p])).is_some_and(code);
            let first = if own { Some(index) } else { next_code(index + 1) };
            let lines_of = first.map(|f| {
                let label = lines[f].split("//").next().unwrap_or("").trim_end().ends_with(':');
                let last = if label { next_code(f + 1).unwrap_or(f) } else { f };
                (f as u32 + 1, last as u32 + 1)
            });
            if lines_of.is_none() {
                errors.push("a `trips=` annotation stands on or just before a loop's header: no code follows it".into());
            }
            let line = index as u32 + 1;
            let stated = trips.zip(lines_of).map(|(trips, lines)| kernel_profile::StatedTrips { file: None, lines, trips, annotation_line: line, in_kernel: true });
            LoopAnnotation { offset, line, stated, errors }
        })
        .collect();
    (launches, loops)
}

/// Combines the sources in priority order. Each field comes from the first source that
/// has it; the result's `source` names the source of the block size (what occupancy and
/// every model depend on most), or of the grid when the block is defaulted.
pub fn resolve(sources: &[(LaunchSource, &PartialLaunch)], extra_args: &BTreeMap<String, i64>) -> LaunchConfig {
    let mut grid = None;
    let mut block = None;
    let mut smem = None;
    let mut footprint = None;
    let mut array_bytes = BTreeMap::new();
    let mut source = LaunchSource::Default;
    let mut args = BTreeMap::new();
    for (src, p) in sources {
        if block.is_none()
            && let Some(b) = p.block {
                block = Some(b);
                source = *src;
            }
        if grid.is_none()
            && let Some(g) = p.grid {
                grid = Some(g);
                if source == LaunchSource::Default {
                    source = *src;
                }
            }
        if smem.is_none() {
            smem = p.dynamic_smem;
        }
        if footprint.is_none() {
            footprint = p.footprint;
        }
        for (k, v) in &p.args {
            args.entry(k.clone()).or_insert(*v);
        }
        for (k, v) in &p.array_bytes {
            array_bytes.entry(k.clone()).or_insert(*v);
        }
    }
    for (k, v) in extra_args {
        args.insert(k.clone(), *v);
    }
    LaunchConfig {
        grid: grid.unwrap_or(DEFAULT_GRID),
        block: block.unwrap_or(DEFAULT_BLOCK),
        dynamic_smem: smem.unwrap_or(0),
        args,
        footprint_bytes: footprint,
        array_bytes,
        source,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn annotation_syntax() {
        let text = "x\n// warpsight: grid=64x64 block=16,16 smem=1024 N=1<<10 m=0x10\n__global__ void f();\n";
        let a = annotations(text);
        assert_eq!(a.len(), 1);
        assert_eq!(a[0].offset, 2);
        assert_eq!(a[0].launch.grid, Some([64, 64, 1]));
        assert_eq!(a[0].launch.block, Some([16, 16, 1]));
        assert_eq!(a[0].launch.dynamic_smem, Some(1024));
        assert_eq!(a[0].launch.args.get("N"), Some(&1024));
        assert_eq!(a[0].launch.args.get("m"), Some(&16));
        assert!(a[0].errors.is_empty());
        // A loop annotation is not a launch: it names the loop whose header follows.
        let text = "// warpsight: grid=8\n.entry k()\n{\n// warpsight: trips=40\n$L__BB0_1:\n\tadd.s32 %r1, %r1, 1;\n\tbra $L__BB0_1; // warpsight: trips=x\n}\n";
        assert_eq!(annotations(text).len(), 1);
        let loops = ptx_annotations(text).1;
        assert_eq!(loops.len(), 2);
        let s = loops[0].stated.as_ref().expect("read");
        assert_eq!((s.lines, s.trips, s.annotation_line, s.file.as_deref()), ((5, 6), 40.0, 4, None));
        assert_eq!((loops[1].line, loops[1].stated.is_none(), loops[1].errors.len()), (7, true, 1));
        let bad = annotations("// warpsight: grid=abc block=0 k\n");
        assert_eq!(bad[0].errors.len(), 3, "{:?}", bad[0].errors);
        assert!(annotations("printf(\"warpsight: no\");").is_empty());
    }

    #[test]
    fn settings_win_over_annotations_over_call_sites_over_defaults() {
        let setting = PartialLaunch { block: Some([128, 1, 1]), ..Default::default() };
        let ann = PartialLaunch { grid: Some([10, 1, 1]), block: Some([64, 1, 1]), args: [("n".into(), 5)].into(), ..Default::default() };
        let site = PartialLaunch { grid: Some([20, 1, 1]), dynamic_smem: Some(512), ..Default::default() };
        let l = resolve(&[(LaunchSource::Setting, &setting), (LaunchSource::Annotation, &ann), (LaunchSource::CallSite, &site)], &BTreeMap::new());
        assert_eq!((l.block, l.grid, l.dynamic_smem, l.source), ([128, 1, 1], [10, 1, 1], 512, LaunchSource::Setting));
        assert_eq!(l.args.get("n"), Some(&5));
        let l = resolve(&[(LaunchSource::CallSite, &site)], &[("n".into(), 7)].into());
        assert_eq!((l.block, l.grid, l.source), (DEFAULT_BLOCK, [20, 1, 1], LaunchSource::CallSite));
        assert_eq!(l.args.get("n"), Some(&7));
        let l = resolve(&[], &BTreeMap::new());
        assert_eq!((l.block, l.grid, l.source), (DEFAULT_BLOCK, DEFAULT_GRID, LaunchSource::Default));
        assert_eq!(l.footprint_bytes, None);
    }

    #[test]
    fn allocations_merge_by_name_the_first_source_first() {
        let site = PartialLaunch { array_bytes: [("x".to_string(), 4096), ("y".to_string(), 64)].into(), ..Default::default() };
        let setting = PartialLaunch { array_bytes: [("x".to_string(), 1 << 20)].into(), ..Default::default() };
        let l = resolve(&[(LaunchSource::Setting, &setting), (LaunchSource::CallSite, &site)], &BTreeMap::new());
        assert_eq!(l.array_bytes, [("x".to_string(), 1 << 20), ("y".to_string(), 64)].into());
    }

    #[test]
    fn a_footprint_comes_from_the_first_source_that_states_it() {
        let a = annotations("// warpsight: block=64 footprint=4<<20\n__global__ void f();\n");
        assert_eq!(a[0].launch.footprint, Some(4 << 20), "{:?}", a[0].errors);
        let setting = PartialLaunch { footprint: Some(4096), ..Default::default() };
        let l = resolve(&[(LaunchSource::Setting, &setting), (LaunchSource::Annotation, &a[0].launch)], &BTreeMap::new());
        assert_eq!((l.footprint_bytes, l.block), (Some(4096), [64, 1, 1]));
        let l = resolve(&[(LaunchSource::Annotation, &a[0].launch)], &BTreeMap::new());
        assert_eq!(l.footprint_bytes, Some(4 << 20));
        assert_eq!(annotations("// warpsight: footprint=0\n")[0].errors.len(), 1);
    }
}
