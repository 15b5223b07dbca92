//! The steps of [`super::prepare_text`], in order: read the source, gather the flags (the
//! compile database, the options, the shell check), scan the launch sites, pick the
//! architecture and the compiler, then compile (or serve the cache, or fall back to
//! recorded PTX), and fill the [`Prepared`] from the result.

use super::*;

/// What the compile and recorded-PTX steps read: one source file and its flags, the
/// options and the shared time budget.
struct Unit<'a> {
    path: &'a Path,
    path_s: String,
    text: &'a str,
    /// The source's folder (on the include path, and where workspace tools are looked for).
    dir: PathBuf,
    cf: CompileFlags,
    /// The flags that enter the cache key.
    flags: Vec<String>,
    /// The local headers the source includes, with their text (part of the cache key).
    includes: Vec<(PathBuf, String)>,
    opts: &'a Options,
    deadline: Deadline,
    cancel: &'a CancelToken,
}

impl Unit<'_> {
    /// The cache key of this unit compiled for `arch` by `compiler` (`""` for recorded
    /// PTX, which is looked up by the text part of the key).
    fn key<'k>(&'k self, arch: &'k str, compiler: &'k str) -> KeyParts<'k> {
        KeyParts { path: &self.path_s, text: self.text, includes: &self.includes, flags: &self.flags, arch, compiler }
    }
}

/// A compile that a newer edit cancelled: [`compile_or_cached`] has already filled the
/// [`Prepared`] to say so.
struct Cancelled;

/// [`prepare_text`] before its output is cleaned of control characters.
pub(super) fn prepare_unchecked(path: &Path, text: Option<&str>, opts: &Options, cancel: &CancelToken) -> Prepared {
    let start = Instant::now();
    // One budget for everything below that runs a tool.
    let deadline = Deadline::after(opts.timeout);
    let mut p = Prepared::nothing_yet(path);
    let text: String = match text {
        Some(t) => t.to_string(),
        None => match crate::files::read_text(path, crate::files::MAX_SOURCE_BYTES) {
            Ok(t) => t,
            Err(e) => {
                p.toolchain_note = format!("No PTX: the file could not be read ({e}).");
                p.diagnostics.push(CompilerDiagnostic::general(Severity::Error, e.to_string()));
                p.elapsed = start.elapsed();
                return p;
            }
        },
    };
    let dir = source_dir(path);
    let cf = compile_flags(path, opts, &mut p.notes);
    // Launch sites fold with what the compiler sees: the same defines and local headers.
    let headers = crate::files::local_headers(&text, &dir, &cf.include_dirs);
    let scan = scan_source_with(
        &text,
        &ScanInput { user_args: &opts.args, defines: &cf.defines, undefines: &cf.undefines, headers: &headers },
    );
    p.kernel_decls = scan.kernels;
    p.launch_sites = scan.launch_sites;
    p.annotations = scan.annotations;
    p.loop_annotations = scan.loop_annotations;
    p.launch_bounds = scan.launch_bounds;
    p.used_args = scan.used_args;
    let flags = cf.key_flags();
    let requested = requested_arch(opts, &mut p.notes);
    let (tcs, toolchain) = find_toolchain(opts, deadline, &mut p.notes);
    let cache = open_cache(opts);
    let mut inc_dirs_for_key = cf.include_dirs.clone();
    inc_dirs_for_key.push(dir.clone());
    let includes = local_includes(&text, &dir, &inc_dirs_for_key);
    let unit = Unit { path, path_s: path.to_string_lossy().into_owned(), text: &text, dir, cf, flags, includes, opts, deadline, cancel };

    let mut entry = match &toolchain {
        Some(tc) => match compile_or_cached(&unit, tc, &tcs, requested, cache.as_ref(), &mut p) {
            Ok(e) => Some(e),
            Err(Cancelled) => {
                p.elapsed = start.elapsed();
                return p;
            }
        },
        None => recorded(&unit, &tcs, requested, cache.as_ref(), &mut p),
    };

    // The clang fallback covers simple kernels only (its shim defines a small part of
    // CUDA): when it produced nothing in automatic mode, recorded PTX is the better
    // answer, and clang's complaints are about the shim, not the user's code.
    if matches!(opts.compiler, CompilerChoice::Auto | CompilerChoice::PreferNvrtc)
        && toolchain.as_ref().is_some_and(|tc| tc.kind == CompilerKind::Clang)
        && entry.as_ref().is_none_or(|e| e.ptx.is_none())
    {
        let arch_s = p.arch.clone().unwrap_or_else(|| requested.sm());
        let mut notes = Vec::new();
        if let Some((e, origin)) = recorded_beside(path, &tcs, opts, &arch_s, deadline, cancel, &mut notes) {
            let n_errors = entry.as_ref().map_or(0, |e| e.diagnostics.iter().filter(|d| d.severity == Severity::Error).count());
            p.notes.push(format!("the clang fallback could not compile this file ({n_errors} error(s)); using recorded PTX instead"));
            p.notes.extend(notes);
            p.arch = Some(e.arch.clone());
            p.origin = origin;
            entry = Some(e);
        }
    }

    if toolchain.is_none()
        && opts.compiler != CompilerChoice::RecordedOnly
        && let Some(nvcc) = crate::toolchain::workspace_venv_nvcc(&unit.dir)
    {
        p.notes.push(format!(
            "a CUDA compiler exists at {} but is not used: warpsight never runs a program found in a workspace (docs/security.md); to use it, pass --nvcc {0} or set WARPSIGHT_NVCC={0}, or install one for your user with `warpsight setup-cuda`",
            nvcc.display()
        ));
    }
    finish(&mut p, entry, toolchain);
    p.elapsed = start.elapsed();
    p
}

