//! LSP features computed from one document's analysis: diagnostics, hovers, inlay hints
//! and code lenses. Each function takes the analysis and the document and returns LSP
//! types; none of them does IO or blocks.

use tower_lsp_server::ls_types as lsp;

use crate::config::Config;
use crate::document::{Document, LineCol, PositionEncoding};
use crate::to_proto;

/// What was analysed for one document version.
#[derive(Debug)]
pub struct DocAnalysis {
    pub file: analysis::FileAnalysis,
    /// The PTX the analysis ran on: the document itself for `.ptx`, the compiler's output
    /// for `.cu` (spans point into this text).
    pub ptx: String,
    /// `.cu` only: what the CUDA front end produced.
    pub cuda: Option<crate::cuda::CudaInfo>,
}

impl DocAnalysis {
    pub fn is_cuda(&self) -> bool {
        self.cuda.is_some()
    }
}

/// Where a PTX position lands in the document: itself for `.ptx`; its `.loc` source line
/// for `.cu` when that line is in this document.
fn doc_line(doc_is_ptx: bool, ptx_line: u32, source_file: Option<&str>, source_line: Option<u32>, cuda: Option<&crate::cuda::CudaInfo>) -> Option<u32> {
    if doc_is_ptx {
        return ptx_line.checked_sub(1);
    }
    let (file, line) = (source_file?, source_line?);
    let cuda = cuda?;
    cuda.is_this_file(file).then(|| line.saturating_sub(1))
}

pub fn diagnostics(doc: &Document, a: &DocAnalysis, config: &Config, enc: PositionEncoding) -> Vec<lsp::Diagnostic> {
    let mut res = Vec::new();
    let is_ptx = !a.is_cuda();
    if is_ptx {
        for d in &a.file.syntax {
            if let Some(sev) = config.severity("syntax", d.severity) {
                res.push(lsp::Diagnostic {
                    range: to_proto::range(doc, d.span, enc),
                    severity: Some(to_proto::severity(sev)),
                    code: Some(lsp::NumberOrString::String("syntax".into())),
                    source: Some("warpsight".into()),
                    message: d.message.clone(),
                    ..Default::default()
                });
            }
        }
    }
    if let Some(cuda) = &a.cuda {
        res.extend(cuda.compiler_diagnostics(doc, config, enc));
    }
    for k in &a.file.kernels {
        for f in &k.findings {
            let Some(range) = finding_range(doc, a, k, f, enc) else { continue };
            res.push(lsp::Diagnostic {
                range,
                severity: Some(to_proto::severity(f.severity)),
                code: Some(lsp::NumberOrString::String(f.code.into())),
                code_description: None,
                source: Some("warpsight".into()),
                message: f.message.clone(),
                ..Default::default()
            });
        }
    }
    res
}

/// Where a finding shows in this document: its PTX span in a `.ptx`, its source line in
/// a `.cu` (the line's text without leading blanks), nowhere when it is in another file.
/// A kernel-wide finding of a `.cu` file (on the kernel's definition line) covers only the
/// line's `__global__`: hovering the kernel's name then shows the performance card alone,
/// not the card below every kernel-wide finding's text (which the Problems panel and a hover
/// on `__global__` still show).
fn finding_range(doc: &Document, a: &DocAnalysis, k: &analysis::KernelAnalysis, f: &analysis::findings::Finding, enc: PositionEncoding) -> Option<lsp::Range> {
    if !a.is_cuda() {
        return Some(to_proto::range(doc, f.ptx_span, enc));
    }
    let line = doc_line(false, f.ptx_line, f.source_file.as_deref(), f.source_line, a.cuda.as_ref())?;
    let range = line_range(doc, line, enc);
    if f.ptx_span != k.name_span {
        return Some(range);
    }
    let start = doc.offset(doc.line_start(line), enc);
    let end = doc.offset(doc.line_end(line, enc), enc);
    let text = doc.text.byte_slice(start..end).to_string();
    Some(match text.find("__global__") {
        Some(at) => lsp::Range {
            start: to_proto::position(doc.position(start + at, enc)),
            end: to_proto::position(doc.position(start + at + "__global__".len(), enc)),
        },
        None => range,
    })
}

