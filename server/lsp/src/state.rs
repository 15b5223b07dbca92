//! The state actor: the one owner of documents, settings and analysis results.
//!
//! Every protocol event arrives here as a [`Msg`], in the order the client sent it.
//! Analysis is debounced (a timer message per edit; only the one whose version is still
//! current runs), runs on tokio's blocking pool against a text snapshot, and comes back as
//! [`Msg::Analyzed`] tagged with the version it analysed: a result for an older version is
//! dropped, so nothing stale is published. A newer edit of a `.cu` file cancels the
//! compile in flight.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use analysis::report::{FileReport, SourceKind};
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};
use tower_lsp_server::Client;
use tower_lsp_server::ls_types::{self as lsp, Uri};

use crate::config::Config;
use crate::document::{Document, LineCol, PositionEncoding};
use crate::features::{self, DocAnalysis};

/// One content change of a `didChange`, already converted from LSP types.
#[derive(Debug)]
pub(crate) struct Change {
    pub(crate) range: Option<(LineCol, LineCol)>,
    pub(crate) text: String,
}

/// A request answered from the state.
pub(crate) enum Query {
    Hover(LineCol, oneshot::Sender<Option<lsp::Hover>>),
    InlayHints((u32, u32), oneshot::Sender<Vec<lsp::InlayHint>>),
    CodeLens(oneshot::Sender<Vec<lsp::CodeLens>>),
    CodeActions(lsp::Range, oneshot::Sender<Vec<lsp::CodeActionOrCommand>>),
    /// `warpsight/kernelReport`: the report of one kernel (or all).
    Report(Option<String>, oneshot::Sender<Option<FileReport>>),
}

impl Query {
    /// Answers with nothing (the document is gone or its analysis failed).
    fn answer_empty(self) {
        match self {
            Query::Hover(_, r) => {
                let _ = r.send(None);
            }
            Query::InlayHints(_, r) => {
                let _ = r.send(Vec::new());
            }
            Query::CodeLens(r) => {
                let _ = r.send(Vec::new());
            }
            Query::CodeActions(_, r) => {
                let _ = r.send(Vec::new());
            }
            Query::Report(_, r) => {
                let _ = r.send(None);
            }
        }
    }
}

impl std::fmt::Debug for Query {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Query::Hover(..) => "Hover",
            Query::InlayHints(..) => "InlayHints",
            Query::CodeLens(..) => "CodeLens",
            Query::CodeActions(..) => "CodeActions",
            Query::Report(..) => "Report",
        })
    }
}

/// What the client said it supports (LSP: a server must not send requests the client did
/// not declare).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct ClientCaps {
    pub(crate) inlay_hint_refresh: bool,
    pub(crate) code_lens_refresh: bool,
    pub(crate) work_done_progress: bool,
}

#[derive(Debug)]
pub(crate) enum Msg {
    /// `root`: the first workspace folder (or the root URI) as a path, whose
    /// `.warpsight/gpus/*.toml` are loaded.
    Initialize { encoding: PositionEncoding, options: Value, caps: ClientCaps, root: Option<PathBuf> },
    Configuration { settings: Value },
    Open { uri: Uri, text: String, version: i32, language_id: String },
    Change { uri: Uri, version: i32, changes: Vec<Change> },
    Close { uri: Uri },
    /// A watched file changed on disk (`.cu .cuh .ptx compile_commands.json`).
    FilesChanged,
    /// The debounce delay of an edit has passed.
    AnalysisDue { uri: Uri, version: i32 },
    /// A finished analysis of `version` of `uri`, made under settings `generation`.
    Analyzed { uri: Uri, version: i32, generation: u64, result: Arc<DocAnalysis> },
    /// The analysis of `version` of `uri` panicked.
    AnalysisFailed { uri: Uri, version: i32 },
    Query { uri: Uri, query: Query },
    /// `warpsight/whatIf` and `warpsight/compareGpus`: analyse the current text with
    /// changed settings, without touching the document's state.
    WhatIf { uri: Uri, settings: Box<analysis::Settings>, kernel: Option<String>, reply: oneshot::Sender<Option<FileReport>> },
    Shutdown { reply: oneshot::Sender<()> },
    /// [`TRIM_DELAY`] has passed since large documents were let go: return the freed
    /// memory to the system.
    Trim,
}

