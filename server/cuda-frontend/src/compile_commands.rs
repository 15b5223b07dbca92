//! Include paths, defines and flags from `compile_commands.json`.
//!
//! A project's build (CMake, Bear) records the exact compile line of each file; using it
//! makes our PTX match the real build's. The database may have been written for clang
//! (CMake with `CMAKE_CUDA_COMPILER=clang++`) or for nvcc, so flags are filtered: include
//! paths, defines, the language standard and nvcc's own code-generation options are kept;
//! output, architecture and clang-only options are dropped, with a note naming them (we set
//! `-ptx -arch` ourselves). The database is looked for in the file's directory and its
//! ancestors, and in their `build/` subdirectories.

use std::path::{Path, PathBuf};

/// Flags taken from the database for one file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DbFlags {
    /// The database file used.
    pub database: PathBuf,
    /// Kept flags, ready for nvcc (`-I/abs/dir`, `-DNAME=1`, `-std=c++17`, ...).
    pub flags: Vec<String>,
    /// Include directories (also inside `flags`), for NVRTC and the cache key.
    pub include_dirs: Vec<PathBuf>,
    /// Defines (also inside `flags`) as `NAME` or `NAME=VALUE`.
    pub defines: Vec<String>,
    /// Dropped flags, for the note.
    pub dropped: Vec<String>,
}

/// Finds the database that has an entry for `file`, and extracts its flags.
pub fn lookup(file: &Path) -> Option<DbFlags> {
    let file = file.canonicalize().ok()?;
    let mut dir = file.parent();
    while let Some(d) = dir {
        for cand in [
            d.join("compile_commands.json"),
            d.join("build").join("compile_commands.json"),
        ] {
            if let Some(f) = read_entry(&cand, &file) {
                return Some(f);
            }
        }
        dir = d.parent();
    }
    None
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
        let args: Vec<String> = if let Some(a) = e.get("arguments").and_then(|a| a.as_array()) {
            a.iter()
                .filter_map(|s| s.as_str().map(str::to_string))
                .collect()
        } else {
            split_command(
                e.get("command")
                    .and_then(|c| c.as_str())
                    .unwrap_or_default(),
            )
        };
        let mut out = filter_args(&args, &dir, file);
        out.database = db.to_path_buf();
        return Some(out);
    }
    None
}

/// Splits a shell-quoted command line (the `command` form) into words: single quotes,
/// double quotes and backslash escapes, as a POSIX shell would for plain words.
pub fn split_command(cmd: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut chars = cmd.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                for d in chars.by_ref() {
                    if d == '\'' {
                        break;
                    }
                    cur.push(d);
                }
            }
            '"' => {
                in_word = true;
                while let Some(d) = chars.next() {
                    match d {
                        '"' => break,
                        '\\' => {
                            if let Some(e) = chars.next() {
                                cur.push(e);
                            }
                        }
                        _ => cur.push(d),
                    }
                }
            }
            '\\' => {
                in_word = true;
                if let Some(e) = chars.next() {
                    cur.push(e);
                }
            }
            c if c.is_whitespace() => {
                if in_word {
                    out.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            c => {
                in_word = true;
                cur.push(c);
            }
        }
    }
    if in_word {
        out.push(cur);
    }
    out
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
            let d = abs(p);
            out.flags.push(format!("-I{}", d.display()));
            out.include_dirs.push(d);
            continue;
        }
        if let Some(d) = a.strip_prefix("-D").filter(|d| !d.is_empty()) {
            out.flags.push(format!("-D{d}"));
            out.defines.push(d.to_string());
            continue;
        }
        if a.starts_with("-U") && a.len() > 2
            || a.starts_with("-std=")
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
                "-I" | "-isystem" | "--include-path" => {
                    let d = abs(v);
                    out.flags.push(format!("-I{}", d.display()));
                    out.include_dirs.push(d);
                }
                "-D" | "--define-macro" => {
                    out.flags.push(format!("-D{v}"));
                    out.defines.push(v.clone());
                }
                "-include" | "--pre-include" => {
                    out.flags.push("-include".to_string());
                    out.flags.push(abs(v).display().to_string());
                }
                _ => {
                    out.flags.push(a.to_string());
                    out.flags.push(v.clone());
                }
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
    fn splitting_shell_words() {
        assert_eq!(
            split_command(r#"nvcc -DNAME="a b" -I'inc dir' x\ y.cu"#),
            ["nvcc", "-DNAME=a b", "-Iinc dir", "x y.cu"]
        );
    }

    #[test]
    fn database_lookup_keeps_nvcc_flags_and_drops_clang_ones() {
        let d = std::env::temp_dir().join(format!("warpsight-ccdb-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
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
        assert!(
            f.flags.contains(&"-std=c++17".to_string())
                && f.flags.contains(&"--expt-relaxed-constexpr".to_string())
                && f.flags.contains(&"-O3".to_string())
        );
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
