package warpsight.eclipse.lsp;

import java.util.concurrent.CompletableFuture;
import org.eclipse.lsp4j.jsonrpc.services.JsonRequest;
import org.eclipse.lsp4j.services.LanguageServer;
import warpsight.eclipse.core.FileReport;
import warpsight.eclipse.core.LspTypes;
import warpsight.eclipse.core.WhatIfParams;

/**
 * The server interface LSP4E proxies for {@code warpsight lsp} (plugin.xml,
 * {@code serverInterface}): LSP4J's {@link LanguageServer} plus the custom requests of
 * docs/lsp-extensions.md, as CDT's clangd integration (cdt-lsp) declares clangd's own
 * requests. LSP4J serialises the params and deserialises the results into the core's
 * typed report.
 */
public interface WarpsightLanguageServer extends LanguageServer {
    /** {@code warpsight/kernelReport { uri, kernel? }}. */
    @JsonRequest("warpsight/kernelReport")
    CompletableFuture<FileReport> kernelReport(LspTypes.KernelReportParams params);

    /** {@code warpsight/whatIf { uri, kernel?, grid?, block?, dynamicSmem?, gpu? }}. */
    @JsonRequest("warpsight/whatIf")
    CompletableFuture<FileReport> whatIf(WhatIfParams params);
}
