//! In-process compilation with NVRTC, loaded at run time.
//!
//! NVRTC compiles device code to PTX in about 40 ms, ten times faster than starting nvcc,
//! which matters on every keystroke. It is loaded with `libloading` so that the server
//! builds and runs without CUDA: a missing library is an `Err`, never a panic (the `cudarc`
//! crate panics in that case, as we found when we tried it, hence this minimal FFI).
//! Only the functions listed in the NVRTC API reference (CUDA 13, "NVRTC" §3.1-3.3) that we
//! need are bound: create, compile, PTX size and text, log size and text, destroy, version,
//! and (optionally) the supported-architecture list.

use std::ffi::{CStr, CString, c_char, c_int};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use libloading::Library;

type NvrtcResult = c_int;
type Program = *mut std::ffi::c_void;

type CreateProgram = unsafe extern "C" fn(
    *mut Program,
    *const c_char,
    *const c_char,
    c_int,
    *const *const c_char,
    *const *const c_char,
) -> NvrtcResult;
type CompileProgram = unsafe extern "C" fn(Program, c_int, *const *const c_char) -> NvrtcResult;
type GetSize = unsafe extern "C" fn(Program, *mut usize) -> NvrtcResult;
type GetText = unsafe extern "C" fn(Program, *mut c_char) -> NvrtcResult;
type DestroyProgram = unsafe extern "C" fn(*mut Program) -> NvrtcResult;
type Version = unsafe extern "C" fn(*mut c_int, *mut c_int) -> NvrtcResult;
type NumArchs = unsafe extern "C" fn(*mut c_int) -> NvrtcResult;
type Archs = unsafe extern "C" fn(*mut c_int) -> NvrtcResult;

/// A loaded NVRTC library.
pub struct Nvrtc {
    path: PathBuf,
    // The builtins library is loaded first so that NVRTC's own `dlopen` of it by soname
    // finds it without LD_LIBRARY_PATH; kept alive for as long as NVRTC.
    _builtins: Option<Library>,
    lib: Library,
    version: (i32, i32),
}

impl std::fmt::Debug for Nvrtc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Nvrtc")
            .field("path", &self.path)
            .field("version", &self.version)
            .finish()
    }
}

/// The result of one NVRTC compile.
#[derive(Debug, Clone)]
pub struct NvrtcOutput {
    /// The PTX, when compilation succeeded.
    pub ptx: Option<String>,
    /// The program log (diagnostics in the EDG format).
    pub log: String,
}

/// Loaded libraries by path: loading is costly and unloading NVRTC while a compile runs on
/// another thread would be unsound, so each library is loaded once per process and kept.
fn loaded() -> &'static Mutex<Vec<Arc<Nvrtc>>> {
    static LOADED: OnceLock<Mutex<Vec<Arc<Nvrtc>>>> = OnceLock::new();
    LOADED.get_or_init(|| Mutex::new(Vec::new()))
}

