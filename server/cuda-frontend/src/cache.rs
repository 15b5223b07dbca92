//! The on-disk compile cache.
//!
//! Reopening a file, or undoing an edit, should not pay for a compile again, and with no
//! compiler at all the last PTX compiled for the same text is still the best answer. The
//! key is a SHA-256 over everything that changes the output:
//! the text of the file, the text of every local include (`#include "..."` resolved
//! relative to the including file and the `-I` directories, recursively), the compiler
//! flags, the architecture, and the compiler's identity and version. A second,
//! compiler-independent key (the same without the compiler) indexes the latest entry for
//! that text so the no-toolchain path can find it.
//!
//! Entries live in `dirs::cache_dir()/warpsight/ptx/` (overridable) as JSON files named by
//! the hex key; writes go to a temporary file and are renamed, so a concurrent reader never
//! sees half an entry.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::diagnostics::CompilerDiagnostic;
use crate::ptxas::KernelResources;

/// Bump when the entry format or the compile recipe changes.
const FORMAT: &str = "warpsight-cuda-cache-v1";

/// What is stored per compile.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CacheEntry {
    pub ptx: Option<String>,
    pub resources: Vec<KernelResources>,
    pub diagnostics: Vec<CompilerDiagnostic>,
    /// The compiler that produced it (a sentence).
    pub toolchain: String,
    pub arch: String,
    pub notes: Vec<String>,
}

/// The default cache directory, `dirs::cache_dir()/warpsight`.
pub fn default_dir() -> Option<PathBuf> {
    dirs::cache_dir().map(|d| d.join("warpsight"))
}

/// Local includes of `text` (a file in `dir`), recursively, as (path, contents), in a
/// deterministic order. System includes (`<...>`) are not followed: they belong to the
/// toolchain, whose version is part of the key.
pub fn local_includes(text: &str, dir: &Path, include_dirs: &[PathBuf]) -> Vec<(PathBuf, String)> {
    let mut out: Vec<(PathBuf, String)> = Vec::new();
    let mut stack: Vec<(String, PathBuf)> = vec![(text.to_string(), dir.to_path_buf())];
    while let Some((src, d)) = stack.pop() {
        for name in quoted_includes(&src) {
            let found = std::iter::once(d.join(&name))
                .chain(include_dirs.iter().map(|i| i.join(&name)))
                .find(|p| p.is_file());
            let Some(p) = found else { continue };
            let canon = p.canonicalize().unwrap_or(p);
            if out.iter().any(|(q, _)| *q == canon) || out.len() > 512 {
                continue;
            }
            let Ok(body) = std::fs::read_to_string(&canon) else {
                continue;
            };
            let parent = canon.parent().map(Path::to_path_buf).unwrap_or_default();
            out.push((canon, body.clone()));
            stack.push((body, parent));
        }
    }
    out
}

/// The names in `#include "name"` lines.
fn quoted_includes(src: &str) -> Vec<String> {
    src.lines()
        .filter_map(|l| {
            let l = l
                .trim_start()
                .strip_prefix('#')?
                .trim_start()
                .strip_prefix("include")?
                .trim_start();
            let rest = l.strip_prefix('"')?;
            Some(rest.split('"').next()?.to_string())
        })
        .collect()
}

/// The cache key parts.
#[derive(Debug, Clone)]
pub struct KeyParts<'a> {
    pub text: &'a str,
    pub includes: &'a [(PathBuf, String)],
    pub flags: &'a [String],
    pub arch: &'a str,
    /// Compiler identity and version, e.g. `nvcc 13.5.37`.
    pub compiler: &'a str,
}

impl KeyParts<'_> {
    fn hash(&self, with_compiler: bool) -> String {
        let mut h = Sha256::new();
        let mut field = |tag: &str, bytes: &[u8]| {
            // Length-prefixed fields: no two different inputs hash the same stream.
            h.update(tag.as_bytes());
            h.update((bytes.len() as u64).to_le_bytes());
            h.update(bytes);
        };
        field("format", FORMAT.as_bytes());
        field("text", self.text.as_bytes());
        for (p, body) in self.includes {
            // The include's name does not matter, its content does: hash the file name
            // only (moving a checkout must not invalidate the cache).
            field(
                "inc-name",
                p.file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default()
                    .as_bytes(),
            );
            field("inc", body.as_bytes());
        }
        for f in self.flags {
            field("flag", f.as_bytes());
        }
        field("arch", self.arch.as_bytes());
        if with_compiler {
            field("compiler", self.compiler.as_bytes());
        }
        h.finalize().iter().map(|b| format!("{b:02x}")).collect()
    }
    /// The full key.
    pub fn key(&self) -> String {
        self.hash(true)
    }
    /// The key without the compiler (for the no-toolchain lookup).
    pub fn text_key(&self) -> String {
        self.hash(false)
    }
}

