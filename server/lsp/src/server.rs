//! The protocol surface: each handler translates its parameters and forwards them to the
//! state actor, then (for requests) awaits the actor's answer.
//!
//! Why forward instead of locking shared state: tower-lsp-server runs handlers
//! concurrently, so two `didChange` handlers that each await a lock can apply their edits
//! out of order (ruff's CONTRIBUTING.md on tower-lsp issue 284). Here every
//! handler sends its message *before its first `.await`*; the service polls new handler
//! futures in arrival order, so the actor receives notifications in the order the client
//! sent them.

use analysis::report::{FileReport, OccupancyReport, UnknownGpu};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};
use tower_lsp_server::jsonrpc::{Error, Result};
use tower_lsp_server::ls_types::*;
use tower_lsp_server::{Client, LanguageServer};

use crate::config::{RawSettings, given, typed};
use crate::document::{LineCol, PositionEncoding};
use crate::state::{self, Msg, Query};

#[derive(Debug)]
pub(crate) struct Backend {
    tx: mpsc::UnboundedSender<Msg>,
    client: Client,
    /// The settings as last sent by the client, for what-if requests.
    settings: std::sync::Mutex<Value>,
    /// Whether the client registers `didChangeWatchedFiles` dynamically.
    watch_files: std::sync::atomic::AtomicBool,
    /// Set when `shutdown` has been answered (the exit code depends on it).
    shutdown: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl Backend {
    pub(crate) fn new(client: Client, shutdown: std::sync::Arc<std::sync::atomic::AtomicBool>) -> Backend {
        let tx = state::spawn(client.clone());
        Backend { tx, client, settings: std::sync::Mutex::new(Value::Null), watch_files: Default::default(), shutdown }
    }

    async fn query<T>(&self, uri: Uri, make: impl FnOnce(oneshot::Sender<T>) -> Query) -> Result<T> {
        self.ask(|reply| Msg::Query { uri, query: make(reply) }).await
    }

    fn send(&self, msg: Msg) {
        // The actor lives as long as the service; a failed send means we are shutting down.
        let _ = self.tx.send(msg);
    }

    async fn ask<T>(&self, make: impl FnOnce(oneshot::Sender<T>) -> Msg) -> Result<T> {
        let (reply, rx) = oneshot::channel();
        self.send(make(reply));
        rx.await.map_err(|_| Error::internal_error())
    }
}

fn line_col(p: Position) -> LineCol {
    LineCol { line: p.line, character: p.character }
}

/// LSP 3.17 `general.positionEncodings`: the client lists what it supports, in order of
/// preference; UTF-16 is mandatory. We take UTF-8 when offered (no conversion cost),
/// else UTF-16.
fn negotiate_encoding(params: &InitializeParams) -> PositionEncoding {
    let offered = params.capabilities.general.as_ref().and_then(|g| g.position_encodings.as_ref());
    match offered {
        Some(list) if list.contains(&PositionEncodingKind::UTF8) => PositionEncoding::Utf8,
        _ => PositionEncoding::Utf16,
    }
}

/// The workspace root as a local path: the first workspace folder, else the (deprecated)
/// `rootUri`, else `rootPath`. `None` for a client without a workspace or a non-file URI.
#[allow(deprecated)]
fn workspace_root(params: &InitializeParams) -> Option<std::path::PathBuf> {
    let uri = params.workspace_folders.as_ref().and_then(|f| f.first()).map(|f| &f.uri).or(params.root_uri.as_ref());
    match uri {
        Some(u) => u.to_file_path().map(|p| p.into_owned()),
        None => params.root_path.as_ref().filter(|p| !p.is_empty()).map(std::path::PathBuf::from),
    }
}

impl LanguageServer for Backend {
    async fn initialize(&self, params: InitializeParams) -> Result<InitializeResult> {
        let encoding = negotiate_encoding(&params);
        if let Some(o) = &params.initialization_options {
            *self.settings.lock().unwrap_or_else(|e| e.into_inner()) = o.clone();
        }
        let ws = params.capabilities.workspace.as_ref();
        let caps = state::ClientCaps {
            inlay_hint_refresh: ws.and_then(|w| w.inlay_hint.as_ref()).and_then(|i| i.refresh_support).unwrap_or(false),
            code_lens_refresh: ws.and_then(|w| w.code_lens.as_ref()).and_then(|c| c.refresh_support).unwrap_or(false),
            work_done_progress: params.capabilities.window.as_ref().and_then(|w| w.work_done_progress).unwrap_or(false),
        };
        let watch = ws.and_then(|w| w.did_change_watched_files.as_ref()).and_then(|d| d.dynamic_registration).unwrap_or(false);
        self.watch_files.store(watch, std::sync::atomic::Ordering::Relaxed);
        self.send(Msg::Initialize {
            root: workspace_root(&params),
            caps,
            encoding,
            options: params.initialization_options.clone().unwrap_or(Value::Null),
        });
        Ok(InitializeResult {
            capabilities: ServerCapabilities {
                position_encoding: Some(match encoding {
                    PositionEncoding::Utf8 => PositionEncodingKind::UTF8,
                    PositionEncoding::Utf16 => PositionEncodingKind::UTF16,
                }),
                text_document_sync: Some(TextDocumentSyncCapability::Options(TextDocumentSyncOptions {
                    open_close: Some(true),
                    change: Some(TextDocumentSyncKind::INCREMENTAL),
                    ..Default::default()
                })),
                hover_provider: Some(HoverProviderCapability::Simple(true)),
                inlay_hint_provider: Some(OneOf::Left(true)),
                code_lens_provider: Some(CodeLensOptions { resolve_provider: Some(false) }),
                code_action_provider: Some(CodeActionProviderCapability::Options(CodeActionOptions {
                    code_action_kinds: Some(vec![CodeActionKind::QUICKFIX]),
                    ..Default::default()
                })),
                execute_command_provider: Some(ExecuteCommandOptions {
                    commands: vec!["warpsight.openReport".into()],
                    ..Default::default()
                }),
                ..Default::default()
            },
            server_info: Some(ServerInfo {
                name: "warpsight".into(),
                version: Some(env!("CARGO_PKG_VERSION").into()),
            }),
            ..Default::default()
        })
    }

