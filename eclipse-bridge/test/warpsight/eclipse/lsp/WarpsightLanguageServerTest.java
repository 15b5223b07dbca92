package warpsight.eclipse.lsp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.eclipse.lsp4j.ClientCapabilities;
import org.eclipse.lsp4j.DidOpenTextDocumentParams;
import org.eclipse.lsp4j.InitializeParams;
import org.eclipse.lsp4j.InitializedParams;
import org.eclipse.lsp4j.MessageActionItem;
import org.eclipse.lsp4j.MessageParams;
import org.eclipse.lsp4j.PublishDiagnosticsParams;
import org.eclipse.lsp4j.ShowMessageRequestParams;
import org.eclipse.lsp4j.TextDocumentItem;
import org.eclipse.lsp4j.jsonrpc.Launcher;
import org.eclipse.lsp4j.launch.LSPLauncher;
import org.eclipse.lsp4j.services.LanguageClient;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import warpsight.eclipse.core.FileReport;
import warpsight.eclipse.core.Fixtures;
import warpsight.eclipse.core.LspTypes;
import warpsight.eclipse.core.WhatIfParams;

/**
 * The server interface LSP4E proxies (plugin.xml's serverInterface), driven by LSP4J's own
 * launcher (what LSP4E builds on) against the real server: the custom requests
 * deserialise into the typed report.
 */
class WarpsightLanguageServerTest {
    @TempDir
    Path dir;

    /** A client as LSP4E's default one behaves for these tests: it accepts what the server sends. */
    static final class Client implements LanguageClient {
        @Override
        public void telemetryEvent(Object object) {
        }

        @Override
        public void publishDiagnostics(PublishDiagnosticsParams diagnostics) {
        }

        @Override
        public void showMessage(MessageParams messageParams) {
        }

        @Override
        public CompletableFuture<MessageActionItem> showMessageRequest(ShowMessageRequestParams requestParams) {
            return CompletableFuture.completedFuture(null);
        }

        @Override
        public void logMessage(MessageParams message) {
        }
    }

    @Test
    void customRequestsThroughLsp4j() throws Exception {
        Path ptx = Fixtures.example(dir, "transpose.ptx");
        String uri = Fixtures.uri(ptx);
        Process p = new ProcessBuilder(Fixtures.server().toString(), "lsp").directory(dir.toFile())
                .redirectError(ProcessBuilder.Redirect.DISCARD).start();
        ExecutorService pool = Executors.newCachedThreadPool();
        try {
            Launcher<WarpsightLanguageServer> launcher = new LSPLauncher.Builder<WarpsightLanguageServer>()
                    .setLocalService(new Client())
                    .setRemoteInterface(WarpsightLanguageServer.class)
                    .setInput(p.getInputStream())
                    .setOutput(p.getOutputStream())
                    .setExecutorService(pool)
                    .create();
            launcher.startListening();
            WarpsightLanguageServer server = launcher.getRemoteProxy();
            InitializeParams init = new InitializeParams();
            init.setProcessId((int) ProcessHandle.current().pid());
            init.setCapabilities(new ClientCapabilities());
            init.setInitializationOptions(Map.of("gpus", List.of("tesla-k20", "a100")));
            assertNotNull(server.initialize(init).get(60, TimeUnit.SECONDS).getCapabilities().getCodeLensProvider());
            server.initialized(new InitializedParams());
            server.getTextDocumentService().didOpen(new DidOpenTextDocumentParams(
                    new TextDocumentItem(uri, "ptx", 1, Files.readString(ptx))));

            FileReport all = server.kernelReport(new LspTypes.KernelReportParams(uri, null)).get(60, TimeUnit.SECONDS);
            assertEquals(3, all.kernels.size(), "transpose.ptx has three kernels");
            FileReport one = server.kernelReport(new LspTypes.KernelReportParams(uri, "transpose_padded")).get(60, TimeUnit.SECONDS);
            assertEquals(1, one.kernels.size());
            FileReport.Kernel k = one.kernels.get(0);
            assertEquals("transpose_padded", k.baseName());
            assertEquals(java.util.Set.of("tesla-k20", "a100-sxm4-80gb"), k.gpus.keySet());
            assertTrue(k.gpus.get("tesla-k20").headline.timeUs > 0);

            WhatIfParams w = new WhatIfParams(uri, k.name);
            w.block = "32x8x1";
            w.dynamicSmem = 1024L;
            FileReport tried = server.whatIf(w).get(60, TimeUnit.SECONDS);
            FileReport.Launch l = tried.kernels.get(0).launch;
            assertEquals("setting", l.source);
            assertEquals(32, l.block[0]);
            assertEquals(8, l.block[1]);
            assertEquals(1024, l.dynamicSmem);

            server.shutdown().get(60, TimeUnit.SECONDS);
            server.exit();
            assertTrue(p.waitFor(60, TimeUnit.SECONDS), "the server exits after `exit`");
            assertEquals(0, p.exitValue());
        } finally {
            p.destroyForcibly();
            pool.shutdownNow();
        }
    }
}
