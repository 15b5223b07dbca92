//! The on-disk compile cache.
//!
//! Reopening a file, or undoing an edit, should not pay for a compile again, and with no
//! compiler at all the last PTX compiled for the same text is still the best answer. The
//! key is a SHA-256 over everything that changes the output: the file's path (the PTX's
//! `.file` directives name it), the text of the file, the text of every local include
//! (`#include "..."` resolved relative to the including file and the `-I` directories,
//! recursively), the compiler
//! flags, the architecture, and the compiler's identity and version. Only compiles that
//! produced PTX are stored: a failure's cause is often outside the key (a system header
//! installed since), and a cached failure would outlive its fix. A second,
//! compiler-independent key (the same without the compiler) indexes the latest entry for
//! that text so the no-toolchain path can find it.
//!
//! Entries live in `dirs::cache_dir()/warpsight/ptx/` (overridable) as JSON files named by
//! the hex key; writes go to a fresh temporary file in the same folder
//! ([`tempfile::NamedTempFile`]: unpredictable name, exclusive creation, mode 0600) that is
//! then renamed over the entry, so a concurrent reader never sees half an entry and a
//! symlink planted under an entry's name is replaced, never followed.
//!
//! [`Cache::open`] creates the folders with mode 0700 and refuses a cache folder (or its
//! `ptx/` and `by-text/` folders) that is a symlink, is not a directory, or is owned by
//! another user (docs/security.md): the caller then works without a cache.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::diagnostics::CompilerDiagnostic;
use crate::ptxas::KernelResources;

/// Bump when the entry format or the compile recipe changes.
const FORMAT: &str = "warpsight-cuda-cache-v2";

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
    /// The user's path of the file: the PTX's `.file` directives and the diagnostics name
    /// it, so an entry made for one copy of a text must not serve another copy elsewhere.
    pub path: &'a str,
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
        field("path", self.path.as_bytes());
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

/// A cache rooted at a directory that [`Cache::open`] checked.
#[derive(Debug, Clone)]
pub struct Cache {
    dir: PathBuf,
}

/// The sub-folders of a cache.
const SUBDIRS: [&str; 2] = ["ptx", "by-text"];

impl Cache {
    /// Opens (creating when missing, mode 0700) the cache at `dir`. Refuses, with the
    /// reason, a folder that is a symlink, not a directory, or owned by another user, and
    /// the same for its `ptx/` and `by-text/` folders; a folder of ours that others may
    /// write to is made private (0700) first.
    pub fn open(dir: impl Into<PathBuf>) -> std::io::Result<Cache> {
        let dir = dir.into();
        private_dir(&dir, true)?;
        for sub in SUBDIRS {
            private_dir(&dir.join(sub), false)?;
        }
        Ok(Cache { dir })
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

    /// The entry for `key`. Only compiles that produced PTX are served: an entry without
    /// PTX (older versions of warpsight stored failed compiles) is a miss, so a failure is
    /// always compiled again.
    pub fn get(&self, key: &str) -> Option<CacheEntry> {
        let s = read_regular(&self.entry_path(key))?;
        serde_json::from_str::<CacheEntry>(&s).ok().filter(|e| e.ptx.is_some())
    }

    /// The latest entry compiled from the same text, flags and architecture by any
    /// compiler.
    pub fn get_by_text(&self, text_key: &str) -> Option<CacheEntry> {
        let key = read_regular(&self.index_path(text_key))?;
        let key = key.trim();
        // A key is 64 hex digits; anything else is not ours.
        if key.len() != 64 || !key.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        self.get(key)
    }

    /// Stores a successful compile under its key and indexes it by text. A failed
    /// compile (no PTX) is not stored: its cause is often outside the key (a system
    /// header installed since, a missing file that `#include <...>` names, a toolchain
    /// repaired in place), and a cached failure would outlive the fix (issue 14).
    pub fn put(&self, parts: &KeyParts<'_>, entry: &CacheEntry) -> std::io::Result<()> {
        if entry.ptx.is_none() {
            return Ok(());
        }
        let key = parts.key();
        let json = serde_json::to_string(entry).map_err(std::io::Error::other)?;
        write_atomic(&self.entry_path(&key), json.as_bytes())?;
        write_atomic(&self.index_path(&parts.text_key()), key.as_bytes())?;
        Ok(())
    }
}

/// Reads a cache file when it is a regular file (not a symlink, a FIFO or a device).
fn read_regular(path: &Path) -> Option<String> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    if !meta.file_type().is_file() {
        return None;
    }
    std::fs::read_to_string(path).ok()
}