/// A line's range from its first non-blank character to its end.
fn line_range(doc: &Document, line: u32, enc: PositionEncoding) -> lsp::Range {
    let start = doc.line_start(line);
    let start_off = doc.offset(start, enc);
    let end = doc.line_end(line, enc);
    let end_off = doc.offset(end, enc);
    let text = doc.text.byte_slice(start_off..end_off).to_string();
    let indent = text.len() - text.trim_start().len();
    lsp::Range { start: to_proto::position(doc.position(start_off + indent, enc)), end: to_proto::position(end) }
}

/// Code actions for the findings whose range meets `range`: one quick fix per `Fix`,
/// as a versioned workspace edit (so the client previews, applies and undoes it, and
/// refuses it if the document changed meanwhile).
pub fn code_actions(doc: &Document, uri: &lsp::Uri, a: &DocAnalysis, range: lsp::Range, enc: PositionEncoding) -> Vec<lsp::CodeActionOrCommand> {
    let text = doc.text.to_string();
    let mut res = Vec::new();
    for k in &a.file.kernels {
        for f in &k.findings {
            let Some(frange) = finding_range(doc, a, k, f, enc) else { continue };
            if frange.end.line < range.start.line || frange.start.line > range.end.line {
                continue;
            }
            for fix in &f.fixes {
                let edits = match (&a.cuda, &fix.kind) {
                    (Some(cuda), kind) => {
                        let base = cuda.prepared.kernels.iter().find(|m| m.ptx_name == k.name).map(|m| m.base_name.clone()).unwrap_or_else(|| k.name.clone());
                        let site = cuda
                            .prepared
                            .launch_sites
                            .iter()
                            .find(|s| s.kernel == base && s.origin == cuda_frontend::launch::SiteOrigin::Launch)
                            .map(|s| analysis::fixes::LaunchSiteRef { line: s.line, column: s.column });
                        analysis::fixes::edits(kind, &text, &base, site)
                    }
                    // In PTX only the annotation applies: a comment line before `.entry`.
                    (None, analysis::fixes::FixKind::InsertAnnotation { text: note }) => {
                        let line_start = doc.offset(doc.line_start(k.ptx_line.saturating_sub(1)), enc);
                        vec![analysis::fixes::TextEdit { start: line_start, end: line_start, new_text: format!("{note}\n") }]
                    }
                    // A loop in PTX: the comment goes above its header's first line.
                    (None, analysis::fixes::FixKind::StateTripCount { ptx_line, trips, .. }) => {
                        let line_start = doc.offset(doc.line_start(ptx_line.saturating_sub(1)), enc);
                        let line_end = doc.offset(doc.line_end(ptx_line.saturating_sub(1), enc), enc);
                        let line = doc.text.byte_slice(line_start..line_end).to_string();
                        let indent: String = line.chars().take_while(|c| *c == ' ' || *c == '\t').collect();
                        vec![analysis::fixes::TextEdit { start: line_start, end: line_start, new_text: analysis::fixes::trips_comment_line(&indent, *trips) }]
                    }
                    (None, _) => continue,
                };
                if edits.is_empty() {
                    continue;
                }
                let lsp_edits: Vec<lsp::OneOf<lsp::TextEdit, lsp::AnnotatedTextEdit>> = edits
                    .iter()
                    .map(|e| {
                        lsp::OneOf::Left(lsp::TextEdit {
                            range: lsp::Range { start: to_proto::position(doc.position(e.start, enc)), end: to_proto::position(doc.position(e.end, enc)) },
                            new_text: e.new_text.clone(),
                        })
                    })
                    .collect();
                let edit = lsp::WorkspaceEdit {
                    document_changes: Some(lsp::DocumentChanges::Edits(vec![lsp::TextDocumentEdit {
                        text_document: lsp::OptionalVersionedTextDocumentIdentifier { uri: uri.clone(), version: Some(doc.version) },
                        edits: lsp_edits,
                    }])),
                    ..Default::default()
                };
                res.push(lsp::CodeActionOrCommand::CodeAction(lsp::CodeAction {
                    title: fix.title.clone(),
                    kind: Some(lsp::CodeActionKind::QUICKFIX),
                    diagnostics: Some(vec![lsp::Diagnostic {
                        range: frange,
                        code: Some(lsp::NumberOrString::String(f.code.into())),
                        source: Some("warpsight".into()),
                        message: f.message.clone(),
                        ..Default::default()
                    }]),
                    edit: Some(edit),
                    ..Default::default()
                }));
            }
        }
    }
    res
}

