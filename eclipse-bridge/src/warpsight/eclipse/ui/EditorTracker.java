package warpsight.eclipse.ui;

import java.io.IOException;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.eclipse.jface.text.DocumentEvent;
import org.eclipse.jface.text.IDocument;
import org.eclipse.jface.text.IDocumentListener;
import org.eclipse.jface.text.ITextSelection;
import org.eclipse.jface.viewers.ISelection;
import org.eclipse.ui.IEditorInput;
import org.eclipse.ui.IEditorPart;
import org.eclipse.ui.ISelectionListener;
import org.eclipse.ui.IURIEditorInput;
import org.eclipse.ui.IWorkbenchPage;
import org.eclipse.ui.IWorkbenchPart;
import org.eclipse.ui.texteditor.ITextEditor;
import warpsight.eclipse.core.GpuCatalog;
import warpsight.eclipse.core.ServerLocator;
import warpsight.eclipse.core.SyncingReportSource;

/**
 * Connects the view to the workbench: the post-selection of a text editor on a
 * {@code .cu}/{@code .cuh}/{@code .ptx} file (the cursor line) selects the kernel, and an
 * edit of that editor's document refreshes the report once typing pauses.
 */
final class EditorTracker implements ISelectionListener, IDocumentListener {
    /** The pause after the last keystroke before the report is asked again. */
    static final int EDIT_DELAY_MS = 800;

    private final GpuPerformanceView view;
    private final IWorkbenchPage page;
    private IDocument document;
    private String uri;
    private final Runnable refresh = this::refreshNow;

    EditorTracker(GpuPerformanceView view, IWorkbenchPage page) {
        this.view = view;
        this.page = page;
    }

    void start() {
        page.addPostSelectionListener(this);
        loadGpuCatalog();
        IEditorPart editor = page.getActiveEditor();
        if (editor != null && editor.getSite() != null && editor.getSite().getSelectionProvider() != null) {
            selectionChanged(editor, editor.getSite().getSelectionProvider().getSelection());
        }
    }

    /** The GPU selector's list, from `warpsight gpus --json`, read off the UI thread. */
    private void loadGpuCatalog() {
        org.eclipse.swt.widgets.Display d = view.getSite().getShell().getDisplay();
        CompletableFuture.supplyAsync(() -> {
            try {
                return GpuCatalog.load(ServerLocator.find(null, System.getenv()), Duration.ofSeconds(30));
            } catch (IOException | RuntimeException e) {
                // The selector then offers the report's GPUs only.
                return List.<GpuCatalog.Gpu>of();
            }
        }).thenAccept(gpus -> d.asyncExec(() -> view.setGpuCatalog(gpus)));
    }

    void stop() {
        page.removePostSelectionListener(this);
        track(null, null);
    }

    @Override
    public void selectionChanged(IWorkbenchPart part, ISelection selection) {
        if (!(part instanceof ITextEditor) || !(selection instanceof ITextSelection)) {
            return;
        }
        ITextEditor editor = (ITextEditor) part;
        IEditorInput input = editor.getEditorInput();
        URI u = input instanceof IURIEditorInput ? ((IURIEditorInput) input).getURI() : null;
        if (u == null || !SyncingReportSource.isAnalysed(u.toString())) {
            return;
        }
        IDocument doc = editor.getDocumentProvider() == null ? null : editor.getDocumentProvider().getDocument(input);
        if (doc == null) {
            return;
        }
        String uriText = ReportSources.uriText(u);
        if (doc != document) {
            track(doc, uriText);
            view.setReportSource(ReportSources.forDocument(doc, uriText));
        }
        if (!view.hasReportSource()) {
            view.showMessage("warpsight lsp could not be started for " + GpuPerformanceView.fileName(uriText)
                    + " (the Error Log says why; docs/editors.md says how to install it)");
            return;
        }
        view.showKernelAt(uriText, ((ITextSelection) selection).getStartLine());
    }

    private void track(IDocument doc, String u) {
        if (document != null) {
            document.removeDocumentListener(this);
        }
        document = doc;
        uri = u;
        if (doc != null) {
            doc.addDocumentListener(this);
        }
    }

    @Override
    public void documentAboutToBeChanged(DocumentEvent event) {
    }

    @Override
    public void documentChanged(DocumentEvent event) {
        org.eclipse.swt.widgets.Display d = view.getSite().getShell().getDisplay();
        d.timerExec(-1, refresh);
        d.timerExec(EDIT_DELAY_MS, refresh);
    }

    private void refreshNow() {
        if (uri != null) {
            view.refresh();
        }
    }
}