/// A cache rooted at a directory.
#[derive(Debug, Clone)]
pub struct Cache {
    dir: PathBuf,
}

impl Cache {
    pub fn new(dir: impl Into<PathBuf>) -> Cache {
        Cache { dir: dir.into() }
    }
    pub fn dir(&self) -> &Path {
        &self.dir
    }
    fn entry_path(&self, key: &str) -> PathBuf {
        self.dir.join("ptx").join(format!("{key}.json"))
    }
    fn index_path(&self, text_key: &str) -> PathBuf {
        self.dir.join("by-text").join(text_key)
    }

    pub fn get(&self, key: &str) -> Option<CacheEntry> {
        let s = std::fs::read_to_string(self.entry_path(key)).ok()?;
        serde_json::from_str(&s).ok()
    }

    /// The latest entry compiled from the same text, flags and architecture by any
    /// compiler.
    pub fn get_by_text(&self, text_key: &str) -> Option<CacheEntry> {
        let key = std::fs::read_to_string(self.index_path(text_key)).ok()?;
        self.get(key.trim())
    }

    pub fn put(&self, parts: &KeyParts<'_>, entry: &CacheEntry) -> std::io::Result<()> {
        let key = parts.key();
        let json = serde_json::to_string(entry).map_err(std::io::Error::other)?;
        write_atomic(&self.entry_path(&key), json.as_bytes())?;
        if entry.ptx.is_some() {
            write_atomic(&self.index_path(&parts.text_key()), key.as_bytes())?;
        }
        Ok(())
    }
}

fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path
        .parent()
        .ok_or_else(|| std::io::Error::other("cache path has no parent"))?;
    std::fs::create_dir_all(dir)?;
    let tmp = dir.join(format!(
        ".tmp-{}-{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmpdir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!(
            "warpsight-cache-test-{name}-{}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&d);
        let _ = std::fs::create_dir_all(&d);
        d
    }

    #[test]
    fn includes_are_followed_recursively_and_change_the_key() {
        let d = tmpdir("inc");
        let _ = std::fs::create_dir_all(d.join("inc"));
        let _ = std::fs::write(d.join("a.h"), "#include \"b.h\"\n#define A 1\n");
        let _ = std::fs::write(d.join("inc/b.h"), "#define B 2\n#include <cuda.h>\n");
        let text = "#include \"a.h\"\n#include <stdio.h>\n__global__ void k() {}\n";
        let incs = local_includes(text, &d, &[d.join("inc")]);
        assert_eq!(incs.len(), 2);
        let flags = vec!["-lineinfo".to_string()];
        let k1 = KeyParts {
            text,
            includes: &incs,
            flags: &flags,
            arch: "sm_80",
            compiler: "nvcc 13.5.37",
        };
        let _ = std::fs::write(d.join("inc/b.h"), "#define B 3\n");
        let incs2 = local_includes(text, &d, &[d.join("inc")]);
        let k2 = KeyParts {
            includes: &incs2,
            ..k1.clone()
        };
        assert_ne!(k1.key(), k2.key());
        let k3 = KeyParts {
            arch: "sm_90",
            ..k1.clone()
        };
        assert_ne!(k1.key(), k3.key());
        let k4 = KeyParts {
            compiler: "nvcc 13.6",
            ..k1.clone()
        };
        assert_ne!(k1.key(), k4.key());
        assert_eq!(k1.text_key(), k4.text_key());
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn put_get_and_text_index() {
        let d = tmpdir("put");
        let cache = Cache::new(&d);
        let parts = KeyParts {
            text: "x",
            includes: &[],
            flags: &[],
            arch: "sm_80",
            compiler: "nvcc 1",
        };
        let e = CacheEntry {
            ptx: Some(".version 9.5".into()),
            resources: vec![],
            diagnostics: vec![],
            toolchain: "nvcc".into(),
            arch: "sm_80".into(),
            notes: vec![],
        };
        assert!(cache.put(&parts, &e).is_ok());
        assert_eq!(cache.get(&parts.key()), Some(e.clone()));
        let other = KeyParts {
            compiler: "nvrtc 2",
            ..parts.clone()
        };
        assert_eq!(cache.get(&other.key()), None);
        assert_eq!(cache.get_by_text(&other.text_key()), Some(e));
        let _ = std::fs::remove_dir_all(&d);
    }
}