fn kernel_at(a: &DocAnalysis, doc: &Document, pos: LineCol, enc: PositionEncoding) -> Option<usize> {
    if let Some(cuda) = &a.cuda {
        return cuda.kernel_at_line(&a.file, pos.line + 1);
    }
    let offset = doc.offset(pos, enc) as u32;
    a.file.kernels.iter().position(|k| k.name_span.start <= offset && offset <= k.name_span.end)
}

pub fn hover(doc: &Document, a: &DocAnalysis, pos: LineCol, enc: PositionEncoding) -> Option<lsp::Hover> {
    let markdown = |value: String| lsp::HoverContents::Markup(lsp::MarkupContent { kind: lsp::MarkupKind::Markdown, value });
    if let Some(k) = kernel_at(a, doc, pos, enc) {
        let kernel = &a.file.kernels[k];
        let range = if a.is_cuda() { None } else { Some(to_proto::range(doc, kernel.name_span, enc)) };
        return Some(lsp::Hover { contents: markdown(analysis::hover::kernel_card(kernel)), range });
    }
    if a.is_cuda() {
        // A source line with memory accesses: their classes.
        let line = pos.line + 1;
        let cuda = a.cuda.as_ref()?;
        let on_line = |m: &kernel_profile::MemoryAccess| m.source_line == Some(line) && m.source_file.as_deref().is_some_and(|f| cuda.is_this_file(f));
        let card = analysis::hover::source_line_accesses(&a.file, on_line)?;
        return Some(lsp::Hover { contents: markdown(card), range: None });
    }
    let offset = doc.offset(pos, enc) as u32;
    let k = a.file.kernels.iter().find(|k| k.span.start <= offset && offset < k.span.end)?;
    let card = analysis::hover::instruction_card(k, &a.file.module, offset)?;
    Some(lsp::Hover { contents: markdown(card), range: None })
}

fn hint(position: LineCol, label: String, tooltip: Option<String>) -> lsp::InlayHint {
    lsp::InlayHint {
        position: to_proto::position(position),
        label: lsp::InlayHintLabel::String(label),
        kind: None,
        text_edits: None,
        tooltip: tooltip.map(lsp::InlayHintTooltip::String),
        padding_left: Some(true),
        padding_right: None,
        data: None,
    }
}

/// While a `.cu` document's compile is pending, where the last analysis's lines are now:
/// the lines of each kernel whose definition the edits left byte for byte as it was, moved
/// by as many lines as the edits above it added or removed. Lines of changed kernels, and
/// lines outside every kernel, have no place (their hints would be stale).
struct PendingLines {
    /// (old 1-based lines of an unchanged kernel, line shift).
    moves: Vec<(std::ops::Range<u32>, i64)>,
    /// The kernels could not be located: lines stay as they are.
    identity: bool,
}

impl PendingLines {
    fn new(old: &[cuda_frontend::KernelSpan], new: &[cuda_frontend::KernelSpan]) -> PendingLines {
        let unique = |v: &[cuda_frontend::KernelSpan], name: &str| v.iter().filter(|s| s.name == name).count() == 1;
        let moves = old
            .iter()
            .filter(|o| unique(old, &o.name) && unique(new, &o.name))
            .filter_map(|o| {
                let n = new.iter().find(|n| n.name == o.name && n.text_hash == o.text_hash)?;
                Some((o.lines.clone(), i64::from(n.lines.start) - i64::from(o.lines.start)))
            })
            .collect();
        PendingLines { moves, identity: old.is_empty() || new.is_empty() }
    }

    /// The current 0-based line of the analysed text's 0-based `line`.
    fn line(&self, line: u32) -> Option<u32> {
        if self.identity {
            return Some(line);
        }
        let (_, shift) = self.moves.iter().find(|(r, _)| r.contains(&(line + 1)))?;
        u32::try_from(i64::from(line) + shift).ok()
    }
}

/// The suffix of a kernel's hint while its file's compile is pending.
pub const PENDING: &str = " · pending";