    async fn initialized(&self, _: InitializedParams) {
        if !self.watch_files.load(std::sync::atomic::Ordering::Relaxed) {
            return;
        }
        // Watch the files whose change can change an analysis (dynamic registration;
        // clients without it simply refuse, which is fine).
        let watchers = ["**/*.cu", "**/*.cuh", "**/*.ptx", "**/compile_commands.json", "**/.warpsight/gpus/*.toml"]
            .into_iter()
            .map(|g| FileSystemWatcher { glob_pattern: GlobPattern::String(g.into()), kind: None })
            .collect();
        let options = DidChangeWatchedFilesRegistrationOptions { watchers };
        let registration = Registration {
            id: "warpsight-watched-files".into(),
            method: "workspace/didChangeWatchedFiles".into(),
            register_options: serde_json::to_value(options).ok(),
        };
        // Spawned, not awaited: a handler that waits for the client could hold up
        // `shutdown`/`exit` if the client never answers.
        let client = self.client.clone();
        tokio::spawn(async move {
            if let Err(e) = client.register_capability(vec![registration]).await {
                tracing::info!("client did not accept file watching: {e}");
            }
        });
    }

    async fn shutdown(&self) -> Result<()> {
        let res = self.ask(|reply| Msg::Shutdown { reply }).await;
        self.shutdown.store(true, std::sync::atomic::Ordering::SeqCst);
        res
    }

    async fn did_open(&self, params: DidOpenTextDocumentParams) {
        let doc = params.text_document;
        self.send(Msg::Open { uri: doc.uri, text: doc.text, version: doc.version, language_id: doc.language_id });
    }

    async fn did_change(&self, params: DidChangeTextDocumentParams) {
        let changes = params
            .content_changes
            .into_iter()
            .map(|c| state::Change { range: c.range.map(|r| (line_col(r.start), line_col(r.end))), text: c.text })
            .collect();
        self.send(Msg::Change { uri: params.text_document.uri, version: params.text_document.version, changes });
    }

    async fn did_close(&self, params: DidCloseTextDocumentParams) {
        self.send(Msg::Close { uri: params.text_document.uri });
    }

    async fn did_change_configuration(&self, params: DidChangeConfigurationParams) {
        {
            let mut cur = self.settings.lock().unwrap_or_else(|e| e.into_inner());
            merge(&mut cur, &params.settings);
        }
        self.send(Msg::Configuration { settings: params.settings });
    }

