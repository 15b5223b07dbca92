package warpsight.eclipse.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The core client against the real `warpsight lsp` (target/debug/warpsight or $WARPSIGHT_BIN). */
class WarpsightClientTest {
    @TempDir
    Path dir;

    @Test
    void ptxReportWhatIfAndCleanShutdown() throws Exception {
        Path ptx = Fixtures.example(dir, "vadd.ptx");
        String uri = Fixtures.uri(ptx);
        WarpsightClient c = Fixtures.start(dir, Map.of("gpus", List.of("a100", "tesla-k20"), "debounceMs", 0));
        try {
            assertTrue(c.serverCapabilities().has("codeLensProvider"), "the server offers code lenses");
            c.didOpen(uri, "ptx", Files.readString(ptx));

            List<KernelAnchor> anchors = c.await("codeLens", c.kernels(uri), Fixtures.TIMEOUT);
            assertEquals(1, anchors.size(), "one kernel in vadd.ptx: " + anchors);
            KernelAnchor a = anchors.get(0);
            assertEquals("_Z4vaddPKfS0_Pfi", a.kernel);
            List<String> lines = Files.readAllLines(ptx);
            assertTrue(lines.get(a.line).contains(".entry _Z4vaddPKfS0_Pfi"), "the lens is on the .entry line: " + lines.get(a.line));

            FileReport r = c.await("kernelReport", c.kernelReport(uri, a.kernel), Fixtures.TIMEOUT);
            assertEquals("ptx", r.kind);
            assertEquals(1, r.kernels.size());
            FileReport.Kernel k = r.kernels.get(0);
            assertEquals("vadd(float const*, float const*, float*, int)", k.demangled);
            assertEquals("vadd", k.baseName());
            assertEquals(java.util.Set.of("a100-sxm4-80gb", "tesla-k20"), k.gpus.keySet(), "the GPUs of the settings");
            assertEquals("a100-sxm4-80gb", a.primaryGpu(), "the lens names the first GPU of the settings: " + a.summary);
            FileReport.Target t = k.gpus.get("a100-sxm4-80gb");
            assertNotNull(t.headline, "a headline time");
            assertTrue(t.headline.timeUs > 0);
            assertEquals(t.predictions.get(t.headline.model).timeUs, t.headline.timeUs, 1e-9,
                    "the headline is one of the models' times");
            assertTrue(t.predictions.keySet().containsAll(List.of("mwp_cwp", "wave", "bsp", "cgpredict", "scheduling", "roofline")),
                    "every paper model: " + t.predictions.keySet());
            assertNotNull(t.predictions.get("mwp_cwp").mwp);
            assertTrue(t.occupancy.occupancy > 0 && t.occupancy.occupancy <= 1);
            assertFalse(t.occupancy.limiters.isEmpty(), "the occupancy limiter");
            assertTrue(t.power.watts > 0);
            assertFalse(t.power.contributions.isEmpty());
            assertEquals(t.power.watts * t.headline.timeUs, t.energyUj, 1e-6 * t.energyUj, "energy = power × time (docs/power.md)");
            // examples/vadd.ptx carries the launch of vadd.cu's main as a `// warpsight:` annotation.
            assertEquals("annotation", k.launch.source);
            assertEquals(65536, k.launch.grid[0]);
            assertEquals(256, k.launch.block[0]);

            // What if: block 128 on a K20. The launch is the request's, the document's settings stay.
            WhatIfParams p = new WhatIfParams(uri, a.kernel);
            p.block = WhatIfParams.parseDims("block", "128");
            p.grid = WhatIfParams.parseDims("grid", "4096");
            p.gpu = "tesla-k20";
            FileReport w = c.await("whatIf", c.whatIf(p), Fixtures.TIMEOUT);
            FileReport.Kernel wk = w.kernel(a.kernel);
            assertEquals("setting", wk.launch.source);
            assertEquals(128, wk.launch.block[0]);
            assertEquals(4096, wk.launch.grid[0]);
            assertEquals(List.of("tesla-k20"), List.copyOf(wk.gpus.keySet()));
            FileReport again = c.await("kernelReport", c.kernelReport(uri, null), Fixtures.TIMEOUT);
            assertEquals("annotation", again.kernels.get(0).launch.source, "a what-if leaves the document's launch alone");

            // An edit: a syntax error on a new line gets a diagnostic for version 2.
            String broken = Files.readString(ptx).replaceFirst("\tld.param.u64", "\tthis is ( not ptx\n\tld.param.u64");
            c.didChange(uri, broken);
            c.await("analysis", c.analysed(uri), Fixtures.TIMEOUT);
            LspTypes.PublishDiagnosticsParams d = c.diagnostics(uri);
            assertEquals(2, d.version);
            assertTrue(d.diagnostics.stream().anyMatch(x -> "syntax".equals(x.code)), "a syntax diagnostic after the edit");

            assertEquals(0, c.shutdown(Fixtures.TIMEOUT), "exit code 0 after shutdown (params null) and exit");
            assertFalse(c.isAlive());
        } finally {
            c.close();
        }
    }

