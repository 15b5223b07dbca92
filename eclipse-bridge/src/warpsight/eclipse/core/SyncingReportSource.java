package warpsight.eclipse.core;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * A {@link ReportSource} over a {@link WarpsightClient} of its own that keeps the server's
 * copy of each document equal to the editor's: before each request the current text is
 * sent ({@code didOpen} the first time, a full-text {@code didChange} when it changed).
 * Used when LSP4E is not installed, and by the tests.
 */
public final class SyncingReportSource implements ReportSource {
    private final WarpsightClient client;
    private final Map<String, Supplier<String>> texts = new ConcurrentHashMap<>();
    private final Map<String, String> sent = new ConcurrentHashMap<>();

    public SyncingReportSource(WarpsightClient client) {
        this.client = client;
    }

    /** Tracks a document: {@code text} gives its current content (called before each request). */
    public void track(String uri, Supplier<String> text) {
        texts.put(uri, text);
    }

    /** The LSP language id for a file name (docs/lsp-extensions.md: ptx, cuda-cpp). */
    public static String languageId(String uri) {
        String u = uri.toLowerCase(Locale.ROOT);
        return u.endsWith(".ptx") ? "ptx" : "cuda-cpp";
    }

    /** Whether the server analyses this file (.ptx, .cu, .cuh). */
    public static boolean isAnalysed(String uri) {
        String u = uri.toLowerCase(Locale.ROOT);
        return u.endsWith(".ptx") || u.endsWith(".cu") || u.endsWith(".cuh");
    }

    private synchronized void sync(String uri) {
        Supplier<String> s = texts.get(uri);
        if (s == null) {
            throw new IllegalStateException(uri + " is not tracked");
        }
        String text = s.get();
        try {
            if (!client.isOpen(uri)) {
                client.didOpen(uri, languageId(uri), text);
            } else if (!text.equals(sent.get(uri))) {
                client.didChange(uri, text);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        sent.put(uri, text);
    }

    /**
     * Syncs, then sends the request. For a CUDA document it first waits for the analysis
     * of the text just sent: the server answers CUDA queries at once from the last
     * analysis, which is absent while the first compile runs (docs/lsp-extensions.md,
     * "Ordering and staleness"); PTX queries are queued by the server itself.
     */
    private <T> CompletableFuture<T> after(String uri, Supplier<CompletableFuture<T>> request) {
        try {
            sync(uri);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        if (languageId(uri).equals("ptx")) {
            return request.get();
        }
        return client.analysed(uri).orTimeout(ANALYSIS_TIMEOUT_S, TimeUnit.SECONDS).thenCompose(v -> request.get());
    }

    /** Longer than the server's default compile budget (compileTimeoutMs, 20 s). */
    static final long ANALYSIS_TIMEOUT_S = 60;

    @Override
    public CompletableFuture<List<KernelAnchor>> kernels(String uri) {
        return after(uri, () -> client.kernels(uri));
    }

    @Override
    public CompletableFuture<FileReport> kernelReport(String uri, String kernel) {
        return after(uri, () -> client.kernelReport(uri, kernel));
    }

    @Override
    public CompletableFuture<FileReport> whatIf(WhatIfParams params) {
        return after(params.uri, () -> client.whatIf(params));
    }
}
