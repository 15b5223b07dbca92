package warpsight.eclipse.lsp4e;

import java.io.IOException;
import java.net.URI;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.eclipse.lsp4e.server.ProcessStreamConnectionProvider;
import warpsight.eclipse.core.ServerLocator;

/**
 * Starts {@code warpsight lsp} for LSP4E (plugin.xml, extension
 * {@code org.eclipse.lsp4e.languageServer}, element {@code server}). The executable is
 * found by {@link ServerLocator}; the server's settings (docs/lsp-extensions.md,
 * "Configuration") come from the {@code warpsight.gpus} system property, a comma-separated
 * list of GPU ids, when set.
 *
 * <p>Compiled only where LSP4E is present (eclipse-bridge/README.md, "With LSP4E").
 */
public final class WarpsightStreamConnectionProvider extends ProcessStreamConnectionProvider {
    /** Finds the executable when LSP4E starts the server, so that a missing one is LSP4E's start error. */
    @Override
    public void start() throws IOException {
        Path exe;
        try {
            exe = ServerLocator.find(null, System.getenv());
        } catch (IllegalStateException e) {
            throw new IOException(e.getMessage(), e);
        }
        setCommands(List.of(exe.toString(), "lsp"));
        super.start();
    }

    @Override
    public Object getInitializationOptions(URI rootUri) {
        String gpus = System.getProperty("warpsight.gpus");
        if (gpus == null || gpus.isBlank()) {
            return null;
        }
        return Map.of("gpus", List.of(gpus.trim().split("\\s*,\\s*")));
    }

    @Override
    public String toString() {
        return "warpsight lsp: " + getCommands();
    }
}
