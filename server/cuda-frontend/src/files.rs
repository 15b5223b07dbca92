//! Reading input files without trusting what they are: every file warpsight reads from a
//! user's disk or workspace (the file named on the command line, a `.cu` read from disk,
//! the recorded `.ptx` beside a `.cu`, `compile_commands.json`) goes through [`read_text`].
//!
//! Why: a name says nothing about what is behind it. A FIFO named `x.ptx` blocks `open(2)`
//! until a writer appears (for ever, without one) and then streams without end; a symlink
//! `z.ptx -> /dev/zero` reports a size of 0 and never reaches end of file. So:
//! 1. the type is checked *before* opening (`stat(2)`, following symlinks): anything but a
//!    regular file (FIFO, character or block device, socket, directory) is refused with
//!    one line saying what it is;
//! 2. the file is opened with `O_NONBLOCK`, so that a FIFO swapped in after the check
//!    cannot block the open, and the type is checked again on the open descriptor
//!    (`fstat(2)`), which is the file actually read;
//! 3. the size limit is applied while reading (`Read::take(limit + 1)`), not from the
//!    metadata, which procfs, sysfs and devices do not fill in.
//!
//! On a regular file `O_NONBLOCK` has no effect (open(2): "has no effect for regular files
//! and block devices").

use std::fs::{File, OpenOptions};
use std::io::Read;
use std::path::Path;

/// Why a file was not read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The file does not exist (callers that probe for optional files stay quiet on this).
    #[error("cannot read {path}: no such file")]
    NotFound { path: String },
    #[error("cannot read {path}: {source}")]
    Io { path: String, source: std::io::Error },
    /// A FIFO, a device, a socket or a directory.
    #[error("{path}: not a regular file ({kind}); refused")]
    NotRegular { path: String, kind: &'static str },
    #[error("{path}: file is too large (the limit is {})", show_size(*limit))]
    TooLarge { path: String, limit: u64 },
    #[error("{path}: not a text file (binary data)")]
    Binary { path: String },
    #[error("{path}: not a text file (invalid UTF-8)")]
    NotUtf8 { path: String },
}

impl ReadError {
    pub fn is_not_found(&self) -> bool {
        matches!(self, ReadError::NotFound { .. })
    }
}

/// What a file that is not a regular file is, in words.
pub fn kind_name(t: std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "a FIFO";
        }
        if t.is_char_device() {
            return "a character device";
        }
        if t.is_block_device() {
            return "a block device";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    if t.is_dir() {
        "a directory"
    } else if t.is_symlink() {
        "a symbolic link"
    } else if t.is_file() {
        "a regular file"
    } else {
        "not a file"
    }
}

fn show_size(bytes: u64) -> String {
    if bytes >= 1 << 20 { format!("{} MiB", bytes >> 20) } else { format!("{bytes} bytes") }
}

fn io_error(path: &Path, e: std::io::Error) -> ReadError {
    let path = path.display().to_string();
    if e.kind() == std::io::ErrorKind::NotFound { ReadError::NotFound { path } } else { ReadError::Io { path, source: e } }
}

/// Opens `path` for reading if (and only if) it is a regular file.
fn open_regular(path: &Path) -> Result<File, ReadError> {
    let shown = || path.display().to_string();
    let meta = std::fs::metadata(path).map_err(|e| io_error(path, e))?;
    if !meta.is_file() {
        return Err(ReadError::NotRegular { path: shown(), kind: kind_name(meta.file_type()) });
    }
    let mut options = OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options.open(path).map_err(|e| io_error(path, e))?;
    // The descriptor's own type: the path may have been replaced since the check.
    let meta = file.metadata().map_err(|e| io_error(path, e))?;
    if !meta.is_file() {
        return Err(ReadError::NotRegular { path: shown(), kind: kind_name(meta.file_type()) });
    }
    Ok(file)
}

/// Reads a regular file of at most `limit` bytes.
pub fn read_bytes(path: &Path, limit: u64) -> Result<Vec<u8>, ReadError> {
    let file = open_regular(path)?;
    let too_large = || ReadError::TooLarge { path: path.display().to_string(), limit };
    // A cheap early answer for a file that says it is too large; the limit that counts is
    // the one applied while reading.
    if file.metadata().is_ok_and(|m| m.len() > limit) {
        return Err(too_large());
    }
    let mut bytes = Vec::new();
    file.take(limit.saturating_add(1)).read_to_end(&mut bytes).map_err(|e| io_error(path, e))?;
    if bytes.len() as u64 > limit {
        return Err(too_large());
    }
    Ok(bytes)
}

/// Reads a regular text file of at most `limit` bytes, refusing binary data (a NUL byte in
/// the first 64 KiB) and invalid UTF-8.
pub fn read_text(path: &Path, limit: u64) -> Result<String, ReadError> {
    let bytes = read_bytes(path, limit)?;
    if bytes.iter().take(1 << 16).any(|b| *b == 0) {
        return Err(ReadError::Binary { path: path.display().to_string() });
    }
    String::from_utf8(bytes).map_err(|_| ReadError::NotUtf8 { path: path.display().to_string() })
}

/// The most warpsight reads of one source or PTX file (the CLI's documented limit, and the
/// same for files the language server reads from disk).
pub const MAX_SOURCE_BYTES: u64 = 512 << 20;

/// The most warpsight reads of one `compile_commands.json` (a database of a very large
/// project is tens of MiB).
pub const MAX_COMPILE_DB_BYTES: u64 = 256 << 20;

