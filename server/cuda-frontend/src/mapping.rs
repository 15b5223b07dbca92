//! Mapping PTX back to the CUDA source: each `.entry` to its `__global__` function, and
//! each `.loc` file index to a path.
//!
//! PTX names kernels by their Itanium C++ mangled names (`_Z5saxpyifPKfPf`); the source
//! and the user say `saxpy`. Names are demangled (`ptx::demangle`, Itanium ABI) and reduced to an
//! unqualified base name (no namespace, template arguments or parameters) for lookups;
//! `extern "C"` kernels are not mangled and are their own base name. The `.loc` directives
//! emitted with `-lineinfo` point at `.file` indices; the main file's index is the one whose
//! path names the compiled `.cu` (compared by canonical path, then by file name).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// One kernel in the PTX and where it is in the source.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KernelMapping {
    /// The `.entry` name (mangled).
    pub ptx_name: String,
    /// The demangled signature, e.g. `saxpy(int, float, float const*, float*)`, or the
    /// PTX name when it is not a C++ mangled name.
    pub demangled: String,
    /// The unqualified base name, e.g. `saxpy`.
    pub base_name: String,
    /// The source file of the kernel's first `.loc` (from `.file`), when line info exists.
    pub file: Option<String>,
    /// The line of the kernel's definition in the source: from the `__global__`
    /// declaration found in the `.cu` when there is one, else the first `.loc`.
    pub line: Option<u32>,
}

/// Demangles an Itanium C++ symbol; `None` for names that are not mangled.
pub fn demangle(name: &str) -> Option<String> {
    ptx::demangle(name)
}

/// The unqualified base name of a (possibly mangled) kernel name:
/// `_Z5saxpyifPKfPf` gives `saxpy`, `_ZN3ops3dynEPfi` gives `dyn`,
/// `_Z3redIfEvPKT_PS0_i` gives `red`, `vadd` gives `vadd`.
pub fn base_name(name: &str) -> String {
    match demangle(name) {
        Some(d) => ptx::demangle::base_of_demangled(&d).to_string(),
        None => name.to_string(),
    }
}

/// The `.file` table of a PTX text: (index, path).
pub fn file_table(ptx: &str) -> Vec<(u32, String)> {
    let parsed = ptx::parse(ptx);
    if !parsed.module.files.is_empty() {
        return parsed
            .module
            .files
            .iter()
            .map(|f| (f.index, f.path.to_string()))
            .collect();
    }
    // The line scan below covers a parser that is unavailable or gave up on the file.
    ptx.lines()
        .filter_map(|l| {
            let rest = l.trim_start().strip_prefix(".file")?;
            let mut it = rest.trim_start().splitn(2, char::is_whitespace);
            let idx: u32 = it.next()?.parse().ok()?;
            let path = it
                .next()?
                .trim_start()
                .strip_prefix('"')?
                .split('"')
                .next()?;
            Some((idx, path.to_string()))
        })
        .collect()
}

/// The `.file` index whose path is `source` (canonical path, else same file name).
pub fn main_file_index(files: &[(u32, String)], source: &Path) -> Option<u32> {
    let canon = source.canonicalize().ok();
    if let Some(c) = &canon
        && let Some((i, _)) = files
            .iter()
            .find(|(_, p)| Path::new(p).canonicalize().ok().as_ref() == Some(c))
    {
        return Some(*i);
    }
    let name = source.file_name()?;
    files
        .iter()
        .find(|(_, p)| Path::new(p).file_name() == Some(name))
        .map(|(i, _)| *i)
}

/// The kernels in a PTX text with their first `.loc` (file index, line).
fn entries_with_first_loc(ptx: &str) -> Vec<(String, Option<(u32, u32)>)> {
    let parsed = ptx::parse(ptx);
    let from_parser: Vec<(String, Option<(u32, u32)>)> = parsed
        .module
        .functions()
        .filter(|f| f.kind == ptx::FunctionKind::Entry)
        .map(|f| {
            let loc = f.body.as_ref().and_then(|b| {
                b.statements.iter().find_map(|s| match s {
                    ptx::Statement::Loc(l) => Some((l.file, l.line)),
                    _ => None,
                })
            });
            (f.name.to_string(), loc)
        })
        .collect();
    if !from_parser.is_empty() {
        return from_parser;
    }
    // Line scan: `.entry NAME(` then the first `.loc F L C` before the next entry.
    let mut out: Vec<(String, Option<(u32, u32)>)> = Vec::new();
    for line in ptx.lines() {
        let t = line.trim_start();
        if let Some(pos) = t.find(".entry") {
            let rest = t[pos + ".entry".len()..].trim_start();
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '$' | '.'))
                .collect();
            if !name.is_empty() {
                out.push((name, None));
            }
        } else if let Some(rest) = t.strip_prefix(".loc")
            && let Some(last) = out.last_mut()
            && last.1.is_none()
        {
            let nums: Vec<u32> = rest
                .split_whitespace()
                .take(2)
                .filter_map(|w| w.trim_end_matches(',').parse().ok())
                .collect();
            if let [f, l] = nums[..] {
                last.1 = Some((f, l));
            }
        }
    }
    out
}

