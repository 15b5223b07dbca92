package warpsight.eclipse.core;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.reflect.TypeToken;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;

/**
 * An LSP client session with {@code warpsight lsp} over the process's stdio: start,
 * {@code initialize}/{@code initialized}, document sync ({@code didOpen}, full-text
 * {@code didChange}, {@code didClose}), code lenses, the custom requests, and a clean end
 * ({@code shutdown} with {@code params: null}, then {@code exit}, then the exit code).
 *
 * <p>The server's stderr (its log, docs/lsp-extensions.md) is drained on a thread and its
 * last lines are kept for error messages.
 */
public final class WarpsightClient implements ReportSource, AutoCloseable {
    private static final int STDERR_LINES = 40;

    private final Process process;
    private final JsonRpcConnection rpc;
    private final Deque<String> stderrTail = new ArrayDeque<>();
    private final Map<String, LspTypes.PublishDiagnosticsParams> diagnostics = new ConcurrentHashMap<>();
    private final Map<String, Integer> versions = new ConcurrentHashMap<>();
    private volatile Consumer<LspTypes.PublishDiagnosticsParams> diagnosticsListener = d -> { };
    private volatile JsonObject serverCapabilities;
    private final List<Waiter> waiters = new ArrayList<>();
    private boolean shutDown;

    private WarpsightClient(Process process) {
        this.process = process;
        this.rpc = new JsonRpcConnection(process.getInputStream(), process.getOutputStream(), "warpsight lsp");
        Thread err = new Thread(this::drainStderr, "warpsight lsp stderr");
        err.setDaemon(true);
        err.start();
        rpc.setNotificationHandler(this::onNotification);
        rpc.setRequestHandler(this::onServerRequest);
        rpc.start();
    }

    /**
     * Starts {@code command} (for example {@code [warpsight, lsp]}) in {@code workDir} and
     * initializes it with {@code initializationOptions} (the settings of
     * docs/lsp-extensions.md, "Configuration"; may be null).
     */
    public static WarpsightClient start(List<String> command, Path workDir, Object initializationOptions,
            Duration timeout) throws IOException {
        ProcessBuilder pb = new ProcessBuilder(command);
        if (workDir != null) {
            pb.directory(workDir.toFile());
        }
        Process p;
        try {
            p = pb.start();
        } catch (IOException e) {
            throw new IOException("could not start the language server " + command + ": " + e.getMessage(), e);
        }
        WarpsightClient c = new WarpsightClient(p);
        try {
            c.initialize(workDir, initializationOptions, timeout);
        } catch (IOException | RuntimeException e) {
            c.kill();
            throw e;
        }
        return c;
    }

    private void initialize(Path workDir, Object options, Duration timeout) throws IOException {
        LspTypes.InitializeParams params = new LspTypes.InitializeParams();
        params.rootUri = workDir == null ? null : workDir.toUri().toString();
        params.initializationOptions = options;
        JsonElement result = await("initialize", rpc.request("initialize", params), timeout);
        if (result.isJsonObject() && result.getAsJsonObject().has("capabilities")) {
            serverCapabilities = result.getAsJsonObject().getAsJsonObject("capabilities");
        }
        rpc.notify("initialized", new JsonObject());
    }

    /** The server's capabilities from its {@code initialize} result. */
    public JsonObject serverCapabilities() {
        return serverCapabilities;
    }

    /** Called with every {@code textDocument/publishDiagnostics} (on the reader thread). */
    public void setDiagnosticsListener(Consumer<LspTypes.PublishDiagnosticsParams> listener) {
        this.diagnosticsListener = listener;
    }

    /** The last diagnostics published for {@code uri}; null before any. */
    public LspTypes.PublishDiagnosticsParams diagnostics(String uri) {
        return diagnostics.get(uri);
    }

    public void didOpen(String uri, String languageId, String text) throws IOException {
        versions.put(uri, 1);
        rpc.notify("textDocument/didOpen", new LspTypes.DidOpenParams(new LspTypes.TextDocumentItem(uri, languageId, 1, text)));
    }

    /** Sends the whole new text; the version goes up by one (LSP: versions increase). */
    public void didChange(String uri, String text) throws IOException {
        Integer v = versions.get(uri);
        if (v == null) {
            throw new IllegalStateException(uri + " is not open");
        }
        int next = v + 1;
        versions.put(uri, next);
        LspTypes.DidChangeParams p = new LspTypes.DidChangeParams();
        p.textDocument.uri = uri;
        p.textDocument.version = next;
        p.contentChanges.add(new LspTypes.ContentChange(text));
        rpc.notify("textDocument/didChange", p);
    }

    /**
     * Completes when the server has published the diagnostics of the document's current
     * version, that is, when its analysis of the text last sent is done (the server
     * publishes them after every analysis, with the version: docs/lsp-extensions.md).
     */
    public CompletableFuture<Void> analysed(String uri) {
        Integer want = versions.get(uri);
        if (want == null) {
            return CompletableFuture.failedFuture(new IllegalStateException(uri + " is not open"));
        }
        CompletableFuture<Void> f = new CompletableFuture<>();
        synchronized (waiters) {
            LspTypes.PublishDiagnosticsParams d = diagnostics.get(uri);
            if (d != null && d.version != null && d.version >= want) {
                f.complete(null);
            } else {
                waiters.add(new Waiter(uri, want, f));
            }
        }
        return f;
    }

    private static final class Waiter {
        final String uri;
        final int version;
        final CompletableFuture<Void> future;

        Waiter(String uri, int version, CompletableFuture<Void> future) {
            this.uri = uri;
            this.version = version;
            this.future = future;
        }
    }

