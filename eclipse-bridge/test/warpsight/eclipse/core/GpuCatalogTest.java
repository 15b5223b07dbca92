package warpsight.eclipse.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class GpuCatalogTest {
    @TempDir
    Path dir;

    @Test
    void theServersDatabase() throws Exception {
        List<GpuCatalog.Gpu> gpus = GpuCatalog.load(Fixtures.server(), Fixtures.TIMEOUT);
        assertTrue(gpus.size() > 50, "the GPU database: " + gpus.size());
        GpuCatalog.Gpu a100 = gpus.stream().filter(g -> g.id.equals("a100-sxm4-80gb")).findFirst().orElseThrow();
        assertEquals("a100-sxm4-80gb — NVIDIA A100 80GB SXM4", a100.label());
    }

    private Path script(String body) throws IOException {
        Path s = dir.resolve("fake-warpsight");
        Files.writeString(s, "#!/bin/sh\n" + body + "\n");
        Files.setPosixFilePermissions(s, PosixFilePermissions.fromString("rwx------"));
        return s;
    }

    @Test
    void aHangingOrBrokenProgramIsAnErrorInTime() throws Exception {
        long t0 = System.nanoTime();
        IOException e = assertThrows(IOException.class, () -> GpuCatalog.load(script("exec sleep 30"), Duration.ofMillis(500)));
        assertTrue(e.getMessage().contains("did not finish within 500 ms"), e.getMessage());
        assertTrue(System.nanoTime() - t0 < 10_000_000_000L, "returned near the timeout");
        e = assertThrows(IOException.class, () -> GpuCatalog.load(script("echo '{not json'"), Fixtures.TIMEOUT));
        assertTrue(e.getMessage().contains("not the GPU list"), e.getMessage());
        e = assertThrows(IOException.class, () -> GpuCatalog.load(script("exit 2"), Fixtures.TIMEOUT));
        assertTrue(e.getMessage().contains("exited with status 2"), e.getMessage());
    }
}
