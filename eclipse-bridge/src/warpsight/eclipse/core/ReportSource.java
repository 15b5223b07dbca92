package warpsight.eclipse.core;

import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * What the "GPU Performance" view asks of a language server for one document. Inside
 * Eclipse it is LSP4E's connection to {@code warpsight lsp} (src-lsp4e); in the tests and
 * without LSP4E it is a {@link WarpsightClient} of its own.
 */
public interface ReportSource {
    /** The kernels of the document with their lines (from {@code textDocument/codeLens}). */
    CompletableFuture<List<KernelAnchor>> kernels(String uri);

    /** {@code warpsight/kernelReport}; {@code kernel} null for all kernels. */
    CompletableFuture<FileReport> kernelReport(String uri, String kernel);

    /** {@code warpsight/whatIf}. */
    CompletableFuture<FileReport> whatIf(WhatIfParams params);
}