    public boolean isOpen(String uri) {
        return versions.containsKey(uri);
    }

    public void didClose(String uri) throws IOException {
        versions.remove(uri);
        rpc.notify("textDocument/didClose", new LspTypes.DidCloseParams(uri));
    }

    @Override
    public CompletableFuture<List<KernelAnchor>> kernels(String uri) {
        return rpc.request("textDocument/codeLens", new LspTypes.CodeLensParams(uri)).thenApply(WarpsightClient::anchors);
    }

    static List<KernelAnchor> anchors(JsonElement result) {
        List<KernelAnchor> out = new ArrayList<>();
        if (result == null || !result.isJsonArray()) {
            return out;
        }
        List<LspTypes.CodeLens> lenses = JsonRpcConnection.GSON.fromJson(result,
                new TypeToken<List<LspTypes.CodeLens>>() { }.getType());
        for (LspTypes.CodeLens l : lenses) {
            if (l.command == null || !"warpsight.openReport".equals(l.command.command) || l.command.arguments == null
                    || l.command.arguments.isEmpty()) {
                continue;
            }
            Object kernel = l.command.arguments.get(0).get("kernel");
            if (kernel instanceof String) {
                out.add(new KernelAnchor(l.range.start.line, (String) kernel, l.command.title));
            }
        }
        return out;
    }

    @Override
    public CompletableFuture<FileReport> kernelReport(String uri, String kernel) {
        return rpc.request("warpsight/kernelReport", new LspTypes.KernelReportParams(uri, kernel))
                .thenApply(FileReport::fromJson);
    }

    @Override
    public CompletableFuture<FileReport> whatIf(WhatIfParams params) {
        return rpc.request("warpsight/whatIf", params).thenApply(FileReport::fromJson);
    }

    /** Any request, for what this class does not wrap. */
    public CompletableFuture<JsonElement> request(String method, Object params) {
        return rpc.request(method, params);
    }

    /**
     * {@code shutdown} (with {@code "params": null}, as eglot sends it), then {@code exit};
     * returns the server's exit code (0 after a shutdown, docs/lsp-extensions.md, "Limits").
     */
    public int shutdown(Duration timeout) throws IOException {
        await("shutdown", rpc.request("shutdown", null), timeout);
        shutDown = true;
        rpc.notify("exit", null);
        try {
            if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                kill();
                throw new IOException("the language server did not exit within " + timeout.toMillis() + " ms of `exit`");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            kill();
            throw new IOException("interrupted while waiting for the language server to exit", e);
        }
        return process.exitValue();
    }

    /** Shuts down cleanly if that was not done yet; kills the process if that fails. */
    @Override
    public void close() {
        if (!process.isAlive()) {
            return;
        }
        if (!shutDown) {
            try {
                shutdown(Duration.ofSeconds(5));
                return;
            } catch (IOException | RuntimeException e) {
                // fall through to kill
            }
        }
        kill();
    }

    private void kill() {
        process.destroy();
        try {
            if (!process.waitFor(2, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            process.destroyForcibly();
        }
    }

    public boolean isAlive() {
        return process.isAlive();
    }

    /** The last lines the server wrote to stderr. */
    public String stderrTail() {
        synchronized (stderrTail) {
            return String.join("\n", stderrTail);
        }
    }

    /** Waits for a request's result, turning failures into IOExceptions that say what happened. */
    public <T> T await(String what, CompletableFuture<T> f, Duration timeout) throws IOException {
        try {
            return f.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            throw new IOException(what + ": no answer within " + timeout.toMillis() + " ms" + stderrNote(), e);
        } catch (ExecutionException e) {
            Throwable c = e.getCause();
            if (c instanceof JsonRpcConnection.RpcException) {
                throw (JsonRpcConnection.RpcException) c;
            }
            throw new IOException(what + ": " + c.getMessage() + stderrNote(), c);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException(what + ": interrupted", e);
        }
    }

    private String stderrNote() {
        String tail = stderrTail();
        return tail.isEmpty() ? "" : "\nserver log (stderr):\n" + tail;
    }

    private void onNotification(String method, JsonElement params) {
        if ("textDocument/publishDiagnostics".equals(method)) {
            LspTypes.PublishDiagnosticsParams p = JsonRpcConnection.GSON.fromJson(params,
                    LspTypes.PublishDiagnosticsParams.class);
            List<Waiter> done = new ArrayList<>();
            synchronized (waiters) {
                diagnostics.put(p.uri, p);
                waiters.removeIf(w -> {
                    boolean ready = w.uri.equals(p.uri) && p.version != null && p.version >= w.version;
                    if (ready) {
                        done.add(w);
                    }
                    return ready;
                });
            }
            done.forEach(w -> w.future.complete(null));
            diagnosticsListener.accept(p);
        }
    }

    /**
     * The requests the server may send (docs/lsp-extensions.md): dynamic registration,
     * work-done progress, refreshes; all answered with null. Anything else is -32601.
     */
    private Object onServerRequest(JsonObject request) {
        String method = request.get("method").getAsString();
        switch (method) {
            case "client/registerCapability":
            case "client/unregisterCapability":
            case "window/workDoneProgress/create":
            case "workspace/inlayHint/refresh":
            case "workspace/codeLens/refresh":
            case "window/showMessageRequest":
                return null;
            default:
                throw new UnsupportedOperationException(method);
        }
    }

    private void drainStderr() {
        try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getErrorStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = r.readLine()) != null) {
                synchronized (stderrTail) {
                    stderrTail.addLast(line);
                    while (stderrTail.size() > STDERR_LINES) {
                        stderrTail.removeFirst();
                    }
                }
            }
        } catch (IOException e) {
            // the process ended
        }
    }
}
