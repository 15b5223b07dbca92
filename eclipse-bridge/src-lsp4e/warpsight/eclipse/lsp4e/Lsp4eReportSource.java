package warpsight.eclipse.lsp4e;

import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.eclipse.jface.text.IDocument;
import org.eclipse.lsp4e.LSPEclipseUtils;
import org.eclipse.lsp4e.LanguageServers;
import org.eclipse.lsp4j.CodeLens;
import org.eclipse.lsp4j.CodeLensParams;
import org.eclipse.lsp4j.TextDocumentIdentifier;
import org.eclipse.lsp4j.services.LanguageServer;
import warpsight.eclipse.core.FileReport;
import warpsight.eclipse.core.KernelAnchor;
import warpsight.eclipse.core.LspTypes;
import warpsight.eclipse.core.ReportSource;
import warpsight.eclipse.core.WhatIfParams;
import warpsight.eclipse.lsp.WarpsightLanguageServer;

/**
 * The view's requests sent to the {@code warpsight lsp} that LSP4E runs for a document,
 * through LSP4E's {@code LanguageServers} API and the {@link WarpsightLanguageServer}
 * proxy (plugin.xml's {@code serverInterface}), as cdt-lsp calls clangd's own requests.
 * The document's URI is the one LSP4E sent in {@code didOpen}.
 *
 * <p>Compiled only where LSP4E is present (eclipse-bridge/README.md, "With LSP4E").
 */
public final class Lsp4eReportSource implements ReportSource {
    private final IDocument document;
    private final String uri;

    public Lsp4eReportSource(IDocument document) {
        this.document = document;
        URI u = LSPEclipseUtils.toUri(document);
        if (u == null) {
            throw new IllegalArgumentException("the document has no URI (not a file?)");
        }
        this.uri = u.toASCIIString();
    }

    private <T> CompletableFuture<T> first(java.util.function.Function<WarpsightLanguageServer, CompletableFuture<T>> call) {
        return LanguageServers.forDocument(document)
                .computeFirst((LanguageServer ls) -> ls instanceof WarpsightLanguageServer
                        ? call.apply((WarpsightLanguageServer) ls)
                        : CompletableFuture.completedFuture(null))
                .thenApply(o -> o.orElseThrow(() -> new IllegalStateException(
                        "warpsight lsp is not running for " + uri + " (is the file's content type mapped? docs/editors.md)")));
    }

    @Override
    public CompletableFuture<List<KernelAnchor>> kernels(String ignored) {
        return first(ls -> ls.getTextDocumentService().codeLens(new CodeLensParams(new TextDocumentIdentifier(uri))))
                .thenApply(Lsp4eReportSource::anchors);
    }

    static List<KernelAnchor> anchors(List<? extends CodeLens> lenses) {
        List<KernelAnchor> out = new ArrayList<>();
        for (CodeLens l : lenses) {
            if (l.getCommand() == null || !"warpsight.openReport".equals(l.getCommand().getCommand())
                    || l.getCommand().getArguments() == null || l.getCommand().getArguments().isEmpty()) {
                continue;
            }
            Object arg = l.getCommand().getArguments().get(0);
            if (arg instanceof com.google.gson.JsonObject && ((com.google.gson.JsonObject) arg).has("kernel")) {
                out.add(new KernelAnchor(l.getRange().getStart().getLine(),
                        ((com.google.gson.JsonObject) arg).get("kernel").getAsString(), l.getCommand().getTitle()));
            }
        }
        return out;
    }

    @Override
    public CompletableFuture<FileReport> kernelReport(String ignored, String kernel) {
        return first(ls -> ls.kernelReport(new LspTypes.KernelReportParams(uri, kernel)));
    }

    @Override
    public CompletableFuture<FileReport> whatIf(WhatIfParams params) {
        params.uri = uri;
        return first(ls -> ls.whatIf(params));
    }
}
