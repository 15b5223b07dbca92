//! The protocol surface: each handler translates its parameters and forwards them to the
//! state actor, then (for requests) awaits the actor's answer.
//!
//! Why forward instead of locking shared state: tower-lsp-server runs handlers
//! concurrently, so two `didChange` handlers that each await a lock can apply their edits
//! out of order (house-style §3, ruff's CONTRIBUTING.md on tower-lsp#284). Here every
//! handler sends its message *before its first `.await`*; the service polls new handler
//! futures in arrival order, so the actor receives notifications in the order the client
//! sent them.

use serde_json::Value;
use tokio::sync::{mpsc, oneshot};
use tower_lsp_server::jsonrpc::{Error, Result};
use tower_lsp_server::ls_types::*;
use tower_lsp_server::{Client, LanguageServer};

use crate::document::{LineCol, PositionEncoding};
use crate::state::{self, Msg};

#[derive(Debug)]
pub(crate) struct Backend {
    tx: mpsc::UnboundedSender<Msg>,
}

impl Backend {
    pub(crate) fn new(client: Client) -> Backend {
        let tx = state::spawn(client);
        Backend { tx }
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

impl LanguageServer for Backend {
    async fn initialize(&self, params: InitializeParams) -> Result<InitializeResult> {
        let encoding = negotiate_encoding(&params);
        self.send(Msg::Initialize {
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
                ..Default::default()
            },
            server_info: Some(ServerInfo {
                name: "warpsight".into(),
                version: Some(env!("CARGO_PKG_VERSION").into()),
            }),
            ..Default::default()
        })
    }

    async fn initialized(&self, _: InitializedParams) {}

    async fn shutdown(&self) -> Result<()> {
        self.ask(|reply| Msg::Shutdown { reply }).await
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
        self.send(Msg::Configuration { settings: params.settings });
    }

    async fn hover(&self, params: HoverParams) -> Result<Option<Hover>> {
        let p = params.text_document_position_params;
        self.ask(|reply| Msg::Hover { uri: p.text_document.uri, position: line_col(p.position), reply }).await
    }
}
