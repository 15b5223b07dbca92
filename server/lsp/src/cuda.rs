//! `.cu`/`.cuh` documents: compile the editor's text to PTX through the CUDA front end
//! (with cancellation when a newer edit arrives), then map results back to source lines.

use std::path::{Path, PathBuf};

use cuda_frontend::compile::{CompileCommands, Options, Prepared};
use cuda_frontend::process::CancelToken;
use tower_lsp_server::ls_types as lsp;

use crate::config::Config;
use crate::document::{Document, LineCol, PositionEncoding};

/// The diagnostic code of compiler messages (docs/diagnostics.md).
pub use analysis::findings::compiler_error::CODE as COMPILER_ERROR;

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
    let opts = Options {
        arch: config.analysis.target_arch(),
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