/// Text of closed documents (and of analyses dropped because their document was closed)
/// after which the heap is trimmed. The analysis of a document takes tens of times its
/// text, so 1 MB of text is tens of MB of freed memory.
const TRIM_AFTER_BYTES: usize = 1 << 20;

/// How long after the first such close the trim runs: the closes of an editor closing
/// many documents (and the analyses still finishing for them) are collected into one trim
/// of a heap that no longer holds any of them.
const TRIM_DELAY: Duration = Duration::from_millis(200);

struct DocState {
    doc: Document,
    /// The latest analysis and the version it belongs to.
    analysis: Option<(i32, Arc<DocAnalysis>)>,
    /// Per-kernel results reused across versions.
    memo: Arc<Mutex<analysis::Memo>>,
    /// Cancels the `.cu` compile in flight.
    cancel: cuda_frontend::process::CancelToken,
    /// The version whose analysis is running, so a query and the debounce timer never
    /// start the same analysis twice.
    in_flight: Option<i32>,
    /// Queries that arrived after an edit of a `.ptx` document and before its analysis:
    /// answered when the analysis of the current version lands, so they never see
    /// positions from an older text and never block the actor.
    pending: Vec<Query>,
}

struct State {
    client: Client,
    tx: mpsc::UnboundedSender<Msg>,
    encoding: PositionEncoding,
    config: Config,
    docs: HashMap<Uri, DocState>,
    /// `window/showMessage` about a missing compiler is sent once per session.
    told_no_compiler: bool,
    /// The unknown GPU ids of the `gpus` setting already shown (once per id).
    told_unknown_gpus: std::collections::HashSet<String>,
    /// The workspace root, whose `.warpsight/gpus/` holds GPU files.
    root: Option<PathBuf>,
    caps: ClientCaps,
    progress_token: u32,
    /// Bumped whenever the settings or the files on disk change; an analysis started
    /// before is out of date even for an unchanged text.
    generation: u64,
    /// Text of the documents let go since the last trim ([`TRIM_AFTER_BYTES`]).
    freed_since_trim: usize,
    /// A [`Msg::Trim`] is on its way.
    trim_scheduled: bool,
}

/// Starts the actor and returns the sender the protocol handlers use.
pub(crate) fn spawn(client: Client) -> mpsc::UnboundedSender<Msg> {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let mut state = State {
        client,
        tx: tx.clone(),
        encoding: PositionEncoding::Utf16,
        config: Config::default(),
        docs: HashMap::new(),
        told_no_compiler: false,
        told_unknown_gpus: Default::default(),
        root: None,
        caps: ClientCaps::default(),
        progress_token: 0,
        generation: 0,
        freed_since_trim: 0,
        trim_scheduled: false,
    };
    tokio::spawn(async move {
        while let Some(msg) = rx.recv().await {
            state.handle(msg).await;
        }
    });
    tx
}

fn is_cuda(uri: &Uri, language_id: &str) -> bool {
    matches!(language_id, "cuda-cpp" | "cuda" | "cuda-c" | "cpp-cuda")
        || uri.as_str().ends_with(".cu")
        || uri.as_str().ends_with(".cuh")
}

