//! The analysis facade: from PTX text (and, for `.cu` files, what the CUDA front end found)
//! to plain-data results for both front ends, the CLI and the language server.
//!
//! Architecture invariant: no IO and no LSP types here. Positions are byte spans into the
//! analysed PTX text, plus source `(file, line)` pairs where `.loc` gives them.

use ptx::Span;

/// The severity of a finding or syntax diagnostic, before any per-code user override.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    Hint,
    Information,
    Warning,
    Error,
}

/// A problem in the PTX text itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyntaxDiagnostic {
    pub span: Span,
    pub message: String,
    pub severity: Severity,
}

/// One kernel (`.entry`) of the analysed module.
#[derive(Debug, Clone, PartialEq)]
pub struct Kernel {
    pub name: String,
    pub name_span: Span,
    pub span: Span,
}

/// Everything known about one PTX text.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FileAnalysis {
    pub syntax: Vec<SyntaxDiagnostic>,
    pub kernels: Vec<Kernel>,
}

/// Analyses one PTX module.
pub fn analyze_ptx(text: &str) -> FileAnalysis {
    let parse = ptx::parse(text);
    let syntax = parse
        .errors
        .iter()
        .map(|e| SyntaxDiagnostic {
            span: e.span,
            message: e.message.clone(),
            severity: match e.severity {
                ptx::Severity::Error => Severity::Error,
                ptx::Severity::Warning => Severity::Warning,
            },
        })
        .collect();
    let kernels = parse
        .module
        .functions()
        .filter(|f| f.kind == ptx::FunctionKind::Entry)
        .map(|f| Kernel { name: f.name.to_string(), name_span: f.name_span, span: f.span })
        .collect();
    FileAnalysis { syntax, kernels }
}
