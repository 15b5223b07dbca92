//! lsp