/// Maps every `.entry` of `ptx` to the source. `kernels` are the `__global__`
/// declarations found in the `.cu` (for definition lines).
pub fn map_kernels(
    ptx: &str,
    source: Option<&Path>,
    kernels: &[crate::launch::KernelDecl],
) -> Vec<KernelMapping> {
    let files = file_table(ptx);
    let main = source.and_then(|s| main_file_index(&files, s));
    entries_with_first_loc(ptx)
        .into_iter()
        .map(|(name, loc)| {
            let demangled = demangle(&name).unwrap_or_else(|| name.clone());
            let base = base_name(&name);
            // Only a declaration in the file itself gives a line in it (a header's
            // declaration has a line in the header).
            let decl_line = kernels
                .iter()
                .filter(|k| k.name == base && k.file.is_none())
                .max_by_key(|k| k.is_definition)
                .map(|k| k.line);
            let file =
                loc.and_then(|(f, _)| files.iter().find(|(i, _)| *i == f).map(|(_, p)| p.clone()));
            let loc_line = loc
                .filter(|(f, _)| main.is_none_or(|m| m == *f))
                .map(|(_, l)| l);
            KernelMapping {
                ptx_name: name,
                demangled,
                base_name: base,
                file,
                line: decl_line.or(loc_line),
            }
        })
        .collect()
}

/// Rewrites `.file` paths: every path under `base` becomes relative to it and other
/// absolute paths keep only their file name, so recorded PTX holds no machine paths.
pub fn scrub_file_paths(ptx: &str, base: &Path) -> String {
    let mut out = String::with_capacity(ptx.len());
    for line in ptx.split_inclusive('\n') {
        let t = line.trim_start();
        if t.starts_with(".file")
            && let (Some(q1), Some(q2)) = (line.find('"'), line.rfind('"'))
            && q2 > q1
        {
            let p = PathBuf::from(&line[q1 + 1..q2]);
            let rel = p
                .strip_prefix(base)
                .map(Path::to_path_buf)
                .ok()
                .or_else(|| {
                    p.is_absolute()
                        .then(|| p.file_name().map(PathBuf::from))
                        .flatten()
                })
                .unwrap_or(p);
            out.push_str(&line[..=q1]);
            out.push_str(&rel.to_string_lossy());
            out.push_str(&line[q2..]);
            continue;
        }
        out.push_str(line);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_names() {
        assert_eq!(base_name("_Z5saxpyifPKfPf"), "saxpy");
        assert_eq!(base_name("_ZN3ops3dynEPfi"), "dyn");
        assert_eq!(base_name("_Z3redIfEvPKT_PS0_i"), "red");
        assert_eq!(base_name("_Z5typedIfEvPT_m"), "typed");
        assert_eq!(base_name("vadd"), "vadd");
        assert_eq!(
            demangle("_Z5saxpyifPKfPf").as_deref(),
            Some("saxpy(int, float, float const*, float*)")
        );
    }

    const PTX: &str = ".version 9.5\n.target sm_80\n.address_size 64\n\n.visible .entry _Z5saxpyifPKfPf(\n\t.param .u32 _Z5saxpyifPKfPf_param_0\n)\n{\n\t.reg .b32 %r<2>;\n\t.loc\t1 4 0\n\tret;\n}\n.visible .entry vadd(\n)\n{\n\t.loc\t2 9 0\n\tret;\n}\n\t.file\t1 \"/tmp/build/k.cu\"\n\t.file\t2 \"/opt/cuda/include/x.h\"\n";

    #[test]
    fn entries_map_to_source_lines_and_files() {
        let m = map_kernels(PTX, Some(Path::new("/elsewhere/k.cu")), &[]);
        assert_eq!(m.len(), 2);
        assert_eq!(
            (m[0].base_name.as_str(), m[0].line, m[0].file.as_deref()),
            ("saxpy", Some(4), Some("/tmp/build/k.cu"))
        );
        // vadd's first .loc is in another file than the main one: no line claimed.
        assert_eq!((m[1].base_name.as_str(), m[1].line), ("vadd", None));
        assert_eq!(
            file_table(PTX),
            [
                (1, "/tmp/build/k.cu".to_string()),
                (2, "/opt/cuda/include/x.h".to_string())
            ]
        );
    }

    #[test]
    fn scrubbing_removes_machine_paths() {
        let s = scrub_file_paths(PTX, Path::new("/tmp/build"));
        assert!(
            s.contains(".file\t1 \"k.cu\"") && s.contains(".file\t2 \"x.h\""),
            "{s}"
        );
        assert!(!s.contains("/tmp") && !s.contains("/opt"));
    }
}