/// The most the launch folding reads of one included header.
pub const MAX_HEADER_BYTES: u64 = 4 << 20;

/// The most headers the launch folding reads for one file.
pub const MAX_HEADERS: usize = 64;

/// The local headers a file includes (`#include "name"`), recursively, as `(path, text)`
/// in the order they are first included: each resolved like the compiler does, relative
/// to the including file, then in `include_dirs`. Each is read with [`read_text`] (regular
/// files only, at most [`MAX_HEADER_BYTES`]), at most [`MAX_HEADERS`] of them; a header
/// that cannot be read is left out (the compiler reports it). System `<...>` includes are
/// not followed.
pub fn local_headers(text: &str, dir: &Path, include_dirs: &[std::path::PathBuf]) -> Vec<(std::path::PathBuf, String)> {
    let mut out: Vec<(std::path::PathBuf, String)> = Vec::new();
    let mut seen: Vec<std::path::PathBuf> = Vec::new();
    visit_includes(text, dir, include_dirs, &mut seen, &mut out, 0);
    out
}

fn visit_includes(
    text: &str,
    dir: &Path,
    include_dirs: &[std::path::PathBuf],
    seen: &mut Vec<std::path::PathBuf>,
    out: &mut Vec<(std::path::PathBuf, String)>,
    depth: u32,
) {
    if depth > 16 {
        return;
    }
    for name in crate::lex::lex(text).includes {
        if out.len() >= MAX_HEADERS {
            return;
        }
        let found = std::iter::once(dir.join(name)).chain(include_dirs.iter().map(|d| d.join(name))).find(|p| p.is_file());
        let Some(path) = found else { continue };
        let canon = path.canonicalize().unwrap_or(path);
        if seen.contains(&canon) {
            continue;
        }
        seen.push(canon.clone());
        let Ok(body) = read_text(&canon, MAX_HEADER_BYTES) else {
            continue;
        };
        let parent = canon.parent().map(Path::to_path_buf).unwrap_or_default();
        // Depth first: a header's own includes come before it, as the preprocessor sees them.
        visit_includes(&body, &parent, include_dirs, seen, out, depth + 1);
        if out.len() < MAX_HEADERS {
            out.push((canon, body));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(tag: &str) -> tempfile::TempDir {
        tempfile::Builder::new().prefix(&format!("warpsight-files-{tag}-")).tempdir().expect("scratch dir")
    }

    #[test]
    fn regular_files_are_read_and_limits_apply() {
        let dir_tmp = scratch("regular");
        let dir = dir_tmp.path();
        let p = dir.join("a.ptx");
        std::fs::write(&p, "hello\n").expect("write");
        assert_eq!(read_text(&p, 6).expect("read"), "hello\n");
        assert!(matches!(read_text(&p, 5), Err(ReadError::TooLarge { .. })));
        std::fs::write(&p, b"a\0b").expect("write");
        assert!(matches!(read_text(&p, 100), Err(ReadError::Binary { .. })));
        std::fs::write(&p, b"\xff\xfe").expect("write");
        assert!(matches!(read_text(&p, 100), Err(ReadError::NotUtf8 { .. })));
        assert!(read_text(&dir.join("missing.ptx"), 100).expect_err("missing").is_not_found());
        let e = read_text(dir, 100).expect_err("a directory");
        assert!(e.to_string().contains("not a regular file (a directory)"), "{e}");
    }

    #[cfg(unix)]
    #[test]
    fn devices_fifos_and_symlinks_to_them_are_refused_without_blocking() {
        let dir_tmp = scratch("special");
        let dir = dir_tmp.path();
        let fifo = dir.join("x.ptx");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).expect("path");
        // SAFETY: `c` is a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo");
        let e = read_text(&fifo, 100).expect_err("a FIFO");
        assert!(e.to_string().contains("not a regular file (a FIFO)"), "{e}");
        let zero = dir.join("z.ptx");
        std::os::unix::fs::symlink("/dev/zero", &zero).expect("symlink");
        let e = read_text(&zero, 100).expect_err("/dev/zero");
        assert!(e.to_string().contains("not a regular file (a character device)"), "{e}");
    }

    /// A FIFO planted as a workspace's `compile_commands.json` (no writer: `open` would
    /// block for ever) is passed over, and the lookup returns at once.
    #[cfg(unix)]
    #[test]
    fn a_fifo_compile_database_does_not_block_the_lookup() {
        let dir_tmp = scratch("db");
        let dir = dir_tmp.path();
        let cu = dir.join("k.cu");
        std::fs::write(&cu, "__global__ void k() {}\n").expect("write");
        let db = dir.join("compile_commands.json");
        let c = std::ffi::CString::new(db.as_os_str().as_encoded_bytes()).expect("path");
        // SAFETY: `c` is a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(crate::compile_commands::lookup(&cu));
        });
        let found = rx.recv_timeout(std::time::Duration::from_secs(10)).expect("the lookup blocked on a FIFO");
        assert_eq!(found, None);
    }

    /// procfs reports a size of 0 for files that have content: the limit must hold while
    /// reading, not only from the metadata.
    #[cfg(target_os = "linux")]
    #[test]
    fn the_limit_applies_while_reading_not_from_metadata() {
        let p = Path::new("/proc/self/status");
        let meta = std::fs::metadata(p).expect("procfs");
        assert_eq!(meta.len(), 0, "procfs reports no size");
        assert!(matches!(read_bytes(p, 16), Err(ReadError::TooLarge { limit: 16, .. })));
        assert!(read_bytes(p, 1 << 20).expect("read").len() > 16);
    }
}