    @Test
    void reportOfADocumentNotOpenIsAnInvalidParamsError() throws Exception {
        try (WarpsightClient c = Fixtures.start(dir, null)) {
            JsonRpcConnection.RpcException e = assertThrows(JsonRpcConnection.RpcException.class,
                    () -> c.await("kernelReport", c.kernelReport(Fixtures.uri(dir.resolve("none.ptx")), null), Fixtures.TIMEOUT));
            assertEquals(-32602, e.code, e.getMessage());
            assertEquals(0, c.shutdown(Fixtures.TIMEOUT));
        }
    }

    @Test
    void cudaDocumentThroughTheSyncingSource() throws Exception {
        Path cu = Fixtures.example(dir, "reduce.cu");
        String uri = Fixtures.uri(cu);
        try (WarpsightClient c = Fixtures.start(dir, Map.of("debounceMs", 0))) {
            SyncingReportSource s = new SyncingReportSource(c);
            String[] text = {Files.readString(cu)};
            s.track(uri, () -> text[0]);
            List<KernelAnchor> anchors = c.await("codeLens", s.kernels(uri), Fixtures.TIMEOUT);
            assertEquals(3, anchors.size(), "reduce.cu has three kernels: " + anchors);
            List<String> lines = Files.readAllLines(cu);
            int shuffle = -1;
            for (int i = 0; i < lines.size(); i++) {
                if (lines.get(i).contains("reduce_shuffle(")) {
                    shuffle = i;
                    break;
                }
            }
            KernelAnchor inShuffle = KernelAnchor.at(anchors, shuffle + 3);
            FileReport r = c.await("kernelReport", s.kernelReport(uri, inShuffle.kernel), Fixtures.TIMEOUT);
            assertEquals("cu", r.kind);
            assertNotNull(r.toolchain, "a .cu report says where its PTX came from");
            assertEquals(1, r.kernels.size());
            assertEquals("reduce_shuffle", r.kernels.get(0).baseName());

            // The source sends the edited text before the next request (version 2).
            text[0] = text[0] + "\n// an edit\n";
            c.await("codeLens", s.kernels(uri), Fixtures.TIMEOUT);
            assertEquals(2, c.diagnostics(uri).version);
            assertEquals(0, c.shutdown(Fixtures.TIMEOUT));
        }
    }

    @Test
    void aMissingServerIsAClearError() {
        Path missing = dir.resolve("no-such-warpsight");
        java.io.IOException e = assertThrows(java.io.IOException.class,
                () -> WarpsightClient.start(List.of(missing.toString(), "lsp"), dir, null, Fixtures.TIMEOUT));
        assertTrue(e.getMessage().contains("could not start the language server"), e.getMessage());
        IllegalStateException e2 = assertThrows(IllegalStateException.class,
                () -> ServerLocator.find(missing.toString(), Map.of()));
        assertTrue(e2.getMessage().contains("is not an executable file"), e2.getMessage());
        assertNull(System.getProperty(ServerLocator.PROPERTY));
        IllegalStateException e3 = assertThrows(IllegalStateException.class,
                () -> ServerLocator.find(null, Map.of("PATH", dir.toString()), dir.toString()));
        assertTrue(e3.getMessage().contains("no warpsight executable found"), e3.getMessage());
    }
}