impl State {
    async fn handle(&mut self, msg: Msg) {
        match msg {
            Msg::Initialize { encoding, options, caps, root } => {
                self.encoding = encoding;
                self.caps = caps;
                let problems = self.config.update(&options);
                self.tell_settings_problems(problems).await;
                self.root = root;
                self.load_workspace_gpus().await;
                self.tell_unknown_gpus().await;
            }
            Msg::Configuration { settings } => {
                let problems = self.config.update(&settings);
                self.tell_settings_problems(problems).await;
                self.tell_unknown_gpus().await;
                self.reanalyze_all();
            }
            Msg::FilesChanged => {
                self.load_workspace_gpus().await;
                self.reanalyze_all();
            }
            Msg::Open { uri, text, version, language_id } => {
                let doc = Document::new(&text, version, language_id);
                let state = DocState { doc, analysis: None, memo: Arc::default(), cancel: Default::default(), in_flight: None, pending: Vec::new() };
                self.docs.insert(uri.clone(), state);
                self.schedule(uri, version, Duration::ZERO);
            }
            Msg::Change { uri, version, changes } => {
                let Some(state) = self.docs.get_mut(&uri) else {
                    tracing::warn!("didChange for a document that is not open: {}", uri.as_str());
                    return;
                };
                // LSP 3.17 VersionedTextDocumentIdentifier: "the version number of a
                // document will increase after each change". A change that does not
                // increase it is out of order or replayed; applying it would corrupt the
                // text every later incremental edit is applied to.
                if version <= state.doc.version {
                    tracing::warn!(
                        "didChange for {} with version {version}, not greater than the document's version {}: rejected, not applied",
                        uri.as_str(),
                        state.doc.version
                    );
                    return;
                }
                for c in changes {
                    state.doc.apply_change(c.range, &c.text, self.encoding);
                }
                state.doc.version = version;
                // A newer edit makes the compile in flight moot.
                state.cancel.cancel();
                let debounce = self.config.debounce;
                self.schedule(uri, version, debounce);
            }
            Msg::Close { uri } => {
                if let Some(mut s) = self.docs.remove(&uri) {
                    s.cancel.cancel();
                    for q in std::mem::take(&mut s.pending) {
                        q.answer_empty();
                    }
                    let bytes = s.doc.text.len_bytes();
                    // Everything of the document (text, analysis, memo) is freed here,
                    // before any trim: trimming while the memo was still alive left
                    // most of a large document's memory in the heap.
                    drop(s);
                    self.freed(bytes);
                }
                // LSP: clear the diagnostics of a closed document.
                self.client.publish_diagnostics(uri, Vec::new(), None).await;
            }
            Msg::AnalysisDue { uri, version } => self.start_analysis(uri, version).await,
            Msg::Analyzed { uri, version, generation, result } => {
                if !self.docs.contains_key(&uri) {
                    // Its document was closed while it ran: its memory goes too.
                    let bytes = result.ptx.len();
                    drop(result);
                    self.freed(bytes);
                } else if generation == self.generation {
                    self.finish_analysis(uri, version, result).await;
                } else if let Some(state) = self.docs.get_mut(&uri) {
                    // Made under old settings: a fresh analysis is scheduled already.
                    if state.in_flight == Some(version) {
                        state.in_flight = None;
                    }
                }
            }
            Msg::AnalysisFailed { uri, version } => {
                if let Some(state) = self.docs.get_mut(&uri)
                    && state.in_flight == Some(version) {
                        state.in_flight = None;
                    }
                if let Some(state) = self.docs.get_mut(&uri).filter(|s| s.doc.version == version) {
                    for q in std::mem::take(&mut state.pending) {
                        q.answer_empty();
                    }
                }
            }
            Msg::Query { uri, query } => self.query(uri, query),
            Msg::WhatIf { uri, settings, kernel, reply } => self.what_if(&uri, *settings, kernel, reply),
            Msg::Shutdown { reply } => {
                for s in self.docs.values() {
                    s.cancel.cancel();
                }
                let _ = reply.send(());
            }
            Msg::Trim => {
                self.trim_scheduled = false;
                self.freed_since_trim = 0;
                // Off the actor: trimming a multi-GB heap takes a while.
                tokio::task::spawn_blocking(crate::trim_memory);
            }
        }
    }

    /// A document of `bytes` of text, and its analysis, were let go. Before, only closing
    /// one document over 8 MB trimmed the heap, so closing twenty of 5 MB never did, and
    /// the freed gigabytes stayed resident.
    fn freed(&mut self, bytes: usize) {
        self.freed_since_trim = self.freed_since_trim.saturating_add(bytes);
        if self.freed_since_trim >= TRIM_AFTER_BYTES && !self.trim_scheduled {
            self.trim_scheduled = true;
            let tx = self.tx.clone();
            tokio::spawn(async move {
                tokio::time::sleep(TRIM_DELAY).await;
                let _ = tx.send(Msg::Trim);
            });
        }
    }

