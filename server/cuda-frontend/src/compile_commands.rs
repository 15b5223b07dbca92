//! Include paths, defines and flags from `compile_commands.json`.
//!
//! A project's build (CMake, Bear) records the exact compile line of each file; using it
//! makes our PTX match the real build's. The database may have been written for clang
//! (CMake with `CMAKE_CUDA_COMPILER=clang++`) or for nvcc, so flags are filtered: include
//! paths, defines, the language standard and nvcc's own code-generation options are kept;
//! output, architecture and clang-only options are dropped, with a note naming them (we set
//! `-ptx -arch` ourselves). The database is looked for in the file's directory and its
//! ancestors, and in their `build/` subdirectories.
//!
//! The database belongs to the workspace, so it is untrusted input: the `command` form is
//! split with [`shlex`] (POSIX shell words, nothing expanded), and
//! [`crate::compile::prepare_text`] drops every kept flag that is not provably inert for
//! nvcc's shell (`crate::safety`). The language server does not read it at all until the
//! user trusts it (docs/security.md).

use std::path::{Path, PathBuf};

/// Flags taken from the database for one file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DbFlags {
    /// The database file used.
    pub database: PathBuf,
    /// Kept flags other than include paths, defines, undefines and pre-includes
    /// (`-std=c++17`, `-O3`, `-maxrregcount=32`, ...), one word each.
    pub flags: Vec<String>,
    /// Include directories (`-I`, `-isystem`, `--include-path`), absolute.
    pub include_dirs: Vec<PathBuf>,
    /// Defines as `NAME` or `NAME=VALUE`.
    pub defines: Vec<String>,
    /// Undefined macro names (`-U`).
    pub undefines: Vec<String>,
    /// Files included first (`-include`, `--pre-include`), absolute.
    pub pre_includes: Vec<PathBuf>,
    /// Dropped flags, for the note.
    pub dropped: Vec<String>,
}

/// The candidate database paths for `file`, nearest first.
fn candidates(file: &Path) -> Vec<PathBuf> {
    file.ancestors()
        .skip(1)
        .flat_map(|d| [d.join("compile_commands.json"), d.join("build").join("compile_commands.json")])
        .collect()
}

/// The nearest `compile_commands.json` that exists for `file`, without reading it (for the
/// note that an untrusted database was not read).
pub fn find_database(file: &Path) -> Option<PathBuf> {
    let file = file.canonicalize().unwrap_or_else(|_| file.to_path_buf());
    candidates(&file).into_iter().find(|c| c.is_file())
}

/// Finds the database that has an entry for `file`, and extracts its flags.
pub fn lookup(file: &Path) -> Option<DbFlags> {
    let file = file.canonicalize().ok()?;
    candidates(&file).into_iter().find_map(|cand| read_entry(&cand, &file))
}

fn read_entry(db: &Path, file: &Path) -> Option<DbFlags> {
    let text = match crate::files::read_text(db, crate::files::MAX_COMPILE_DB_BYTES) {
        Ok(t) => t,
        Err(e) if e.is_not_found() => return None,
        Err(e) => {
            tracing::warn!("compile database not used: {e}");
            return None;
        }
    };
    let json: serde_json::Value = serde_json::from_str(&text).ok()?;
    for e in json.as_array()? {
        let dir = PathBuf::from(e.get("directory").and_then(|d| d.as_str()).unwrap_or("."));
        let Some(f) = e.get("file").and_then(|f| f.as_str()) else {
            continue;
        };
        let fp = if Path::new(f).is_absolute() {
            PathBuf::from(f)
        } else {
            dir.join(f)
        };
        if fp.canonicalize().ok().as_deref() != Some(file) {
            continue;
        }
        let mut dropped = Vec::new();
        let args: Vec<String> = if let Some(a) = e.get("arguments").and_then(|a| a.as_array()) {
            a.iter()
                .filter_map(|s| s.as_str().map(str::to_string))
                .collect()
        } else {
            let command = e.get("command").and_then(|c| c.as_str()).unwrap_or_default();
            shlex::split(command).unwrap_or_else(|| {
                dropped.push("the whole `command` (it is not valid shell quoting)".to_string());
                Vec::new()
            })
        };
        let mut out = filter_args(&args, &dir, file);
        out.dropped.splice(0..0, dropped);
        out.database = db.to_path_buf();
        return Some(out);
    }
    None
}