impl Prepared {
    /// A result for `path` with nothing found yet.
    fn nothing_yet(path: &Path) -> Prepared {
        Prepared {
            path: path.to_path_buf(),
            ptx: String::new(),
            origin: PtxOrigin::None,
            toolchain: None,
            toolchain_note: String::new(),
            arch: None,
            notes: Vec::new(),
            resources: Vec::new(),
            diagnostics: Vec::new(),
            kernels: Vec::new(),
            kernel_decls: Vec::new(),
            launch_sites: Vec::new(),
            annotations: Vec::new(),
            loop_annotations: Vec::new(),
            launch_bounds: Vec::new(),
            used_args: Vec::new(),
            cancelled: false,
            elapsed: Duration::ZERO,
        }
    }
}

/// The compile flags: compile_commands.json, then the options; then everything that could
/// reach nvcc's shell is checked (what is dropped is said in `notes`).
fn compile_flags(path: &Path, opts: &Options, notes: &mut Vec<String>) -> CompileFlags {
    let mut cf = CompileFlags::default();
    match opts.compile_commands {
        CompileCommands::Read => {
            if let Some(db) = crate::compile_commands::lookup(path) {
                if !db.dropped.is_empty() {
                    notes.push(format!("from {}: ignored flags {} (warpsight sets -ptx and the architecture itself; clang-only flags do not apply to nvcc)", db.database.display(), db.dropped.join(" ")));
                }
                cf.include_dirs = db.include_dirs;
                cf.defines = db.defines;
                cf.undefines = db.undefines;
                cf.pre_includes = db.pre_includes;
                cf.other = db.flags;
            }
        }
        CompileCommands::Untrusted => {
            if let Some(db) = crate::compile_commands::find_database(path) {
                log_untrusted_once(&db);
                notes.push(format!(
                    "{} was not read: a workspace's compile database is untrusted until you enable the `trustCompileCommands` setting; the file is compiled without its flags",
                    db.display()
                ));
            }
        }
        CompileCommands::Ignore => {}
    }
    // Relative `--include` directories are the user's, relative to where they ran the
    // command; the compiler is handed absolute ones (it compiles a copy elsewhere).
    cf.include_dirs.extend(opts.include_dirs.iter().map(|d| absolute(d)));
    cf.defines.extend(opts.defines.iter().cloned());
    cf.other.extend(opts.extra_flags.iter().cloned());
    let refused = cf.drop_unsafe();
    if !refused.is_empty() {
        notes.push(dropped_for_shell_note(&refused));
    }
    cf
}

/// The architecture the options ask for; an unknown one is said in `notes` and replaced
/// by the default.
fn requested_arch(opts: &Options, notes: &mut Vec<String>) -> Arch {
    match opts.arch.as_deref() {
        Some(a) => match Arch::parse(a) {
            Some(arch) => arch,
            None => {
                notes.push(format!("unknown architecture `{a}`; using {DEFAULT_ARCH}"));
                Arch {
                    number: 80,
                    suffix: None,
                }
            }
        },
        None => Arch {
            number: 80,
            suffix: None,
        },
    }
}

