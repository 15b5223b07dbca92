package warpsight.eclipse.ui;

import java.io.IOException;
import java.lang.reflect.Constructor;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.eclipse.core.runtime.IStatus;
import org.eclipse.core.runtime.Platform;
import org.eclipse.core.runtime.Status;
import org.eclipse.jface.text.IDocument;
import warpsight.eclipse.core.ReportSource;
import warpsight.eclipse.core.ServerLocator;
import warpsight.eclipse.core.SyncingReportSource;
import warpsight.eclipse.core.WarpsightClient;

/**
 * Which language server the view asks. With LSP4E installed and the bridge compiled in
 * (src-lsp4e, README "With LSP4E"), the one LSP4E started for the document, the same that
 * gives the editor its hovers and markers; otherwise a {@code warpsight lsp} of the view's
 * own, to which the view sends the document's text itself.
 */
final class ReportSources {
    static final String BUNDLE = "warpsight.eclipse";
    /** The class in src-lsp4e; absent from a jar built without LSP4E. */
    static final String LSP4E_SOURCE = "warpsight.eclipse.lsp4e.Lsp4eReportSource";

    private static WarpsightClient standalone;
    private static SyncingReportSource standaloneSource;

    private ReportSources() {
    }

    /** The source for the document; null when no server could be started (logged). */
    static ReportSource forDocument(IDocument document, String uri) {
        try {
            Class<?> c = Class.forName(LSP4E_SOURCE, true, ReportSources.class.getClassLoader());
            Constructor<?> k = c.getConstructor(IDocument.class);
            return (ReportSource) k.newInstance(document);
        } catch (ClassNotFoundException | LinkageError e) {
            // Built without src-lsp4e, or LSP4E not installed (the bundle's optional import).
        } catch (ReflectiveOperationException e) {
            log("the LSP4E bridge could not be created; the view starts its own server", e);
        }
        SyncingReportSource s = standalone(uri);
        if (s == null) {
            return null;
        }
        s.track(uri, document::get);
        return s;
    }

    private static synchronized SyncingReportSource standalone(String uri) {
        if (standalone != null && standalone.isAlive()) {
            return standaloneSource;
        }
        try {
            Path exe = ServerLocator.find(null, System.getenv());
            Path dir = uri.startsWith("file:") ? Path.of(URI.create(uri)).getParent() : null;
            standalone = WarpsightClient.start(List.of(exe.toString(), "lsp"), dir, null, Duration.ofSeconds(30));
            standaloneSource = new SyncingReportSource(standalone);
            Runtime.getRuntime().addShutdownHook(new Thread(standalone::close, "warpsight lsp shutdown"));
            return standaloneSource;
        } catch (IOException | RuntimeException e) {
            log("could not start warpsight lsp for the GPU Performance view", e);
            return null;
        }
    }

    /** The file URI as LSP clients write it ({@code file:///path}). */
    static String uriText(URI u) {
        if ("file".equals(u.getScheme())) {
            return Path.of(u).toUri().toString();
        }
        return u.toString();
    }

    private static void log(String message, Throwable e) {
        if (Platform.isRunning()) {
            Platform.getLog(Platform.getBundle(BUNDLE)).log(new Status(IStatus.WARNING, BUNDLE, message, e));
        } else {
            System.err.println("warpsight: " + message + ": " + e);
        }
    }
}
