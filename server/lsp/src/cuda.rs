//! `.cu`/`.cuh` documents: compile the editor's text to PTX through the CUDA front end
//! (with cancellation when a newer edit arrives), then map results back to source lines.

use std::path::{Path, PathBuf};

use cuda_frontend::compile::{CompileCommands, Options, Prepared};
use cuda_frontend::process::CancelToken;
use tower_lsp_server::ls_types as lsp;

use crate::config::Config;
use crate::document::{Document, LineCol, PositionEncoding};

/// The diagnostic code of compiler messages (docs/diagnostics.md).
pub const COMPILER_ERROR: &str = "compiler-error";

#[derive(Debug)]
pub struct CudaInfo {
    pub prepared: Prepared,
    /// The document's path on disk.
    pub path: PathBuf,
    /// The kernels of the text that was compiled, to tell which of them a later edit left
    /// untouched while its compile runs (`features::inlay_hints`).
    pub spans: Vec<cuda_frontend::KernelSpan>,
}

/// Compiles `text` (the editor's contents of `path`) and returns the front end's result.
pub fn prepare(path: &Path, text: &str, config: &Config, cancel: &CancelToken) -> Prepared {
    let db = gpu_spec::Database::builtin();
    let arch = config.analysis.gpus.first().and_then(|g| db.gpu(g).ok()).map(|g| format!("sm_{}{}", g.cc.major, g.cc.minor));
    let opts = Options {
        arch,
        nvcc: config.nvcc.clone(),
        compiler: config.compiler,
        args: config.analysis.args.iter().map(|(k, v)| (k.clone(), *v)).collect(),
        timeout: config.compile_timeout,
        // The workspace's compile database is read only once the user trusts it.
        compile_commands: if config.trust_compile_commands { CompileCommands::Read } else { CompileCommands::Untrusted },
        ..Default::default()
    };
    cuda_frontend::compile::prepare_text(path, Some(text), &opts, cancel)
}

impl CudaInfo {
    /// `true` when a `.loc` file path names this document.
    pub fn is_this_file(&self, file: &str) -> bool {
        let p = Path::new(file);
        p == self.path || (p.file_name().is_some() && p.file_name() == self.path.file_name() && (p.is_relative() || self.path.ends_with(p)))
    }

    /// The 1-based source line of kernel `ki`'s definition.
    pub fn kernel_line(&self, file: &analysis::FileAnalysis, ki: usize) -> Option<u32> {
        let k = file.kernels.get(ki)?;
        self.prepared.kernels.iter().find(|m| m.ptx_name == k.name).and_then(|m| m.line)
    }

    /// The kernel whose definition is on this 1-based line.
    pub fn kernel_at_line(&self, file: &analysis::FileAnalysis, line: u32) -> Option<usize> {
        (0..file.kernels.len()).find(|ki| self.kernel_line(file, *ki) == Some(line))
    }

    /// Compiler errors and warnings on this document's lines.
    pub fn compiler_diagnostics(&self, doc: &Document, config: &Config, enc: PositionEncoding) -> Vec<lsp::Diagnostic> {
        let mut res = Vec::new();
        for d in &self.prepared.diagnostics {
            if d.in_ptx {
                continue;
            }
            if let Some(f) = &d.file
                && !self.is_this_file(f) {
                    continue;
                }
            let default = match d.severity {
                cuda_frontend::diagnostics::Severity::Error => analysis::Severity::Error,
                cuda_frontend::diagnostics::Severity::Warning => analysis::Severity::Warning,
                cuda_frontend::diagnostics::Severity::Note => analysis::Severity::Information,
            };
            let Some(sev) = config.severity(COMPILER_ERROR, default) else { continue };
            let line = d.line.unwrap_or(1).saturating_sub(1);
            let start = LineCol { line, character: d.column.map_or(0, |c| c.saturating_sub(1)) };
            let range = lsp::Range { start: crate::to_proto::position(start), end: crate::to_proto::position(doc.line_end(line, enc)) };
            res.push(lsp::Diagnostic {
                range,
                severity: Some(crate::to_proto::severity(sev)),
                code: Some(lsp::NumberOrString::String(COMPILER_ERROR.into())),
                source: Some("warpsight".into()),
                message: d.message.clone(),
                ..Default::default()
            });
        }
        res
    }
}

/// The analysis context from what the CUDA front end found.
pub fn analysis_context(p: &cuda_frontend::compile::Prepared) -> analysis::Context {
    use cuda_frontend::launch::SiteOrigin;
    let mut cx = analysis::Context::default();
    for m in &p.kernels {
        let decl = p.kernel_decls.iter().filter(|d| d.name == m.base_name).max_by_key(|d| d.is_definition);
        let param_names: Vec<String> = decl.map(|d| d.params.iter().map(|p| p.name.clone()).collect()).unwrap_or_default();
        let partial = |s: &cuda_frontend::launch::LaunchSite| analysis::PartialLaunch {
            grid: s.grid,
            block: s.block,
            dynamic_smem: s.dynamic_smem,
            args: s.args.iter().filter_map(|(name, v, _)| v.map(|v| (name.clone(), v))).collect::<std::collections::BTreeMap<_, _>>(),
        };
        let mut sites = p.launch_sites.iter().filter(|s| s.kernel == m.base_name);
        let call_site = sites.clone().find(|s| s.origin == SiteOrigin::Launch).map(partial);
        let annotation = sites.find(|s| s.origin == SiteOrigin::Annotation).map(partial);
        let resources = p.resources_of(&m.ptx_name).map(|r| kernel_profile::Resources {
            registers_per_thread: r.registers,
            static_smem_bytes: r.shared_bytes,
            local_bytes_per_thread: r.stack_frame_bytes,
            spill_store_bytes: r.spill_store_bytes,
            spill_load_bytes: r.spill_load_bytes,
            stack_frame_bytes: r.stack_frame_bytes,
            barriers: r.barriers,
            source: kernel_profile::ResourceSource::Ptxas,
        });
        let demangled = (m.demangled != m.ptx_name).then(|| m.demangled.clone());
        // The `.file` path of the main source, so kernel-level findings land on the
        // definition's line like instruction-level ones land on theirs.
        let source = m.line.map(|l| (m.file.clone().unwrap_or_else(|| p.path.display().to_string()), l));
        cx.kernels.insert(m.ptx_name.clone(), analysis::KernelContext { demangled, param_names, call_site, annotation, resources, source });
    }
    cx
}
