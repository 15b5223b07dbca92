package warpsight.eclipse.lsp4e;

import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import org.eclipse.jface.text.IDocument;
import org.eclipse.lsp4e.LSPEclipseUtils;
import org.eclipse.lsp4e.LanguageServers.LanguageServerDocumentExecutor;
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

    /** The first answer of the warpsight server LSP4E runs for the document (empty when it had none). */
    private <T> CompletableFuture<Optional<T>> first(Function<WarpsightLanguageServer, CompletableFuture<T>> call) {
        LanguageServerDocumentExecutor executor = LanguageServers.forDocument(document);
        if (!executor.anyMatching()) {
            return CompletableFuture.failedFuture(new IllegalStateException("no language server runs for " + uri
                    + " (is its content type CUDA C++ Source or PTX Assembly? docs/editors.md)"));
        }
        return executor.computeFirst((LanguageServer ls) -> {
            if (ls instanceof WarpsightLanguageServer) {
                return call.apply((WarpsightLanguageServer) ls);
            }
            return CompletableFuture.<T>completedFuture(null);
        });
    }

    private <T> CompletableFuture<T> required(Function<WarpsightLanguageServer, CompletableFuture<T>> call) {
        return first(call).thenApply(o -> o.orElseThrow(() -> new IllegalStateException(
                "warpsight lsp gave no answer for " + uri + " (is it running? the Error Log says why not)")));
    }

    @Override
    public CompletableFuture<List<KernelAnchor>> kernels(String ignored) {
        // No lenses yet (a .cu whose first compile runs) is an empty list: the view asks again.
        return first(ls -> ls.getTextDocumentService().codeLens(new CodeLensParams(new TextDocumentIdentifier(uri))))
                .thenApply(o -> o.map(Lsp4eReportSource::anchors).orElse(List.of()));
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
        return required(ls -> ls.kernelReport(new LspTypes.KernelReportParams(uri, kernel)));
    }

    @Override
    public CompletableFuture<FileReport> whatIf(WhatIfParams params) {
        params.uri = uri;
        return required(ls -> ls.whatIf(params));
    }
}