/// Makes sure `dir` is a private directory of ours: creates it (and, when `parents`, its
/// missing parents) with mode 0700, and refuses a symlink, a non-directory or another
/// user's directory.
fn private_dir(dir: &Path, parents: bool) -> std::io::Result<()> {
    let refuse = |why: &str| Err(std::io::Error::other(format!("{}: {why}", dir.display())));
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(parents);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    match std::fs::symlink_metadata(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => match builder.create(dir) {
            Ok(()) => {}
            // Created meanwhile (another warpsight): checked below like any other.
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e),
        },
        Err(e) => return Err(e),
        Ok(_) => {}
    }
    let meta = std::fs::symlink_metadata(dir)?;
    if meta.file_type().is_symlink() {
        return refuse("is a symbolic link; the cache is not used");
    }
    if !meta.is_dir() {
        return refuse("is not a directory; the cache is not used");
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        // SAFETY: `geteuid` has no preconditions and cannot fail.
        let me = unsafe { libc::geteuid() };
        if meta.uid() != me {
            return refuse(&format!("is owned by another user (uid {}); the cache is not used", meta.uid()));
        }
        if meta.mode() & 0o022 != 0 {
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
        }
    }
    Ok(())
}

/// Writes `bytes` to `path` through a fresh temporary file in the same directory, renamed
/// over `path` (the rename replaces a symlink at `path`, it never writes through one).
fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write as _;
    let dir = path
        .parent()
        .ok_or_else(|| std::io::Error::other("cache path has no parent"))?;
    let mut tmp = tempfile::Builder::new().prefix(".tmp-").tempfile_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmpdir(name: &str) -> PathBuf {
        // An unpredictable name, created exclusively (tempfile); the tests remove it.
        tempfile::Builder::new().prefix(&format!("warpsight-cache-test-{name}-")).tempdir().expect("a temporary directory").keep()
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
            path: "/w/k.cu",
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
        // The same text elsewhere is another entry (its PTX names its own path).
        let k5 = KeyParts {
            path: "/elsewhere/k.cu",
            ..k1.clone()
        };
        assert_ne!(k1.key(), k5.key());
        assert_ne!(k1.text_key(), k5.text_key());
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
        let cache = Cache::open(&d).unwrap_or_else(|e| panic!("{e}"));
        let parts = KeyParts {
            path: "/w/x.cu",
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

    #[test]
    fn failed_compiles_are_neither_stored_nor_served() {
        let d = tmpdir("failed");
        let cache = Cache::open(&d).unwrap_or_else(|e| panic!("{e}"));
        let parts = KeyParts { path: "/w/f.cu", text: "#include <missing.h>", includes: &[], flags: &[], arch: "sm_80", compiler: "nvcc 1" };
        let failed = CacheEntry { ptx: None, resources: vec![], diagnostics: vec![], toolchain: "nvcc".into(), arch: "sm_80".into(), notes: vec![] };
        assert!(cache.put(&parts, &failed).is_ok());
        assert!(!cache.entry_path(&parts.key()).exists());
        assert_eq!(cache.get_by_text(&parts.text_key()), None);
        // An entry without PTX left by an older version is a miss.
        let json = serde_json::to_string(&failed).unwrap_or_default();
        std::fs::write(cache.entry_path(&parts.key()), json).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(cache.get(&parts.key()), None);
        let _ = std::fs::remove_dir_all(&d);
    }

    #[cfg(unix)]
    #[test]
    fn folders_are_private_and_symlinks_are_refused_or_replaced() {
        use std::os::unix::fs::PermissionsExt;
        let d = tmpdir("private");
        let victim = d.join("victim");
        std::fs::write(&victim, "precious").unwrap_or_else(|e| panic!("{e}"));
        // A fresh cache: the folders are created 0700.
        let root = d.join("new/warpsight");
        let cache = Cache::open(&root).unwrap_or_else(|e| panic!("{e}"));
        for sub in ["", "ptx", "by-text"] {
            let mode = std::fs::metadata(root.join(sub)).map(|m| m.permissions().mode() & 0o777);
            assert_eq!(mode.ok(), Some(0o700), "{sub}");
        }
        // A symlink planted under an entry's name is replaced by the entry, not written
        // through.
        let parts = KeyParts { path: "/w/y.cu", text: "y", includes: &[], flags: &[], arch: "sm_80", compiler: "nvcc 1" };
        let entry_path = cache.entry_path(&parts.key());
        std::os::unix::fs::symlink(&victim, &entry_path).unwrap_or_else(|e| panic!("{e}"));
        let e = CacheEntry { ptx: Some("p".into()), resources: vec![], diagnostics: vec![], toolchain: String::new(), arch: "sm_80".into(), notes: vec![] };
        assert!(cache.put(&parts, &e).is_ok());
        assert_eq!(std::fs::read_to_string(&victim).ok().as_deref(), Some("precious"));
        assert!(std::fs::symlink_metadata(&entry_path).is_ok_and(|m| m.is_file()));
        assert_eq!(cache.get(&parts.key()), Some(e));
        // No temporary file is left behind.
        let left: Vec<_> = std::fs::read_dir(root.join("ptx")).map(|r| r.filter_map(Result::ok).map(|e| e.file_name()).collect()).unwrap_or_default();
        assert_eq!(left.len(), 1, "{left:?}");
        // A symlinked root or sub-folder is refused.
        let link = d.join("link");
        std::os::unix::fs::symlink(&root, &link).unwrap_or_else(|e| panic!("{e}"));
        assert!(Cache::open(&link).is_err_and(|e| e.to_string().contains("symbolic link")));
        let other = d.join("other");
        std::fs::create_dir_all(&other).unwrap_or_else(|e| panic!("{e}"));
        std::os::unix::fs::symlink(d.join("elsewhere"), other.join("by-text")).unwrap_or_else(|e| panic!("{e}"));
        assert!(Cache::open(&other).is_err());
        assert!(!d.join("elsewhere").exists());
        // A file where the folder should be.
        assert!(Cache::open(&victim).is_err_and(|e| e.to_string().contains("not a directory")));
        // A group-writable folder of ours is made private.
        let loose = d.join("loose");
        std::fs::create_dir_all(&loose).unwrap_or_else(|e| panic!("{e}"));
        std::fs::set_permissions(&loose, std::fs::Permissions::from_mode(0o777)).unwrap_or_else(|e| panic!("{e}"));
        assert!(Cache::open(&loose).is_ok());
        assert_eq!(std::fs::metadata(&loose).map(|m| m.permissions().mode() & 0o777).ok(), Some(0o700));
        let _ = std::fs::remove_dir_all(&d);
    }

    #[cfg(unix)]
    #[test]
    fn another_users_folder_is_refused() {
        // SAFETY: `geteuid` has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            // `/` belongs to root.
            assert!(Cache::open("/").is_err_and(|e| e.to_string().contains("another user")));
            return;
        }
        // As root: a folder handed to `nobody`.
        let d = tmpdir("owner");
        let theirs = d.join("theirs");
        std::fs::create_dir_all(&theirs).unwrap_or_else(|e| panic!("{e}"));
        let c = std::ffi::CString::new(theirs.display().to_string()).unwrap_or_default();
        // SAFETY: `c` is a valid NUL-terminated path that outlives the call.
        assert_eq!(unsafe { libc::chown(c.as_ptr(), 65534, 65534) }, 0);
        assert!(Cache::open(&theirs).is_err_and(|e| e.to_string().contains("another user")));
        assert!(!theirs.join("ptx").exists());
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn an_index_that_is_not_a_key_is_ignored() {
        let d = tmpdir("index");
        let cache = Cache::open(&d).unwrap_or_else(|e| panic!("{e}"));
        let _ = std::fs::write(cache.index_path("k"), "../../../etc/passwd");
        assert_eq!(cache.get_by_text("k"), None);
        let _ = std::fs::remove_dir_all(&d);
    }
}