/// The toolchains found (probing within the budget) and the one the options choose;
/// a configured nvcc that does not exist, or a requested compiler that was not found,
/// is said in `notes`.
fn find_toolchain(opts: &Options, deadline: Deadline, notes: &mut Vec<String>) -> (crate::toolchain::Toolchains, Option<Toolchain>) {
    let mut env = opts.env.clone().unwrap_or_else(DiscoveryEnv::from_process);
    if opts.nvcc.is_some() {
        env.explicit_nvcc = opts.nvcc.clone();
    }
    // Probing a tool takes from the same budget as compiling with it.
    env.probe_timeout = Some(deadline.remaining());
    let tcs = discover(&env);
    if let Some(explicit) = &opts.nvcc
        && tcs.nvcc.as_ref().is_none_or(|t| t.path != *explicit)
    {
        notes.push(format!(
            "the configured nvcc {} does not exist",
            explicit.display()
        ));
    }
    let toolchain = match opts.compiler {
        CompilerChoice::Auto => tcs
            .nvcc
            .clone()
            .or_else(|| tcs.nvrtc.clone())
            .or_else(|| tcs.clang.clone()),
        CompilerChoice::PreferNvrtc => tcs
            .nvrtc
            .clone()
            .or_else(|| tcs.nvcc.clone())
            .or_else(|| tcs.clang.clone()),
        CompilerChoice::Nvcc => tcs.nvcc.clone(),
        CompilerChoice::Nvrtc => tcs.nvrtc.clone(),
        CompilerChoice::Clang => tcs.clang.clone(),
        CompilerChoice::RecordedOnly => None,
    };
    if toolchain.is_none()
        && !matches!(
            opts.compiler,
            CompilerChoice::Auto | CompilerChoice::PreferNvrtc | CompilerChoice::RecordedOnly
        )
    {
        notes.push(format!("{:?} was requested but not found", opts.compiler));
    }
    (tcs, toolchain)
}

