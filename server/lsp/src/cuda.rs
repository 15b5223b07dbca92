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
    let mut cx = analysis::Context { used_args: p.used_args.iter().cloned().collect(), ..Default::default() };
    for m in &p.kernels {
        // Parameter names from the kernel's declaration wherever it lives: the file, or an
        // included local header.
        let decl = p.kernel_decls.iter().filter(|d| d.name == m.base_name).max_by_key(|d| (d.file.is_none(), d.is_definition));
        let param_names: Vec<String> = decl.map(|d| d.params.iter().map(|p| p.name.clone()).collect()).unwrap_or_default();
        let sites: Vec<&cuda_frontend::launch::LaunchSite> = p.launch_sites.iter().filter(|s| s.kernel == m.base_name).collect();
        // Of several launches, the one whose explicit template arguments are this
        // instantiation's (`k<256><<<...>>>` for `void k<256>(float*)`), else the first.
        let wanted = template_args_of(&m.demangled);
        let launches = sites.iter().filter(|s| s.origin == SiteOrigin::Launch);
        let call_site = launches
            .clone()
            .find(|s| wanted.as_ref().is_some_and(|w| !s.template_args.is_empty() && same_args(&s.template_args, w)))
            .or_else(|| launches.clone().next())
            .copied();
        let annotation = sites.iter().find(|s| s.origin == SiteOrigin::Annotation).map(|s| s.partial());
        let call_site_note = call_site.filter(|s| !s.unresolved.is_empty()).map(|s| format!("the launch of `{}` at line {} is {}", s.kernel, s.line, s.unresolved_sentence()));
        let call_site = call_site.map(|s| s.partial());
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
        cx.kernels.insert(m.ptx_name.clone(), analysis::KernelContext { demangled, param_names, call_site, annotation, resources, source, call_site_note });
    }
    cx
}

/// The template arguments of a demangled function name: `void k<256, float>(float*)`
/// gives `["256", "float"]`; `None` for a function that is not a template instance.
fn template_args_of(demangled: &str) -> Option<Vec<String>> {
    let paren = demangled.find('(').unwrap_or(demangled.len());
    let head = &demangled[..paren];
    let close = head.rfind('>')?;
    let mut depth = 0i32;
    let mut open = None;
    for (i, c) in head[..=close].char_indices().rev() {
        match c {
            '>' => depth += 1,
            '<' => {
                depth -= 1;
                if depth == 0 {
                    open = Some(i);
                    break;
                }
            }
            _ => {}
        }
    }
    let inner = &head[open? + 1..close];
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    for (i, c) in inner.char_indices() {
        match c {
            '<' | '(' => depth += 1,
            '>' | ')' => depth -= 1,
            ',' if depth == 0 => {
                out.push(inner[start..i].trim().to_string());
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(inner[start..].trim().to_string());
    Some(out)
}

/// Whether a launch's template arguments (folded, as written) name the same
/// instantiation as the demangled ones (`256` and `256`, `float` and `float`; the
/// demangler writes `256u` or `(unsigned char)3` for some types).
fn same_args(site: &[String], demangled: &[String]) -> bool {
    let norm = |s: &str| -> String {
        let s = s.trim();
        let s = s.rsplit(')').next().unwrap_or(s);
        let s = s.trim_end_matches(['u', 'l', 'U', 'L']);
        s.split_whitespace().collect::<Vec<_>>().join(" ")
    };
    site.len() == demangled.len() && site.iter().zip(demangled).all(|(a, b)| norm(a) == norm(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn template_arguments_of_demangled_names() {
        assert_eq!(template_args_of("void red<256, float>(float const*, int)"), Some(vec!["256".to_string(), "float".to_string()]));
        assert_eq!(template_args_of("void k<ops::Add<int> >(int*)"), Some(vec!["ops::Add<int>".to_string()]));
        assert_eq!(template_args_of("saxpy(int, float)"), None);
        assert!(same_args(&["256".to_string()], &["256u".to_string()]));
        assert!(same_args(&["3".to_string()], &["(unsigned char)3".to_string()]));
        assert!(!same_args(&["128".to_string()], &["256".to_string()]));
    }
}
