//! Conversions from the analysis's plain data to LSP types.

use tower_lsp_server::ls_types as lsp;

use crate::document::{Document, LineCol, PositionEncoding};

pub(crate) fn position(lc: LineCol) -> lsp::Position {
    lsp::Position { line: lc.line, character: lc.character }
}

pub(crate) fn range(doc: &Document, span: ptx::Span, enc: PositionEncoding) -> lsp::Range {
    lsp::Range {
        start: position(doc.position(span.start as usize, enc)),
        end: position(doc.position(span.end as usize, enc)),
    }
}

pub(crate) fn severity(s: analysis::Severity) -> lsp::DiagnosticSeverity {
    match s {
        analysis::Severity::Hint => lsp::DiagnosticSeverity::HINT,
        analysis::Severity::Information => lsp::DiagnosticSeverity::INFORMATION,
        analysis::Severity::Warning => lsp::DiagnosticSeverity::WARNING,
        analysis::Severity::Error => lsp::DiagnosticSeverity::ERROR,
    }
}
