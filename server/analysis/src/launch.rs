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

/// Every `// warpsight:` annotation of a text (the grammar of [`launch_spec`]; in PTX
/// there are no names to fold, so values are integer constant expressions).
pub fn annotations(text: &str) -> Vec<Annotation> {
    let mut res = Vec::new();
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let start = offset;
        offset += line.len();
        let Some(pos) = line.find("warpsight:") else { continue };
        let before = line[..pos].trim_end();
        if !before.ends_with("//") && !before.ends_with("/*") && !before.ends_with('*') {
            continue;
        }
        let Some(body) = launch_spec::annotation_body(&line[pos..]) else { continue };
        let (launch, errors) = parse_items(body, &mut eval_const);
        res.push(Annotation { offset: start, launch, errors });
    }
    res
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
