package warpsight.eclipse.core;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Finds the {@code warpsight} executable: an explicit path, then the
 * {@code warpsight.server} system property, then {@code $WARPSIGHT_BIN} (as the client
 * tests in tests/clients use it), then {@code PATH}, then {@code ~/.cargo/bin} (where
 * {@code cargo install} puts it).
 */
public final class ServerLocator {
    private ServerLocator() {
    }

    /** The system property naming the executable (for example in eclipse.ini's -vmargs). */
    public static final String PROPERTY = "warpsight.server";

    /**
     * The executable, or an exception that says where it looked and how to set it.
     *
     * @param explicit a configured path, or null/blank for none
     */
    public static Path find(String explicit, Map<String, String> env) {
        return find(explicit, env, System.getProperty("user.home"));
    }

    /** As {@link #find(String, Map)}, with the home directory whose .cargo/bin is searched. */
    public static Path find(String explicit, Map<String, String> env, String home) {
        List<String> tried = new ArrayList<>();
        if (explicit != null && !explicit.isBlank()) {
            Path p = Path.of(explicit.trim());
            if (Files.isRegularFile(p) && Files.isExecutable(p)) {
                return p;
            }
            throw new IllegalStateException("the configured warpsight executable " + p + " is not an executable file");
        }
        String fromProperty = System.getProperty(PROPERTY);
        if (fromProperty != null && !fromProperty.isBlank()) {
            return find(fromProperty, env, home);
        }
        String bin = env.get("WARPSIGHT_BIN");
        if (bin != null && !bin.isBlank()) {
            return find(bin, env, home);
        }
        String exe = System.getProperty("os.name", "").toLowerCase().contains("win") ? "warpsight.exe" : "warpsight";
        String path = env.getOrDefault("PATH", "");
        for (String dir : path.split(File.pathSeparator)) {
            if (dir.isEmpty()) {
                continue;
            }
            Path p = Path.of(dir, exe);
            tried.add(dir);
            if (Files.isRegularFile(p) && Files.isExecutable(p)) {
                return p;
            }
        }
        if (home != null) {
            Path p = Path.of(home, ".cargo", "bin", exe);
            tried.add(p.getParent().toString());
            if (Files.isRegularFile(p) && Files.isExecutable(p)) {
                return p;
            }
        }
        throw new IllegalStateException("no warpsight executable found (looked in " + String.join(", ", tried)
                + "); install it with `cargo install --path server/warpsight`, or name it with the"
                + " -D" + PROPERTY + "=PATH VM argument (eclipse.ini) or $WARPSIGHT_BIN");
    }
}
