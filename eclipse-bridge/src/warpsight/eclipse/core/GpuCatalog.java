package warpsight.eclipse.core;

import com.google.gson.JsonParseException;
import com.google.gson.reflect.TypeToken;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/** The GPU database as {@code warpsight gpus --json} lists it (docs/gpus.md), for the GPU selector. */
public final class GpuCatalog {
    private GpuCatalog() {
    }

    /** One GPU: its id (what the server's {@code gpus} setting takes) and its name. */
    public static final class Gpu {
        public String id;
        public String name;
        public String architecture;
        public Integer year;

        /** {@code a100-sxm4-80gb — NVIDIA A100 80GB SXM4}. */
        public String label() {
            return id + " — " + name;
        }
    }

    /** Runs {@code EXE gpus --json}; a run longer than {@code timeout} is stopped and is an error. */
    public static List<Gpu> load(Path executable, Duration timeout) throws IOException {
        Process p = new ProcessBuilder(executable.toString(), "gpus", "--json")
                .redirectError(ProcessBuilder.Redirect.DISCARD).start();
        // Read on another thread so that a process that never closes its output cannot
        // block the caller past the timeout.
        CompletableFuture<byte[]> out = CompletableFuture.supplyAsync(() -> {
            try (InputStream in = p.getInputStream()) {
                return in.readAllBytes();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
        byte[] bytes;
        try {
            bytes = out.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
            if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                throw new TimeoutException();
            }
        } catch (TimeoutException e) {
            p.destroyForcibly();
            throw new IOException("`warpsight gpus --json` did not finish within " + timeout.toMillis() + " ms");
        } catch (ExecutionException e) {
            p.destroyForcibly();
            throw new IOException("could not read `warpsight gpus --json`: " + e.getCause().getMessage(), e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            p.destroyForcibly();
            throw new IOException("interrupted while listing the GPUs", e);
        }
        if (p.exitValue() != 0) {
            throw new IOException("`warpsight gpus --json` exited with status " + p.exitValue());
        }
        return parse(new String(bytes, StandardCharsets.UTF_8));
    }

    static List<Gpu> parse(String json) throws IOException {
        try {
            List<Gpu> gpus = JsonRpcConnection.GSON.fromJson(json, new TypeToken<List<Gpu>>() { }.getType());
            return gpus == null ? new ArrayList<>() : gpus;
        } catch (JsonParseException e) {
            throw new IOException("`warpsight gpus --json` printed something that is not the GPU list: " + e.getMessage(), e);
        }
    }
}