/// Inlay hints. `stale`: `.cu` only, the document changed since this analysis and its
/// compile is pending: the hints of kernels the edits did not touch are kept (moved with
/// their kernel, the kernel's own hint ending in [`PENDING`]), the others left out.
pub fn inlay_hints(doc: &Document, a: &DocAnalysis, range: (u32, u32), config: &Config, enc: PositionEncoding, stale: bool) -> Vec<lsp::InlayHint> {
    let mut res = Vec::new();
    let in_range = |line: u32| line >= range.0 && line <= range.1;
    let is_ptx = !a.is_cuda();
    let pending = match (&a.cuda, stale) {
        (Some(c), true) => Some(PendingLines::new(&c.spans, &cuda_frontend::kernel_spans(&doc.text.to_string()))),
        _ => None,
    };
    let now = |line: u32| match &pending {
        Some(p) => p.line(line),
        None => Some(line),
    };
    for (ki, k) in a.file.kernels.iter().enumerate() {
        let Some(t) = k.targets.first() else { continue };
        // After the kernel signature.
        let sig_line = if is_ptx { Some(k.ptx_line.saturating_sub(1)) } else { a.cuda.as_ref().and_then(|c| c.kernel_line(&a.file, ki)).map(|l| l - 1) };
        if let Some(line) = sig_line.and_then(now).filter(|l| in_range(*l)) {
            let mut label = analysis::hover::kernel_label(t, &config.inlay);
            if !label.is_empty() {
                if pending.is_some() {
                    label.push_str(PENDING);
                }
                res.push(hint(doc.line_end(line, enc), label, Some(analysis::hover::summary(t))));
            }
        }
        if config.inlay.loops {
            // A loop known to run zero times (the remainder of an unrolled loop whose trip
            // count divides evenly) says nothing worth a hint.
            for l in t.profile.loops.iter().filter(|l| l.trip_count != Some(0.0)) {
                let Some(line) = doc_line(is_ptx, l.ptx_line, l.source_file.as_deref(), l.source_line, a.cuda.as_ref()).and_then(now) else { continue };
                if !in_range(line) {
                    continue;
                }
                res.push(hint(doc.line_end(line, enc), analysis::hover::loop_label(t, l, a.file.module.function(&k.name)), l.trip_count_expr.clone()));
            }
        }
        if config.inlay.memory {
            let mut seen = std::collections::HashSet::new();
            for m in &t.profile.memory_accesses {
                let Some(line) = doc_line(is_ptx, m.ptx_line, m.source_file.as_deref(), m.source_line, a.cuda.as_ref()).and_then(now) else { continue };
                if !in_range(line) {
                    continue;
                }
                let Some(label) = analysis::hover::memory_label(m) else { continue };
                if seen.insert((line, label.clone())) {
                    res.push(hint(doc.line_end(line, enc), label, None));
                }
            }
        }
    }
    res.sort_by_key(|h| (h.position.line, h.position.character));
    res
}

/// The argument of the code lens's `warpsight.openReport` command
/// (docs/lsp-extensions.md): the document and the kernel, as `warpsight/kernelReport`
/// takes them.
#[derive(serde::Serialize)]
struct OpenReportArgs<'a> {
    uri: &'a str,
    kernel: &'a str,
}

pub fn code_lenses(doc: &Document, uri: &lsp::Uri, a: &DocAnalysis, enc: PositionEncoding) -> Vec<lsp::CodeLens> {
    let mut res = Vec::new();
    for (ki, k) in a.file.kernels.iter().enumerate() {
        let Some(t) = k.targets.first() else { continue };
        let line = if a.is_cuda() { a.cuda.as_ref().and_then(|c| c.kernel_line(&a.file, ki)).map(|l| l - 1) } else { Some(k.ptx_line.saturating_sub(1)) };
        let Some(line) = line else { continue };
        let start = doc.line_start(line);
        let range = lsp::Range { start: to_proto::position(start), end: to_proto::position(doc.line_end(line, enc)) };
        res.push(lsp::CodeLens {
            range,
            command: Some(lsp::Command {
                title: analysis::hover::summary(t),
                command: "warpsight.openReport".into(),
                arguments: serde_json::to_value(OpenReportArgs { uri: uri.as_str(), kernel: &k.name }).ok().map(|v| vec![v]),
            }),
            data: None,
        });
    }
    res
}