    async fn did_change_watched_files(&self, _: DidChangeWatchedFilesParams) {
        self.send(Msg::FilesChanged);
    }

    async fn hover(&self, params: HoverParams) -> Result<Option<Hover>> {
        let p = params.text_document_position_params;
        self.query(p.text_document.uri, |reply| Query::Hover(line_col(p.position), reply)).await
    }

    async fn inlay_hint(&self, params: InlayHintParams) -> Result<Option<Vec<InlayHint>>> {
        let range = (params.range.start.line, params.range.end.line);
        self.query(params.text_document.uri, |reply| Query::InlayHints(range, reply)).await.map(Some)
    }

    async fn code_lens(&self, params: CodeLensParams) -> Result<Option<Vec<CodeLens>>> {
        self.query(params.text_document.uri, Query::CodeLens).await.map(Some)
    }

    async fn code_action(&self, params: CodeActionParams) -> Result<Option<CodeActionResponse>> {
        self.query(params.text_document.uri, |reply| Query::CodeActions(params.range, reply)).await.map(Some)
    }

    async fn execute_command(&self, params: ExecuteCommandParams) -> Result<Option<LSPAny>> {
        match params.command.as_str() {
            "warpsight.openReport" => {
                let arg = params.arguments.first().cloned().unwrap_or(Value::Null);
                self.kernel_report(arg).await.map(Some)
            }
            other => Err(Error::invalid_params(format!("unknown command `{other}`"))),
        }
    }
}

/// Merges `update` into `base` (objects recursively; other values replace).
fn merge(base: &mut Value, update: &Value) {
    match (base, update) {
        (Value::Object(b), Value::Object(u)) => {
            for (k, v) in u {
                merge(b.entry(k.clone()).or_insert(Value::Null), v);
            }
        }
        (b, u) => *b = u.clone(),
    }
}

/// The parameters of `warpsight/kernelReport`, `whatIf` and `compareGpus`
/// (docs/lsp-extensions.md): the keys are the fields; each value is kept as given and
/// read into its type where it is used, so that a wrong one gets its own message.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ReportParams {
    #[serde(default, deserialize_with = "given")]
    uri: Option<Value>,
    #[serde(default, deserialize_with = "given")]
    kernel: Option<Value>,
    #[serde(default, deserialize_with = "given")]
    grid: Option<Value>,
    #[serde(default, deserialize_with = "given")]
    block: Option<Value>,
    #[serde(default, deserialize_with = "given")]
    dynamic_smem: Option<Value>,
    #[serde(default, deserialize_with = "given")]
    gpu: Option<Value>,
    #[serde(default, deserialize_with = "given")]
    gpus: Option<Value>,
    #[serde(default, deserialize_with = "given")]
    args: Option<Value>,
    #[serde(default, deserialize_with = "given")]
    default_trip_count: Option<Value>,
}

impl ReportParams {
    /// The parameters of an object; none of anything else (serde would read an array as
    /// the fields in order).
    fn read(params: &Value) -> ReportParams {
        params.is_object().then(|| ReportParams::deserialize(params).ok()).flatten().unwrap_or_default()
    }

    fn uri(&self) -> Result<Uri> {
        let s = self.uri.as_ref().and_then(Value::as_str).ok_or_else(|| Error::invalid_params("`uri` (a string) is required"))?;
        s.parse::<Uri>().map_err(|_| Error::invalid_params(format!("`uri` is not a URI: {s}")))
    }

    fn kernel(&self) -> Option<String> {
        self.kernel.as_ref().and_then(typed::<String>)
    }
}

/// The custom requests of docs/lsp-extensions.md.
impl Backend {
    /// `warpsight/kernelReport { uri, kernel? }`: the full JSON report (as the CLI's).
    pub(crate) async fn kernel_report(&self, params: Value) -> Result<Value> {
        let params = ReportParams::read(&params);
        let uri = params.uri()?;
        let kernel = params.kernel();
        let res = self.query(uri, |reply| Query::Report(kernel, reply)).await?;
        to_json(&res.ok_or_else(|| Error::invalid_params("the document is not open (or not analysed yet)"))?)
    }

    /// `warpsight/whatIf { uri, kernel?, grid?, block?, dynamicSmem?, gpus?, args? }`: the
    /// report with those settings changed (the document's own settings are untouched).
    pub(crate) async fn what_if(&self, params: Value) -> Result<Value> {
        to_json(&self.what_if_report(ReportParams::read(&params)).await?)
    }