/// nvcc options that take a separate value and are kept.
const KEEP_WITH_VALUE: &[&str] = &[
    "-I",
    "-isystem",
    "-D",
    "-U",
    "-include",
    "--include-path",
    "--define-macro",
    "--undefine-macro",
    "--pre-include",
    "-maxrregcount",
    "--maxrregcount",
    "-Xptxas",
    "--ptxas-options",
    "-std",
    "--std",
];
/// nvcc flags kept as they are (code generation that changes the PTX).
const KEEP_EXACT: &[&str] = &[
    "--expt-relaxed-constexpr",
    "--expt-extended-lambda",
    "--extended-lambda",
    "-rdc=true",
    "-rdc",
    "--relocatable-device-code=true",
    "-use_fast_math",
    "--use_fast_math",
    "-G",
    "-O0",
    "-O1",
    "-O2",
    "-O3",
    "-ftz=true",
    "-ftz=false",
    "-prec-div=true",
    "-prec-div=false",
    "-prec-sqrt=true",
    "-prec-sqrt=false",
    "-fmad=true",
    "-fmad=false",
    "--restrict",
    "-restrict",
];
/// Options (with a separate value) that are dropped with their value.
const DROP_WITH_VALUE: &[&str] = &[
    "-o",
    "-MF",
    "-MT",
    "-MQ",
    "-x",
    "-arch",
    "--gpu-architecture",
    "-code",
    "--gpu-code",
    "-gencode",
    "--generate-code",
    "-ccbin",
    "--compiler-bindir",
    "-Xcompiler",
    "--compiler-options",
    "-Xclang",
    "-target",
    "--cuda-gpu-arch",
    "--cuda-path",
];