    /// Shows the user the settings that were refused (`window/showMessage`, which LSP
    /// allows even while `initialize` is being answered); each was logged already.
    async fn tell_settings_problems(&self, problems: Vec<String>) {
        if problems.is_empty() {
            return;
        }
        let message = format!("warpsight: settings refused, the previous values are kept (docs/lsp-extensions.md § Configuration): {}", problems.join("; "));
        self.client.show_message(lsp::MessageType::WARNING, message).await;
    }

    /// (Re)loads the workspace's `.warpsight/gpus/*.toml` with the `gpuFiles` setting; a
    /// refused file is shown to the user and the GPUs loaded before stay in force.
    async fn load_workspace_gpus(&mut self) {
        let Some(root) = self.root.clone() else { return };
        if let Some(why) = self.config.set_workspace(&root) {
            tracing::warn!("{why}");
            let message = format!("warpsight: workspace GPU files refused, the previous GPUs are kept (docs/gpus.md § Your own GPUs): {why}");
            self.client.show_message(lsp::MessageType::WARNING, message).await;
        }
    }

    /// A GPU the `gpus` setting names that neither the database nor the user's GPU files
    /// have is a configuration warning, shown once per id: the analysis goes on without it
    /// (the report's `unknown_gpus` lists it too).
    async fn tell_unknown_gpus(&mut self) {
        let mut messages = Vec::new();
        for id in &self.config.analysis.gpus {
            if let Err(e) = self.config.analysis.resolve_gpu(id)
                && self.told_unknown_gpus.insert(id.clone())
            {
                messages.push(format!("warpsight: setting `gpus`: {e}; it is left out of the analysis (`warpsight gpus` lists the ids, docs/gpus.md)"));
            }
        }
        for m in messages {
            tracing::warn!("{m}");
            self.client.show_message(lsp::MessageType::WARNING, m).await;
        }
    }

    /// Settings or files on disk changed: every document's analysis is out of date even
    /// though its text is not.
    fn reanalyze_all(&mut self) {
        self.generation += 1;
        for d in self.docs.values_mut() {
            d.analysis = d.analysis.take().map(|(_, a)| (i32::MIN, a));
            d.in_flight = None;
        }
        for (uri, d) in &self.docs {
            self.schedule(uri.clone(), d.doc.version, Duration::ZERO);
        }
    }

    /// Asks for an analysis of `version` after `delay`; a later edit makes it moot.
    fn schedule(&self, uri: Uri, version: i32, delay: Duration) {
        let tx = self.tx.clone();
        tokio::spawn(async move {
            if !delay.is_zero() {
                tokio::time::sleep(delay).await;
            }
            let _ = tx.send(Msg::AnalysisDue { uri, version });
        });
    }

    async fn start_analysis(&mut self, uri: Uri, version: i32) {
        let Some(state) = self.docs.get_mut(&uri) else { return };
        if state.doc.version != version {
            return; // Debounced away by a newer edit.
        }
        let done = state.analysis.as_ref().is_some_and(|(v, _)| *v == version);
        if done || state.in_flight == Some(version) {
            return; // Already analysed, or being analysed (a query asked first).
        }
        state.in_flight = Some(version);
        let text = state.doc.text.to_string();
        let cuda = is_cuda(&uri, &state.doc.language_id);
        let memo = state.memo.clone();
        state.cancel = cuda_frontend::process::CancelToken::new();
        let cancel = state.cancel.clone();
        let config = self.config.clone();
        let generation = self.generation;
        let tx = self.tx.clone();
        let path = uri.to_file_path().map(|p| p.into_owned()).unwrap_or_else(|| PathBuf::from(uri.path().as_str()));
        let progress = if cuda && self.caps.work_done_progress { Some(self.begin_progress(&path).await) } else { None };
        let client = self.client.clone();
        tokio::spawn(async move {
            let job = move || {
                if cuda {
                    let prepared = crate::cuda::prepare(&path, &text, &config, &cancel);
                    let spans = cuda_frontend::kernel_spans(&text);
                    let cx = cuda_frontend::context::analysis_context(&prepared);
                    let file = {
                        let mut memo = memo.lock().unwrap_or_else(|e| e.into_inner());
                        analysis::analyze_memo(&prepared.ptx, &config.analysis, &cx, Some(&mut memo))
                    };
                    let ptx = prepared.ptx.clone();
                    DocAnalysis { file, ptx, cuda: Some(crate::cuda::CudaInfo { prepared, path, spans }) }
                } else {
                    let mut memo = memo.lock().unwrap_or_else(|e| e.into_inner());
                    let file = analysis::analyze_memo(&text, &config.analysis, &analysis::Context::default(), Some(&mut memo));
                    DocAnalysis { file, ptx: text, cuda: None }
                }
            };
            let result = tokio::task::spawn_blocking(job).await;
            if let Some(token) = progress {
                end_progress(&client, token).await;
            }
            match result {
                Ok(result) => {
                    let _ = tx.send(Msg::Analyzed { uri, version, generation, result: Arc::new(result) });
                }
                // A panic in the analysis is a bug; the server stays up and logs it, and
                // queries waiting for this version get empty answers.
                Err(e) => {
                    tracing::error!("analysis of {} failed: {e}", uri.as_str());
                    let _ = tx.send(Msg::AnalysisFailed { uri, version });
                }
            }
        });
    }