/// With a compiler: the architecture it supports closest to the request, then the cached
/// result or a compile (and ptxas, and the kernel-by-kernel record), stored in the cache.
/// Sets the architecture, the origin and the notes of `p`.
fn compile_or_cached(
    u: &Unit<'_>,
    tc: &Toolchain,
    tcs: &crate::toolchain::Toolchains,
    requested: Arch,
    cache: Option<&Cache>,
    p: &mut Prepared,
) -> Result<CacheEntry, Cancelled> {
    let (opts, deadline, cancel) = (u.opts, u.deadline, u.cancel);
    let supported = match tc.kind {
        CompilerKind::Nvcc => nvcc_supported_archs(&tc.path, deadline.remaining()),
        CompilerKind::Nvrtc => crate::nvrtc::Nvrtc::load(&tc.path)
            .map(|n| n.supported_archs())
            .unwrap_or_default(),
        CompilerKind::Clang => Vec::new(),
    };
    let (arch, note) = choose_arch(
        requested,
        &supported,
        &format!("{} {}", tc.kind.name(), tc.version),
    );
    if let Some(n) = note {
        p.notes.push(n);
    }
    let arch_s = arch.sm();
    p.arch = Some(arch_s.clone());
    // Whether ptxas ran is part of the key: an entry made without it has no resources.
    let compiler_id = format!(
        "{} {}{}",
        tc.kind.name(),
        tc.version,
        if opts.run_ptxas { " +ptxas" } else { "" }
    );
    let key = u.key(&arch_s, &compiler_id);
    if let Some(hit) = cache.and_then(|c| c.get(&key.key())) {
        // Only entries with PTX are served (`Cache::get`).
        p.origin = PtxOrigin::Cache(tc.kind);
        return Ok(hit);
    }
    let incremental_key = job_key(&tc.kind, &u.path_s, &arch_s, &u.flags, &compiler_id, &tc.path);
    let job = Job { tc, path: u.path, text: u.text, dir: &u.dir, flags: &u.cf, arch: &arch_s, deadline, cancel, incremental_key };
    let res = match tc.kind {
        CompilerKind::Nvcc => compile_nvcc(&job),
        CompilerKind::Nvrtc => compile_nvrtc(&job),
        CompilerKind::Clang => compile_clang(&job),
    };
    if res.cancelled {
        p.cancelled = true;
        p.diagnostics = res.diagnostics;
        p.toolchain = Some(tc.clone());
        p.toolchain_note = format!("Compile with {} cancelled by a newer edit.", tc.describe());
        return Err(Cancelled);
    }
    let mut resources = Vec::new();
    let mut diagnostics = res.diagnostics;
    let mut notes = res.notes;
    let mut nvrtc = res.nvrtc;
    // A kernel-by-kernel recompile runs ptxas on the recompiled kernels only.
    let partial = nvrtc.as_mut().and_then(|n| n.partial.take());
    let ptxas_input = partial.as_ref().map(|(_, module, _)| module.as_str()).or(res.ptx.as_deref());
    if let (Some(ptx), true) = (ptxas_input, opts.run_ptxas) {
        match run_ptxas(tcs.ptxas.as_deref(), ptx, &arch_s, deadline, cancel) {
            Ok((r, d)) => {
                resources = r;
                diagnostics.extend(d);
            }
            Err(note) => notes.push(note),
        }
    }
    if let Some((_, _, kept)) = &partial {
        resources.extend(kept.iter().cloned());
    }
    if let (Some(n), Some(ptx), Some(key), false) = (nvrtc, &res.ptx, job_key(&tc.kind, &u.path_s, &arch_s, &u.flags, &compiler_id, &tc.path), cancel.is_cancelled()) {
        match partial {
            Some((plan, module, _)) => plan.commit(&key, ptx, &resources, &diagnostics, &module),
            None => crate::incremental::record(&key, &n.device_src, ptx, &resources, &diagnostics),
        }
    }
    let e = CacheEntry {
        ptx: res.ptx,
        resources,
        diagnostics,
        toolchain: tc.describe(),
        arch: arch_s.clone(),
        notes,
    };
    if res.cacheable
        && let Some(c) = cache
        && let Err(err) = c.put(&key, &e)
    {
        tracing::warn!(
            "cannot write the CUDA cache in {}: {err}",
            c.dir().display()
        );
    }
    p.origin = if e.ptx.is_some() {
        PtxOrigin::Compiled(tc.kind)
    } else {
        PtxOrigin::Failed(tc.kind)
    };
    Ok(e)
}

/// Without a compiler: recorded PTX, from the cache (by the source text) or beside the
/// source. Sets the architecture and the origin of `p`.
fn recorded(
    u: &Unit<'_>,
    tcs: &crate::toolchain::Toolchains,
    requested: Arch,
    cache: Option<&Cache>,
    p: &mut Prepared,
) -> Option<CacheEntry> {
    let arch_s = requested.sm();
    let key = u.key(&arch_s, "");
    if let Some(hit) = cache.and_then(|c| c.get_by_text(&key.text_key())) {
        p.origin = PtxOrigin::RecordedCache;
        p.arch = Some(hit.arch.clone());
        Some(hit)
    } else if let Some((e, origin)) = recorded_beside(u.path, tcs, u.opts, &arch_s, u.deadline, u.cancel, &mut p.notes) {
        p.arch = Some(e.arch.clone());
        p.origin = origin;
        Some(e)
    } else {
        None
    }
}

/// Fills `p` from what was found: the PTX, resources, diagnostics and notes, the
/// toolchain sentence, and the kernels mapped to their source.
fn finish(p: &mut Prepared, entry: Option<CacheEntry>, toolchain: Option<Toolchain>) {
    if let Some(e) = entry {
        p.ptx = e.ptx.unwrap_or_default();
        p.resources = e.resources;
        p.diagnostics.extend(e.diagnostics);
        p.notes.extend(e.notes);
    }
    p.toolchain_note = match &toolchain {
        Some(tc) if matches!(p.origin, PtxOrigin::Failed(_)) => {
            format!("{}{} Compiler: {}.", p.origin.describe(), first_error(&p.diagnostics), tc.describe())
        }
        Some(tc) => format!("{} Compiler: {}.", p.origin.describe(), tc.describe()),
        None => p.origin.describe(),
    };
    p.toolchain = toolchain;
    if !p.ptx.is_empty() {
        p.kernels = map_kernels(&p.ptx, Some(p.path.as_path()), &p.kernel_decls);
    }
}
