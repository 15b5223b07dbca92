//! The warpsight language server: the only crate that knows LSP.
//!
//! Shape (after ruff's server and rust-analyzer's main loop): `server.rs` implements the protocol surface and
//! does nothing but translate and forward; one task, the state actor in `state.rs`, owns
//! every open document and every analysis result and applies notifications in arrival
//! order; analysis runs on a blocking pool against a text snapshot and comes back tagged
//! with the document version, so nothing stale is ever published.

mod config;
pub mod cuda;
mod document;
mod features;
mod server;
mod state;
mod to_proto;
mod transport;

pub use document::{Document, LineCol, PositionEncoding};
pub use transport::{MAX_MESSAGE_BYTES, framing};

/// How a session ended. LSP 3.17 "exit Notification": the server exits "with success
/// code 0 if the shutdown request has been received before; otherwise with error code 1".
/// The input ending (the client died or closed the pipe) counts the same way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionEnd {
    /// `shutdown` was answered before `exit` or the end of the input.
    AfterShutdown,
    /// `exit` came, or the input ended, without a `shutdown` first.
    WithoutShutdown,
}

impl SessionEnd {
    /// The process exit code the specification prescribes.
    pub fn exit_code(self) -> u8 {
        match self {
            SessionEnd::AfterShutdown => 0,
            SessionEnd::WithoutShutdown => 1,
        }
    }
}

/// Serves LSP over the given byte streams until the client sends `exit` (or closes the
/// input). Used by `warpsight lsp` with stdin/stdout and by tests with in-memory pipes.
pub async fn serve<I, O>(input: I, output: O) -> SessionEnd
where
    I: tokio::io::AsyncRead + Unpin + Send + 'static,
    O: tokio::io::AsyncWrite,
{
    let shutdown = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = shutdown.clone();
    let (service, socket) = tower_lsp_server::LspService::build(move |client| server::Backend::new(client, flag.clone()))
        .custom_method("warpsight/kernelReport", server::Backend::kernel_report)
        .custom_method("warpsight/whatIf", server::Backend::what_if)
        .custom_method("warpsight/compareGpus", server::Backend::compare_gpus)
        .finish();
    transport::serve_validated(input, output, service, socket).await;
    if shutdown.load(std::sync::atomic::Ordering::SeqCst) { SessionEnd::AfterShutdown } else { SessionEnd::WithoutShutdown }
}

/// Runs the server on stdin/stdout with its own runtime. Returns when the client sent
/// `exit` or closed stdin, with how the session ended (its exit code).
pub fn run_stdio() -> anyhow::Result<SessionEnd> {
    limit_malloc_arenas();
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    let end = rt.block_on(serve(tokio::io::stdin(), tokio::io::stdout()));
    // The stdin reader may still be blocked in a read the runtime cannot cancel; do not
    // wait for it (toolchain.md §2: a server that lingers after `exit` is a bug).
    rt.shutdown_timeout(std::time::Duration::from_millis(100));
    if end == SessionEnd::WithoutShutdown {
        tracing::warn!("the session ended without a `shutdown` request: exit code 1 (LSP 3.17, exit notification)");
    }
    Ok(end)
}

/// glibc gives every thread that allocates its own malloc arena and keeps freed memory in
/// it; with analyses running on tokio's blocking pool, each big document opened and closed
/// then grew the resident memory for good (3.1 → 6.1 GB after two open/close cycles of a
/// 100 MB PTX file; docs/benchmarks.md). Two arenas keep the memory bounded at no
/// measurable cost in latency (mallopt(3), `M_ARENA_MAX`).
fn limit_malloc_arenas() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `mallopt` only sets an allocator parameter; called before the runtime's
    // threads exist.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 2);
    }
}

/// Returns freed memory to the operating system (after a large document was closed).
pub(crate) fn trim_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `malloc_trim` has no preconditions.
    unsafe {
        libc::malloc_trim(0);
    }
}