    async fn begin_progress(&mut self, path: &std::path::Path) -> lsp::NumberOrString {
        self.progress_token += 1;
        let token = lsp::NumberOrString::String(format!("warpsight/compile/{}", self.progress_token));
        // `$/progress` needs a token the client created: ask for one (clients that do not
        // support work-done progress answer with an error, which we ignore).
        let client = self.client.clone();
        let title = format!("Compiling {}", path.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default());
        let t = token.clone();
        tokio::spawn(async move {
            let created = client.send_request::<lsp::request::WorkDoneProgressCreate>(lsp::WorkDoneProgressCreateParams { token: t.clone() });
            if created.await.is_ok() {
                client
                    .send_notification::<lsp::notification::Progress>(lsp::ProgressParams {
                        token: t,
                        value: lsp::ProgressParamsValue::WorkDone(lsp::WorkDoneProgress::Begin(lsp::WorkDoneProgressBegin {
                            title,
                            cancellable: Some(false),
                            message: None,
                            percentage: None,
                        })),
                    })
                    .await;
            }
        });
        token
    }

    async fn finish_analysis(&mut self, uri: Uri, version: i32, result: Arc<DocAnalysis>) {
        let Some(state) = self.docs.get_mut(&uri) else { return };
        if state.in_flight == Some(version) {
            state.in_flight = None;
        }
        if state.doc.version != version {
            return; // Stale: a newer edit has its own analysis coming.
        }
        if result.cuda.as_ref().is_some_and(|c| c.prepared.cancelled) {
            return; // A newer compile replaces it.
        }
        state.analysis = Some((version, result.clone()));
        let pending = std::mem::take(&mut state.pending);
        let diagnostics = features::diagnostics(&state.doc, &result, &self.config, self.encoding);
        for q in pending {
            self.answer(&uri, q);
        }
        self.client.publish_diagnostics(uri, diagnostics, Some(version)).await;
        if let Some(c) = &result.cuda
            && c.prepared.toolchain.is_none() && !self.told_no_compiler {
                self.told_no_compiler = true;
                self.client.show_message(lsp::MessageType::WARNING, format!("warpsight: {}", c.prepared.toolchain_note)).await;
            }
        // Hints and lenses depend on the analysis: ask the client to refresh them, where
        // it supports that.
        let (client, caps) = (self.client.clone(), self.caps);
        tokio::spawn(async move {
            if caps.inlay_hint_refresh {
                let _ = client.inlay_hint_refresh().await;
            }
            if caps.code_lens_refresh {
                let _ = client.code_lens_refresh().await;
            }
        });
    }

    /// Answers now when the analysis matches the text; otherwise (a `.ptx` document edited
    /// since its last analysis) queues the query and starts that analysis at once.
    fn query(&mut self, uri: Uri, query: Query) {
        let Some(state) = self.docs.get_mut(&uri) else {
            self.answer(&uri, query);
            return;
        };
        let fresh = state.analysis.as_ref().is_some_and(|(v, a)| *v == state.doc.version || a.is_cuda());
        if fresh || is_cuda(&uri, &state.doc.language_id) {
            self.answer(&uri, query);
            return;
        }
        let first = state.pending.is_empty();
        state.pending.push(query);
        if first {
            let version = state.doc.version;
            self.schedule(uri, version, Duration::ZERO);
        }
    }

