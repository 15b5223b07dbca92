//! The state actor: the one owner of documents, settings and analysis results.
//!
//! Every protocol event arrives here as a [`Msg`], in the order the client sent it.
//! Analysis is debounced (a timer message per edit; only the one whose version is still
//! current runs), runs on tokio's blocking pool against a text snapshot, and comes back as
//! [`Msg::Analyzed`] tagged with the version it analysed: a result for an older version is
//! dropped, so nothing stale is published.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio::sync::{mpsc, oneshot};
use tower_lsp_server::Client;
use tower_lsp_server::ls_types::{self as lsp, Uri};

use crate::document::{Document, LineCol, PositionEncoding};
use crate::to_proto;

/// One content change of a `didChange`, already converted from LSP types.
#[derive(Debug)]
pub(crate) struct Change {
    pub(crate) range: Option<(LineCol, LineCol)>,
    pub(crate) text: String,
}

#[derive(Debug)]
pub(crate) enum Msg {
    Initialize { encoding: PositionEncoding, options: Value },
    Configuration { settings: Value },
    Open { uri: Uri, text: String, version: i32, language_id: String },
    Change { uri: Uri, version: i32, changes: Vec<Change> },
    Close { uri: Uri },
    /// The debounce delay of an edit has passed.
    AnalysisDue { uri: Uri, version: i32 },
    /// A finished analysis of `version` of `uri`.
    Analyzed { uri: Uri, version: i32, result: Arc<analysis::FileAnalysis> },
    Hover { uri: Uri, position: LineCol, reply: oneshot::Sender<Option<lsp::Hover>> },
    Shutdown { reply: oneshot::Sender<()> },
}

/// Settings the client can change (initializationOptions and didChangeConfiguration).
#[derive(Debug, Clone)]
pub(crate) struct Settings {
    /// Delay between the last keystroke and the analysis.
    pub(crate) debounce: Duration,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings { debounce: Duration::from_millis(150) }
    }
}

impl Settings {
    /// Reads the settings the JSON holds, keeping the current value of anything absent or
    /// malformed (a bad setting never stops the server).
    fn update(&mut self, json: &Value) {
        let json = json.get("warpsight").unwrap_or(json);
        if let Some(ms) = json.get("debounceMs").and_then(Value::as_u64) {
            self.debounce = Duration::from_millis(ms.min(10_000));
        }
    }
}

struct DocState {
    doc: Document,
    /// The latest analysis and the version it belongs to.
    analysis: Option<(i32, Arc<analysis::FileAnalysis>)>,
}

struct State {
    client: Client,
    tx: mpsc::UnboundedSender<Msg>,
    encoding: PositionEncoding,
    settings: Settings,
    docs: HashMap<Uri, DocState>,
}

/// Starts the actor and returns the sender the protocol handlers use.
pub(crate) fn spawn(client: Client) -> mpsc::UnboundedSender<Msg> {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let mut state = State {
        client,
        tx: tx.clone(),
        encoding: PositionEncoding::Utf16,
        settings: Settings::default(),
        docs: HashMap::new(),
    };
    tokio::spawn(async move {
        while let Some(msg) = rx.recv().await {
            state.handle(msg).await;
        }
    });
    tx
}

impl State {
    async fn handle(&mut self, msg: Msg) {
        match msg {
            Msg::Initialize { encoding, options } => {
                self.encoding = encoding;
                self.settings.update(&options);
            }
            Msg::Configuration { settings } => {
                self.settings.update(&settings);
                let open: Vec<(Uri, i32)> = self.docs.iter().map(|(u, d)| (u.clone(), d.doc.version)).collect();
                for (uri, version) in open {
                    self.schedule(uri, version, Duration::ZERO);
                }
            }
            Msg::Open { uri, text, version, language_id } => {
                let doc = Document::new(&text, version, language_id);
                self.docs.insert(uri.clone(), DocState { doc, analysis: None });
                self.schedule(uri, version, Duration::ZERO);
            }
            Msg::Change { uri, version, changes } => {
                let Some(state) = self.docs.get_mut(&uri) else {
                    tracing::warn!("didChange for a document that is not open: {}", uri.as_str());
                    return;
                };
                for c in changes {
                    state.doc.apply_change(c.range, &c.text, self.encoding);
                }
                state.doc.version = version;
                let debounce = self.settings.debounce;
                self.schedule(uri, version, debounce);
            }
            Msg::Close { uri } => {
                self.docs.remove(&uri);
                // LSP: clear the diagnostics of a closed document.
                self.client.publish_diagnostics(uri, Vec::new(), None).await;
            }
            Msg::AnalysisDue { uri, version } => self.start_analysis(uri, version),
            Msg::Analyzed { uri, version, result } => {
                let Some(state) = self.docs.get_mut(&uri) else { return };
                if state.doc.version != version {
                    return; // Stale: a newer edit has its own analysis coming.
                }
                state.analysis = Some((version, result.clone()));
                let diagnostics = diagnostics(&state.doc, &result, self.encoding);
                self.client.publish_diagnostics(uri, diagnostics, Some(version)).await;
            }
            Msg::Hover { uri, position, reply } => {
                let _ = reply.send(self.hover(&uri, position));
            }
            Msg::Shutdown { reply } => {
                let _ = reply.send(());
            }
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

    fn start_analysis(&self, uri: Uri, version: i32) {
        let Some(state) = self.docs.get(&uri) else { return };
        if state.doc.version != version {
            return; // Debounced away by a newer edit.
        }
        let text = state.doc.text.to_string();
        let tx = self.tx.clone();
        tokio::spawn(async move {
            let result = tokio::task::spawn_blocking(move || analysis::analyze_ptx(&text)).await;
            match result {
                Ok(result) => {
                    let _ = tx.send(Msg::Analyzed { uri, version, result: Arc::new(result) });
                }
                Err(e) => tracing::error!("analysis of {} failed: {e}", uri.as_str()),
            }
        });
    }

    fn current_analysis(&self, uri: &Uri) -> Option<(&Document, Arc<analysis::FileAnalysis>)> {
        let state = self.docs.get(uri)?;
        match &state.analysis {
            Some((v, a)) if *v == state.doc.version => Some((&state.doc, a.clone())),
            // Requests may arrive between an edit and its analysis: answer from the text as
            // it is now rather than from positions that no longer match.
            _ => Some((&state.doc, Arc::new(analysis::analyze_ptx(&state.doc.text.to_string())))),
        }
    }

    fn hover(&self, uri: &Uri, position: LineCol) -> Option<lsp::Hover> {
        let (doc, analysis) = self.current_analysis(uri)?;
        let offset = doc.offset(position, self.encoding) as u32;
        let kernel = analysis.kernels.iter().find(|k| k.name_span.start <= offset && offset <= k.name_span.end)?;
        Some(lsp::Hover {
            contents: lsp::HoverContents::Markup(lsp::MarkupContent {
                kind: lsp::MarkupKind::Markdown,
                value: format!("**kernel** `{}`", kernel.name),
            }),
            range: Some(to_proto::range(doc, kernel.name_span, self.encoding)),
        })
    }
}

fn diagnostics(doc: &Document, analysis: &analysis::FileAnalysis, enc: PositionEncoding) -> Vec<lsp::Diagnostic> {
    analysis
        .syntax
        .iter()
        .map(|d| lsp::Diagnostic {
            range: to_proto::range(doc, d.span, enc),
            severity: Some(to_proto::severity(d.severity)),
            code: Some(lsp::NumberOrString::String("syntax".into())),
            source: Some("warpsight".into()),
            message: d.message.clone(),
            ..Default::default()
        })
        .collect()
}