fn filter_args(args: &[String], dir: &Path, file: &Path) -> DbFlags {
    let mut out = DbFlags::default();
    let abs = |p: &str| -> PathBuf {
        if Path::new(p).is_absolute() {
            PathBuf::from(p)
        } else {
            dir.join(p)
        }
    };
    let mut i = 1; // args[0] is the compiler.
    while i < args.len() {
        let a = args[i].as_str();
        i += 1;
        // The source file itself.
        if abs(a).canonicalize().ok().as_deref() == Some(file) {
            continue;
        }
        // Joined forms: -Ipath, -DNAME, -std=c++17, -maxrregcount=32.
        if let Some(p) = a.strip_prefix("-I").filter(|p| !p.is_empty()) {
            out.include_dirs.push(abs(p));
            continue;
        }
        if let Some(d) = a.strip_prefix("-D").filter(|d| !d.is_empty()) {
            out.defines.push(d.to_string());
            continue;
        }
        if let Some(u) = a.strip_prefix("-U").filter(|u| !u.is_empty()) {
            out.undefines.push(u.to_string());
            continue;
        }
        if a.starts_with("-std=")
            || a.starts_with("--std=")
            || a.starts_with("-maxrregcount=")
            || a.starts_with("--maxrregcount=")
            || a.starts_with("-Xptxas=")
            || KEEP_EXACT.contains(&a)
            || a.starts_with("--expt-")
        {
            out.flags.push(a.to_string());
            continue;
        }
        if KEEP_WITH_VALUE.contains(&a) {
            let Some(v) = args.get(i) else { continue };
            i += 1;
            match a {
                "-I" | "-isystem" | "--include-path" => out.include_dirs.push(abs(v)),
                "-D" | "--define-macro" => out.defines.push(v.clone()),
                "-U" | "--undefine-macro" => out.undefines.push(v.clone()),
                "-include" | "--pre-include" => out.pre_includes.push(abs(v)),
                // One word, `-std=c++17`: nvcc accepts `option=value` for every option.
                _ => out.flags.push(format!("{a}={v}")),
            }
            continue;
        }
        if DROP_WITH_VALUE.contains(&a) {
            let v = args.get(i).cloned().unwrap_or_default();
            i += 1;
            if !matches!(a, "-o" | "-MF" | "-MT" | "-MQ") {
                out.dropped.push(format!("{a} {v}"));
            }
            continue;
        }
        if matches!(
            a,
            "-c" | "-MD"
                | "-MMD"
                | "-M"
                | "-MM"
                | "-MP"
                | "-ptx"
                | "-cubin"
                | "--device-c"
                | "-dc"
                | "-lineinfo"
                | "--generate-line-info"
        ) {
            continue;
        }
        out.dropped.push(a.to_string());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_form_is_split_as_shell_words_without_expansion() {
        let d = tempfile::Builder::new().prefix("warpsight-ccdb-split-").tempdir().expect("a temporary directory").keep();
        let _ = std::fs::create_dir_all(&d);
        let _ = std::fs::write(d.join("k.cu"), "");
        let _ = std::fs::write(d.join("q.cu"), "");
        let db = serde_json::json!([
            { "directory": d, "file": "k.cu",
              "command": r#"nvcc -DNAME="a b" -I'inc dir' -DX=$(touch\ m) -U`y` -std c++17 -Xptxas -v -include pre.h -c k.cu"# },
            { "directory": d, "file": "q.cu", "command": "nvcc -DOPEN='unbalanced -c q.cu" }
        ]);
        let _ = std::fs::write(d.join("compile_commands.json"), db.to_string());
        let f = lookup(&d.join("k.cu")).unwrap_or_default();
        assert_eq!(f.defines, ["NAME=a b", "X=$(touch m)"]);
        assert_eq!(f.undefines, ["`y`"]);
        assert_eq!(f.include_dirs, [d.join("inc dir")]);
        assert_eq!(f.pre_includes, [d.join("pre.h")]);
        assert_eq!(f.flags, ["-std=c++17", "-Xptxas=-v"]);
        let q = lookup(&d.join("q.cu")).unwrap_or_default();
        assert!(q.defines.is_empty() && q.flags.is_empty());
        assert_eq!(q.dropped.len(), 1, "{:?}", q.dropped);
        assert_eq!(find_database(&d.join("k.cu")), Some(d.join("compile_commands.json")));
        assert_eq!(find_database(&d.join("not/yet/there.cu")), Some(d.join("compile_commands.json")));
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn database_lookup_keeps_nvcc_flags_and_drops_clang_ones() {
        let d = tempfile::Builder::new().prefix("warpsight-ccdb-").tempdir().expect("a temporary directory").keep();
        let _ = std::fs::create_dir_all(d.join("src"));
        let _ = std::fs::create_dir_all(d.join("build"));
        let _ = std::fs::write(d.join("src/k.cu"), "__global__ void k() {}\n");
        let db = serde_json::json!([
            {"directory": d.join("build"), "file": "../src/k.cu",
             "command": "/usr/bin/nvcc -I../include -isystem /opt/x -DN=4096 -DFAST -std=c++17 --expt-relaxed-constexpr -O3 -Xcompiler -fPIC -gencode arch=compute_80,code=sm_80 -c ../src/k.cu -o k.o"},
            {"directory": d.join("build"), "file": "../src/other.cu",
             "arguments": ["clang++", "-x", "cuda", "--cuda-gpu-arch=sm_80", "-Wall", "-DOTHER", "../src/other.cu"]}
        ]);
        let _ = std::fs::write(d.join("build/compile_commands.json"), db.to_string());
        let f = lookup(&d.join("src/k.cu"));
        let f = f.unwrap_or_default();
        assert_eq!(f.defines, ["N=4096", "FAST"]);
        assert_eq!(
            f.include_dirs,
            [d.join("build").join("../include"), PathBuf::from("/opt/x")]
        );
        assert_eq!(f.flags, ["-std=c++17", "--expt-relaxed-constexpr", "-O3"]);
        assert_eq!(
            f.dropped,
            ["-Xcompiler -fPIC", "-gencode arch=compute_80,code=sm_80"]
        );
        // A file with no entry gets nothing.
        let _ = std::fs::write(d.join("src/none.cu"), "");
        assert!(lookup(&d.join("src/none.cu")).is_none());
        let clang_args: Vec<String> = [
            "clang++",
            "-x",
            "cuda",
            "--cuda-gpu-arch=sm_80",
            "-Wall",
            "-DOTHER",
            "o.cu",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let g = filter_args(&clang_args, &d, &d.join("nothing.cu"));
        assert_eq!(g.defines, ["OTHER"]);
        assert_eq!(
            g.dropped,
            ["-x cuda", "--cuda-gpu-arch=sm_80", "-Wall", "o.cu"]
        );
        let _ = std::fs::remove_dir_all(&d);
    }
}