    /// The report of [`Backend::what_if`].
    async fn what_if_report(&self, params: ReportParams) -> Result<FileReport> {
        let uri = params.uri()?;
        let kernel = params.kernel();
        let settings = self.settings.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let doc = RawSettings::read(&settings).unwrap_or_default();
        let mut over = RawSettings::default();
        if params.grid.is_some() || params.block.is_some() || params.dynamic_smem.is_some() {
            // The launch is one setting: the fields not given keep the document's.
            let mut launch = doc.launch.clone().unwrap_or_default();
            for (given, part) in [(&params.grid, &mut launch.grid), (&params.block, &mut launch.block), (&params.dynamic_smem, &mut launch.dynamic_smem)] {
                if given.is_some() {
                    part.clone_from(given);
                }
            }
            over.launch = Some(launch);
        }
        over.gpus = params.gpus;
        over.args = params.args;
        over.default_trip_count = params.default_trip_count;
        if let Some(g) = params.gpu.as_ref().and_then(typed::<String>) {
            over.gpus = Some(Value::from(vec![g]));
        }
        let mut config = crate::config::Config::default();
        // The document's settings (their problems were shown when they were set), then
        // the request's values, which must all be valid.
        let _ = config.apply(&doc);
        let problems = config.apply(&over);
        if !problems.is_empty() {
            return Err(Error::invalid_params(problems.join("; ")));
        }
        let res = self
            .ask(|reply| Msg::WhatIf { uri, settings: Box::new(config.analysis), kernel, reply })
            .await?;
        res.ok_or_else(|| Error::invalid_params("the document is not open"))
    }

    /// `warpsight/compareGpus { uri, kernel?, gpus }`: per GPU, the occupancy, headline
    /// time and bound, power and energy of each kernel.
    pub(crate) async fn compare_gpus(&self, params: Value) -> Result<Value> {
        let params = ReportParams::read(&params);
        let gpus = params.gpus.as_ref().and_then(typed::<Vec<Value>>).filter(|g| !g.is_empty());
        let Some(gpus) = gpus else {
            return Err(Error::invalid_params("`gpus` (a non-empty array of GPU ids) is required"));
        };
        // Refused before anything is cloned or analysed (10,000 ids took 30 s and 624 MB).
        if gpus.len() > crate::config::limits::MAX_GPUS {
            return Err(Error::invalid_params(format!(
                "`gpus`: {} GPUs is more than the limit of {}",
                gpus.len(),
                crate::config::limits::MAX_GPUS
            )));
        }
        let report = self.what_if_report(params).await?;
        let mut rows = Vec::new();
        for k in &report.kernels {
            for (gpu, t) in &k.gpus {
                let headline = t.headline.as_ref();
                rows.push(CompareRow {
                    kernel: k.name.clone(),
                    gpu: gpu.clone(),
                    name: t.name.clone(),
                    occupancy: match &t.occupancy {
                        OccupancyReport::Computed(o) => Some(o.occupancy),
                        OccupancyReport::Failed { .. } => None,
                    },
                    time_us: headline.map(|h| h.time_us),
                    bound: headline.map(|h| h.bound.clone()),
                    model: headline.map(|h| h.model.clone()),
                    watts: t.power.as_ref().map(|p| p.watts),
                    energy_uj: t.energy_uj,
                });
            }
        }
        to_json(&CompareGpus { uri: report.path, unknown_gpus: report.unknown_gpus, rows })
    }
}

/// The `warpsight/compareGpus` result (docs/lsp-extensions.md).
#[derive(Serialize)]
struct CompareGpus {
    /// The document.
    uri: String,
    unknown_gpus: Vec<UnknownGpu>,
    rows: Vec<CompareRow>,
}

/// One kernel on one GPU; `null` where the report has none (no occupancy, no time, no
/// power).
#[derive(Serialize)]
struct CompareRow {
    kernel: String,
    gpu: String,
    name: String,
    occupancy: Option<f64>,
    time_us: Option<f64>,
    bound: Option<String>,
    model: Option<String>,
    watts: Option<f64>,
    energy_uj: Option<f64>,
}

/// A result as the JSON of the response.
fn to_json(value: &impl Serialize) -> Result<Value> {
    serde_json::to_value(value).map_err(|e| {
        tracing::error!("a result does not serialise: {e}");
        Error::internal_error()
    })
}
