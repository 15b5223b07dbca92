package warpsight.eclipse.core;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/** The repository, the server under test and copies of its example files, for the tests. */
public final class Fixtures {
    public static final Duration TIMEOUT = Duration.ofSeconds(60);

    private Fixtures() {
    }

    /** The repository root: $WARPSIGHT_REPO (scripts/test-eclipse.sh sets it), else found upwards. */
    public static Path repo() {
        String env = System.getenv("WARPSIGHT_REPO");
        if (env != null && !env.isBlank()) {
            return Path.of(env);
        }
        for (Path p = Path.of("").toAbsolutePath(); p != null; p = p.getParent()) {
            if (Files.isDirectory(p.resolve("eclipse-bridge")) && Files.isRegularFile(p.resolve("Cargo.toml"))) {
                return p;
            }
        }
        throw new IllegalStateException("run the tests from the repository (or set WARPSIGHT_REPO)");
    }

    /** The server under test: $WARPSIGHT_BIN, else target/debug/warpsight. */
    public static Path server() {
        String env = System.getenv("WARPSIGHT_BIN");
        Path p = env != null && !env.isBlank() ? Path.of(env) : repo().resolve("target/debug/warpsight");
        if (!Files.isExecutable(p)) {
            throw new IllegalStateException("the server " + p + " is not built (cargo build -p warpsight)");
        }
        return p;
    }

    /** Where the tests write what a person looks at (target/eclipse). */
    public static Path out() throws IOException {
        String env = System.getenv("WARPSIGHT_ECLIPSE_OUT");
        Path p = env != null && !env.isBlank() ? Path.of(env) : repo().resolve("target/eclipse");
        Files.createDirectories(p);
        return p;
    }

    /**
     * Copies {@code examples/NAME} (and, for a .cu, its recorded .ptx, which the server uses
     * when no CUDA compiler is found) into {@code dir}; returns the copy.
     */
    public static Path example(Path dir, String name) throws IOException {
        Path src = repo().resolve("examples").resolve(name);
        Path dst = dir.resolve(name);
        Files.copy(src, dst);
        if (name.endsWith(".cu")) {
            String ptx = name.substring(0, name.length() - 3) + ".ptx";
            Files.copy(src.resolveSibling(ptx), dir.resolve(ptx));
        }
        return dst;
    }

    /** A client of the real server, started in {@code dir} with the given settings. */
    public static WarpsightClient start(Path dir, Map<String, Object> settings) throws IOException {
        return WarpsightClient.start(List.of(server().toString(), "lsp"), dir, settings, TIMEOUT);
    }

    public static String uri(Path p) {
        return p.toUri().toString();
    }
}