    /// The document and its analysis (for `.cu`, the last one, which may be older than
    /// the text: a compile takes long, and line positions mostly survive an edit).
    fn current(&self, uri: &Uri) -> Option<(&Document, Arc<DocAnalysis>)> {
        let state = self.docs.get(uri)?;
        let (_, a) = state.analysis.as_ref()?;
        Some((&state.doc, a.clone()))
    }

    fn answer(&self, uri: &Uri, query: Query) {
        let enc = self.encoding;
        let current = self.current(uri);
        match query {
            Query::Hover(pos, reply) => {
                let _ = reply.send(current.and_then(|(d, a)| features::hover(d, &a, pos, enc)));
            }
            Query::InlayHints(range, reply) => {
                // A `.cu` analysis older than the text: its compile is pending (debounce or
                // compiler running). The hints of the kernels the edit left alone stay, marked.
                let stale = self.docs.get(uri).is_some_and(|s| s.analysis.as_ref().is_some_and(|(v, a)| *v != s.doc.version && a.is_cuda()));
                let _ = reply.send(current.map(|(d, a)| features::inlay_hints(d, &a, range, &self.config, enc, stale)).unwrap_or_default());
            }
            Query::CodeLens(reply) => {
                let _ = reply.send(current.map(|(d, a)| features::code_lenses(d, uri, &a, enc)).unwrap_or_default());
            }
            Query::CodeActions(range, reply) => {
                let _ = reply.send(current.map(|(d, a)| features::code_actions(d, uri, &a, range, enc)).unwrap_or_default());
            }
            Query::Report(kernel, reply) => {
                let _ = reply.send(current.map(|(_, a)| report(uri, &a, kernel.as_deref())));
            }
        }
    }

    fn what_if(&self, uri: &Uri, settings: analysis::Settings, kernel: Option<String>, reply: oneshot::Sender<Option<FileReport>>) {
        let Some(state) = self.docs.get(uri) else {
            let _ = reply.send(None);
            return;
        };
        // `.cu`: reuse the PTX and context of the last compile (what-if changes the launch
        // and the GPU, not the code).
        let (ptx, cx, cuda) = match &state.analysis {
            Some((_, a)) if a.is_cuda() => {
                let c = a.cuda.as_ref().map(|c| cuda_frontend::context::analysis_context(&c.prepared)).unwrap_or_default();
                (a.ptx.clone(), c, true)
            }
            _ => (state.doc.text.to_string(), analysis::Context::default(), false),
        };
        let uri = uri.clone();
        tokio::task::spawn_blocking(move || {
            let file = analysis::analyze(&ptx, &settings, &cx);
            let a = DocAnalysis { file, ptx, cuda: None };
            let mut r = report(&uri, &a, kernel.as_deref());
            r.source = Some(if cuda { SourceKind::Cu } else { SourceKind::Ptx });
            let _ = reply.send(Some(r));
        });
    }
}

async fn end_progress(client: &Client, token: lsp::NumberOrString) {
    client
        .send_notification::<lsp::notification::Progress>(lsp::ProgressParams {
            token,
            value: lsp::ProgressParamsValue::WorkDone(lsp::WorkDoneProgress::End(lsp::WorkDoneProgressEnd { message: None })),
        })
        .await;
}

/// The `warpsight/kernelReport` result: the CLI's report of this document, restricted to
/// one kernel when asked (by PTX name, demangled name or base name).
fn report(uri: &Uri, a: &DocAnalysis, kernel: Option<&str>) -> FileReport {
    let kind = if a.is_cuda() { SourceKind::Cu } else { SourceKind::Ptx };
    let kernels = a.file.kernels.iter().filter(|k| kernel.is_none_or(|want| ptx::demangle::kernel_matches(&k.name, k.demangled.as_deref(), want)));
    let mut r = FileReport::of_kernels(uri.as_str(), kind, &a.ptx, &a.file, kernels);
    if let Some(c) = &a.cuda {
        r.toolchain = Some(c.prepared.toolchain_note.clone());
        r.notes = Some(c.prepared.notes.clone());
    }
    r.into_owned()
}