impl Nvrtc {
    /// Loads NVRTC from `path` (a file path or a bare soname for the system loader).
    pub fn load(path: &Path) -> Result<Arc<Nvrtc>, String> {
        let mut cache = loaded()
            .lock()
            .map_err(|_| "NVRTC loader lock poisoned".to_string())?;
        if let Some(n) = cache.iter().find(|n| n.path == path) {
            return Ok(Arc::clone(n));
        }
        let builtins = path.parent().and_then(|dir| {
            let entries = std::fs::read_dir(dir).ok()?;
            let found = entries.filter_map(Result::ok).map(|e| e.path()).find(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with("libnvrtc-builtins") && n.contains(".so"))
            })?;
            // SAFETY: loading a shared library runs its initialisers; NVRTC's builtins
            // library has no initialisers with preconditions on our side.
            unsafe { Library::new(found) }.ok()
        });
        // SAFETY: as above; the library is NVIDIA's NVRTC, found by name or by the user.
        let lib = unsafe { Library::new(path) }
            .map_err(|e| format!("could not load NVRTC from {}: {e}", path.display()))?;
        let mut major = 0;
        let mut minor = 0;
        // SAFETY: the symbol has the signature of `nvrtcVersion(int*, int*)` in nvrtc.h.
        unsafe {
            let f: libloading::Symbol<'_, Version> = lib
                .get(b"nvrtcVersion\0")
                .map_err(|e| format!("{} is not NVRTC: {e}", path.display()))?;
            if f(&mut major, &mut minor) != 0 {
                return Err("nvrtcVersion failed".to_string());
            }
            for name in [
                &b"nvrtcCreateProgram\0"[..],
                b"nvrtcCompileProgram\0",
                b"nvrtcGetPTXSize\0",
                b"nvrtcGetPTX\0",
                b"nvrtcGetProgramLogSize\0",
                b"nvrtcGetProgramLog\0",
                b"nvrtcDestroyProgram\0",
            ] {
                lib.get::<*const ()>(name)
                    .map_err(|e| format!("{} lacks an NVRTC function: {e}", path.display()))?;
            }
        }
        let n = Arc::new(Nvrtc {
            path: path.to_path_buf(),
            _builtins: builtins,
            lib,
            version: (major, minor),
        });
        cache.push(Arc::clone(&n));
        Ok(n)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// `(major, minor)` from `nvrtcVersion`.
    pub fn version(&self) -> (i32, i32) {
        self.version
    }

    /// The `sm_XX` numbers this NVRTC can target (empty when the optional API is missing).
    pub fn supported_archs(&self) -> Vec<u32> {
        // SAFETY: signatures from nvrtc.h: `nvrtcGetNumSupportedArchs(int*)` and
        // `nvrtcGetSupportedArchs(int*)`, the latter writing `num` ints.
        unsafe {
            let (Ok(num), Ok(get)) = (
                self.lib.get::<NumArchs>(b"nvrtcGetNumSupportedArchs\0"),
                self.lib.get::<Archs>(b"nvrtcGetSupportedArchs\0"),
            ) else {
                return Vec::new();
            };
            let mut n: c_int = 0;
            if num(&mut n) != 0 || n <= 0 || n > 1024 {
                return Vec::new();
            }
            let mut v = vec![0 as c_int; n as usize];
            if get(v.as_mut_ptr()) != 0 {
                return Vec::new();
            }
            v.into_iter()
                .filter_map(|a| u32::try_from(a).ok())
                .collect()
        }
    }

    /// Compiles `source` (named `name` in diagnostics) with `options`.
    pub fn compile(
        &self,
        source: &str,
        name: &str,
        options: &[String],
    ) -> Result<NvrtcOutput, String> {
        let src = CString::new(source).map_err(|_| "the source contains a NUL byte".to_string())?;
        let cname =
            CString::new(name).map_err(|_| "the file name contains a NUL byte".to_string())?;
        let opts: Vec<CString> = options
            .iter()
            .filter_map(|o| CString::new(o.as_str()).ok())
            .collect();
        let opt_ptrs: Vec<*const c_char> = opts.iter().map(|o| o.as_ptr()).collect();
        // SAFETY: every symbol is resolved with its nvrtc.h signature; all pointers passed
        // are valid NUL-terminated strings that outlive the calls; the program handle is
        // created, used and destroyed within this function; buffers are sized from the
        // matching *Size call (which counts the terminating NUL).
        unsafe {
            let create: libloading::Symbol<'_, CreateProgram> = self
                .lib
                .get(b"nvrtcCreateProgram\0")
                .map_err(|e| e.to_string())?;
            let compile: libloading::Symbol<'_, CompileProgram> = self
                .lib
                .get(b"nvrtcCompileProgram\0")
                .map_err(|e| e.to_string())?;
            let ptx_size: libloading::Symbol<'_, GetSize> = self
                .lib
                .get(b"nvrtcGetPTXSize\0")
                .map_err(|e| e.to_string())?;
            let get_ptx: libloading::Symbol<'_, GetText> =
                self.lib.get(b"nvrtcGetPTX\0").map_err(|e| e.to_string())?;
            let log_size: libloading::Symbol<'_, GetSize> = self
                .lib
                .get(b"nvrtcGetProgramLogSize\0")
                .map_err(|e| e.to_string())?;
            let get_log: libloading::Symbol<'_, GetText> = self
                .lib
                .get(b"nvrtcGetProgramLog\0")
                .map_err(|e| e.to_string())?;
            let destroy: libloading::Symbol<'_, DestroyProgram> = self
                .lib
                .get(b"nvrtcDestroyProgram\0")
                .map_err(|e| e.to_string())?;

            let mut prog: Program = std::ptr::null_mut();
            let rc = create(
                &mut prog,
                src.as_ptr(),
                cname.as_ptr(),
                0,
                std::ptr::null(),
                std::ptr::null(),
            );
            if rc != 0 {
                return Err(format!("nvrtcCreateProgram failed ({rc})"));
            }
            let n_opts = c_int::try_from(opt_ptrs.len()).unwrap_or(0);
            let compiled = compile(prog, n_opts, opt_ptrs.as_ptr()) == 0;
            let read = |size: &GetSize, get: &GetText| -> String {
                let mut n = 0usize;
                if size(prog, &mut n) != 0 || n == 0 {
                    return String::new();
                }
                let mut buf = vec![0u8; n];
                if get(prog, buf.as_mut_ptr().cast()) != 0 {
                    return String::new();
                }
                CStr::from_bytes_until_nul(&buf)
                    .map(|c| c.to_string_lossy().into_owned())
                    .unwrap_or_default()
            };
            let log = read(&log_size, &get_log);
            let ptx = if compiled {
                Some(read(&ptx_size, &get_ptx))
            } else {
                None
            };
            destroy(&mut prog);
            Ok(NvrtcOutput { ptx, log })
        }
    }
}
