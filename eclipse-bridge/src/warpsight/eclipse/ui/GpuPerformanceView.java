package warpsight.eclipse.ui;

import java.time.LocalTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import org.eclipse.jface.resource.JFaceResources;
import org.eclipse.jface.viewers.ArrayContentProvider;
import org.eclipse.jface.viewers.ColumnLabelProvider;
import org.eclipse.jface.viewers.ColumnViewerToolTipSupport;
import org.eclipse.jface.viewers.TableViewer;
import org.eclipse.jface.viewers.TableViewerColumn;
import org.eclipse.swt.SWT;
import org.eclipse.swt.custom.ScrolledComposite;
import org.eclipse.swt.layout.GridData;
import org.eclipse.swt.layout.GridLayout;
import org.eclipse.swt.widgets.Button;
import org.eclipse.swt.widgets.Combo;
import org.eclipse.swt.widgets.Composite;
import org.eclipse.swt.widgets.Display;
import org.eclipse.swt.widgets.Group;
import org.eclipse.swt.widgets.Label;
import org.eclipse.swt.widgets.Table;
import org.eclipse.swt.widgets.Text;
import org.eclipse.ui.part.ViewPart;
import warpsight.eclipse.core.FileReport;
import warpsight.eclipse.core.GpuCatalog;
import warpsight.eclipse.core.JsonRpcConnection;
import warpsight.eclipse.core.KernelAnchor;
import warpsight.eclipse.core.ReportSource;
import warpsight.eclipse.core.ReportText;
import warpsight.eclipse.core.WhatIfParams;

/**
 * The "GPU Performance" view: the report of the kernel under the cursor from
 * {@code warpsight/kernelReport} (headline time and bound, every model, occupancy and its
 * limiter, MWP/CWP, power with its largest contributions in words, energy), a GPU
 * selector, and a what-if of the launch configuration through {@code warpsight/whatIf}.
 *
 * <p>Inside the workbench an {@link EditorTracker} feeds it the active CUDA/PTX editor's
 * document and cursor line; outside (the tests) {@link #setReportSource} and
 * {@link #showKernelAt} drive it directly. Requests run off the UI thread; only the
 * newest request's answer is shown.
 */
public class GpuPerformanceView extends ViewPart {
    /** The view's id in plugin.xml. */
    public static final String ID = "warpsight.eclipse.gpuPerformanceView";
    /** How often a CUDA document's report is asked again while its first compile runs. */
    static final int CUDA_RETRIES = 30;
    static final int CUDA_RETRY_MS = 1000;

    private ScrolledComposite scroll;
    private Composite body;
    private Label kernelLabel;
    private Combo gpuCombo;
    private Label headline;
    private Label launch;
    private Label occupancy;
    private Label mwpCwp;
    private TableViewer models;
    private Label power;
    private Label contributions;
    private Label energy;
    private Text gridText;
    private Text blockText;
    private Text smemText;
    private Button tryButton;
    private Label whatIfResult;
    private Label status;

    private ReportSource source;
    private EditorTracker tracker;
    private String uri;
    private int line;
    private FileReport report;
    private FileReport.Kernel kernel;
    private String selectedGpu;
    /** The first GPU of the server's settings (from the kernel's code lens). */
    private String primaryGpu;
    private String reportStatus = "";
    /** GPU id to label, for the selector: the report's GPUs first, then the database's. */
    private final Map<String, String> gpuLabels = new LinkedHashMap<>();
    private final List<GpuCatalog.Gpu> catalog = new ArrayList<>();
    private final AtomicInteger generation = new AtomicInteger();

    @Override
    public void createPartControl(Composite parent) {
        scroll = new ScrolledComposite(parent, SWT.V_SCROLL | SWT.H_SCROLL);
        scroll.setExpandHorizontal(true);
        scroll.setExpandVertical(true);
        body = new Composite(scroll, SWT.NONE);
        body.setLayout(new GridLayout(1, false));
        scroll.setContent(body);

        Composite top = new Composite(body, SWT.NONE);
        top.setLayout(new GridLayout(4, false));
        top.setLayoutData(new GridData(SWT.FILL, SWT.CENTER, true, false));
        new Label(top, SWT.NONE).setText("Kernel:");
        kernelLabel = new Label(top, SWT.NONE);
        kernelLabel.setFont(JFaceResources.getBannerFont());
        kernelLabel.setLayoutData(new GridData(SWT.FILL, SWT.CENTER, true, false));
        kernelLabel.setText("(place the cursor in a kernel of a .cu or .ptx file)");
        new Label(top, SWT.NONE).setText("GPU:");
        gpuCombo = new Combo(top, SWT.READ_ONLY | SWT.DROP_DOWN);
        gpuCombo.setLayoutData(new GridData(SWT.FILL, SWT.CENTER, false, false));
        gpuCombo.addListener(SWT.Selection, e -> onGpuSelected());

        headline = new Label(body, SWT.WRAP);
        headline.setFont(JFaceResources.getHeaderFont());
        headline.setLayoutData(fill());
        launch = new Label(body, SWT.WRAP);
        launch.setLayoutData(fill());

        occupancy = wrapLabel(group("Occupancy and waves"));
        mwpCwp = wrapLabel(group("MWP / CWP (Hong && Kim)"));

        Group modelsGroup = group("Models (★ the headline)");
        models = new TableViewer(modelsGroup, SWT.BORDER | SWT.FULL_SELECTION | SWT.V_SCROLL);
        Table table = models.getTable();
        table.setHeaderVisible(true);
        table.setLinesVisible(true);
        GridData tableData = new GridData(SWT.FILL, SWT.FILL, true, true);
        tableData.heightHint = table.getItemHeight() * 7 + table.getHeaderHeight() + 4;
        table.setLayoutData(tableData);
        String[] columns = {"model", "time", "bound", "confidence", "why"};
        int[] widths = {110, 80, 80, 80, 420};
        for (int i = 0; i < columns.length; i++) {
            final int index = i;
            TableViewerColumn c = new TableViewerColumn(models, SWT.NONE);
            c.getColumn().setText(columns[i]);
            c.getColumn().setWidth(widths[i]);
            c.setLabelProvider(new ColumnLabelProvider() {
                @Override
                public String getText(Object element) {
                    return ((String[]) element)[index];
                }

                /** The full reason, which the column may cut. */
                @Override
                public String getToolTipText(Object element) {
                    return ((String[]) element)[4];
                }
            });
        }
        ColumnViewerToolTipSupport.enableFor(models);
        models.setContentProvider(ArrayContentProvider.getInstance());

        Group powerGroup = group("Power and energy (estimates)");
        power = wrapLabel(powerGroup);
        contributions = wrapLabel(powerGroup);
        energy = wrapLabel(powerGroup);

        Group whatIf = group("What if: launch configuration");
        whatIf.setLayout(new GridLayout(7, false));
        new Label(whatIf, SWT.NONE).setText("grid");
        gridText = text(whatIf);
        new Label(whatIf, SWT.NONE).setText("block");
        blockText = text(whatIf);
        new Label(whatIf, SWT.NONE).setText("dynamic smem (B)");
        smemText = text(whatIf);
        tryButton = new Button(whatIf, SWT.PUSH);
        tryButton.setText("Try");
        tryButton.addListener(SWT.Selection, e -> runWhatIf());
        whatIfResult = new Label(whatIf, SWT.WRAP);
        GridData rd = new GridData(SWT.FILL, SWT.CENTER, true, false);
        rd.horizontalSpan = 7;
        whatIfResult.setLayoutData(rd);

        status = new Label(body, SWT.WRAP);
        status.setLayoutData(fill());
        status.setForeground(parent.getDisplay().getSystemColor(SWT.COLOR_DARK_GRAY));
        setEnabledInputs(false);
        relayout();

        if (getSite() != null && getSite().getPage() != null) {
            tracker = new EditorTracker(this, getSite().getPage());
            tracker.start();
        }
    }

    private Group group(String title) {
        Group g = new Group(body, SWT.NONE);
        g.setText(title);
        g.setLayout(new GridLayout(1, false));
        g.setLayoutData(new GridData(SWT.FILL, SWT.FILL, true, false));
        return g;
    }

    private static Label wrapLabel(Composite parent) {
        Label l = new Label(parent, SWT.WRAP);
        l.setLayoutData(fill());
        return l;
    }

    private static Text text(Composite parent) {
        Text t = new Text(parent, SWT.BORDER | SWT.SINGLE);
        GridData d = new GridData(SWT.FILL, SWT.CENTER, false, false);
        d.widthHint = 90;
        t.setLayoutData(d);
        return t;
    }

    private static GridData fill() {
        GridData d = new GridData(SWT.FILL, SWT.CENTER, true, false);
        d.widthHint = 300;
        return d;
    }

    @Override
    public void setFocus() {
        if (gpuCombo != null && !gpuCombo.isDisposed()) {
            gpuCombo.setFocus();
        }
    }

    @Override
    public void dispose() {
        if (tracker != null) {
            tracker.stop();
        }
        super.dispose();
    }

    /** The language server to ask; null clears the view. */
    public void setReportSource(ReportSource source) {
        this.source = source;
    }

    boolean hasReportSource() {
        return source != null;
    }

    /** Clears the report and says why. */
    public void showMessage(String message) {
        clear(message);
    }

    /** The GPUs the selector offers besides those of the report ({@code warpsight gpus}). */
    public void setGpuCatalog(List<GpuCatalog.Gpu> gpus) {
        catalog.clear();
        catalog.addAll(gpus);
        if (report != null && !gpuCombo.isDisposed()) {
            fillGpuCombo();
        }
    }

    /**
     * Shows the report of the kernel at {@code line} (0-based) of {@code uri}. Returns a
     * future that completes once the view shows the answer (or the error).
     */
    public CompletableFuture<Void> showKernelAt(String uri, int line) {
        this.uri = uri;
        this.line = line;
        return refresh();
    }

    /** Asks again for the current document and line (after an edit). */
    public CompletableFuture<Void> refresh() {
        ReportSource s = source;
        String u = uri;
        if (s == null || u == null) {
            return CompletableFuture.completedFuture(null);
        }
        int gen = generation.incrementAndGet();
        int atLine = line;
        setStatus("asking warpsight for " + fileName(u) + " …");
        CompletableFuture<Void> shown = new CompletableFuture<>();
        request(s, u, atLine, gen, shown, 0);
        return shown;
    }

    private void request(ReportSource s, String u, int atLine, int gen, CompletableFuture<Void> shown, int attempt) {
        s.kernels(u).thenCompose(anchors -> {
            KernelAnchor a = KernelAnchor.at(anchors, atLine);
            if (a == null) {
                return CompletableFuture.completedFuture(null);
            }
            return s.kernelReport(u, a.kernel).thenApply(r -> new Object[] {a, r});
        }).whenComplete((result, error) -> {
            boolean cuda = !u.toLowerCase(java.util.Locale.ROOT).endsWith(".ptx");
            // A CUDA document's first compile may still run: no lenses yet, or -32602.
            boolean notYet = (error == null && result == null) || isNotAnalysedYet(error);
            if (cuda && notYet && attempt < CUDA_RETRIES && gen == generation.get()) {
                Display d = display();
                if (d != null) {
                    d.asyncExec(() -> d.timerExec(CUDA_RETRY_MS, () -> request(s, u, atLine, gen, shown, attempt + 1)));
                    return;
                }
            }
            ui(() -> {
                if (gen != generation.get()) {
                    shown.complete(null);
                    return;
                }
                if (error != null) {
                    showError(cause(error));
                } else if (result == null) {
                    clear("no kernel in " + fileName(u) + " (the server found none; see its diagnostics)");
                } else {
                    FileReport r = (FileReport) result[1];
                    KernelAnchor a = (KernelAnchor) result[0];
                    FileReport.Kernel k = r.kernel(a.kernel);
                    if (k == null && !r.kernels.isEmpty()) {
                        k = r.kernels.get(0);
                    }
                    if (k == null) {
                        clear("the report of " + a.kernel + " has no kernel");
                    } else {
                        show(r, k, a.primaryGpu());
                    }
                }
                shown.complete(null);
            }, shown);
        });
    }

    private static boolean isNotAnalysedYet(Throwable error) {
        Throwable c = cause(error);
        return c instanceof JsonRpcConnection.RpcException && ((JsonRpcConnection.RpcException) c).code == -32602
                || c != null && String.valueOf(c.getMessage()).contains("not analysed yet");
    }

    private static Throwable cause(Throwable t) {
        while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
            t = t.getCause();
        }
        return t;
    }

    private Display display() {
        return body == null || body.isDisposed() ? null : body.getDisplay();
    }

    private void ui(Runnable r, CompletableFuture<Void> done) {
        Display d = display();
        if (d == null) {
            done.complete(null);
            return;
        }
        d.asyncExec(() -> {
            if (body.isDisposed()) {
                done.complete(null);
                return;
            }
            try {
                r.run();
            } catch (RuntimeException e) {
                done.completeExceptionally(e);
            }
        });
    }

    private void show(FileReport r, FileReport.Kernel k, String primaryGpu) {
        report = r;
        kernel = k;
        this.primaryGpu = primaryGpu;
        if (selectedGpu == null || !k.gpus.containsKey(selectedGpu)) {
            selectedGpu = primaryGpu != null && k.gpus.containsKey(primaryGpu) ? primaryGpu
                    : k.gpus.isEmpty() ? null : k.gpus.keySet().iterator().next();
        }
        fillGpuCombo();
        kernelLabel.setText(k.displayName());
        FileReport.Target t = selectedGpu == null ? null : k.gpus.get(selectedGpu);
        showTarget(k, t);
        if (k.launch != null) {
            gridText.setText(dimsText(k.launch.grid));
            blockText.setText(dimsText(k.launch.block));
            smemText.setText(Long.toString(k.launch.dynamicSmem));
        }
        whatIfResult.setText("");
        setEnabledInputs(true);
        reportStatus = fileName(r.path) + " · " + r.kernels.size() + " kernel(s)"
                + (r.toolchain != null ? " · " + r.toolchain : "")
                + " · updated " + LocalTime.now().format(DateTimeFormatter.ofPattern("HH:mm:ss"));
        setStatus(reportStatus);
        relayout();
    }

    private void showTarget(FileReport.Kernel k, FileReport.Target t) {
        launch.setText(ReportText.launch(k.launch) + (k.registers != null ? "; " + k.registers.perThread
                + " registers/thread (" + k.registers.source + ")" : ""));
        if (t == null) {
            headline.setText("no GPU in the report");
            return;
        }
        headline.setText(t.name + ": " + ReportText.headline(t));
        occupancy.setText(ReportText.occupancy(t));
        mwpCwp.setText(ReportText.mwpCwp(t));
        models.setInput(ReportText.modelRows(t));
        power.setText(ReportText.power(t));
        contributions.setText(String.join("\n", ReportText.powerContributions(t, 3)));
        energy.setText(ReportText.energy(t));
    }

    private void fillGpuCombo() {
        gpuLabels.clear();
        if (kernel != null && primaryGpu != null && kernel.gpus.containsKey(primaryGpu)) {
            gpuLabels.put(primaryGpu, primaryGpu + " — " + kernel.gpus.get(primaryGpu).name);
        }
        if (kernel != null) {
            for (FileReport.Target t : kernel.gpus.values()) {
                gpuLabels.putIfAbsent(t.gpu, t.gpu + " — " + t.name);
            }
        }
        for (GpuCatalog.Gpu g : catalog) {
            gpuLabels.putIfAbsent(g.id, g.label());
        }
        gpuCombo.setItems(gpuLabels.values().toArray(new String[0]));
        int i = new ArrayList<>(gpuLabels.keySet()).indexOf(selectedGpu);
        if (i >= 0) {
            gpuCombo.select(i);
        }
    }

    /** A GPU of the report is shown at once; another is asked for with a what-if. */
    private void onGpuSelected() {
        int i = gpuCombo.getSelectionIndex();
        if (i < 0 || kernel == null) {
            return;
        }
        selectGpu(new ArrayList<>(gpuLabels.keySet()).get(i));
    }

    /** Selects a GPU as the selector does; the future completes when the view shows it. */
    public CompletableFuture<Void> selectGpu(String gpu) {
        selectedGpu = gpu;
        if (kernel == null) {
            return CompletableFuture.completedFuture(null);
        }
        int i = new ArrayList<>(gpuLabels.keySet()).indexOf(gpu);
        if (i >= 0 && gpuCombo.getSelectionIndex() != i) {
            gpuCombo.select(i);
        }
        FileReport.Target t = kernel.gpus.get(gpu);
        if (t != null) {
            showTarget(kernel, t);
            setStatus(reportStatus);
            relayout();
            return CompletableFuture.completedFuture(null);
        }
        WhatIfParams p = new WhatIfParams(uri, kernel.name);
        p.gpu = gpu;
        return ask(p, r -> {
            FileReport.Kernel k = r.kernel(kernel.name);
            if (k != null && k.gpus.containsKey(gpu)) {
                kernel.gpus.put(gpu, k.gpus.get(gpu));
                showTarget(kernel, k.gpus.get(gpu));
                setStatus("GPU " + gpu + " computed with warpsight/whatIf");
                relayout();
            } else {
                setStatus("the server returned no result for " + gpu);
            }
        });
    }

    /** The what-if of the launch fields, on the selected GPU (the "Try" button). */
    public CompletableFuture<Void> runWhatIf() {
        if (kernel == null || uri == null) {
            return CompletableFuture.completedFuture(null);
        }
        WhatIfParams p = new WhatIfParams(uri, kernel.name);
        try {
            p.grid = WhatIfParams.parseDims("grid", gridText.getText());
            p.block = WhatIfParams.parseDims("block", blockText.getText());
            p.dynamicSmem = WhatIfParams.parseBytes("dynamic smem", smemText.getText());
        } catch (IllegalArgumentException e) {
            whatIfResult.setText(e.getMessage());
            relayout();
            return CompletableFuture.completedFuture(null);
        }
        p.gpu = selectedGpu;
        FileReport.Target now = selectedGpu == null ? null : kernel.gpus.get(selectedGpu);
        String launchText = "grid " + p.grid.replace('x', '×') + ", block " + p.block.replace('x', '×') + ", smem "
                + p.dynamicSmem + " B";
        whatIfResult.setText("trying " + launchText + " …");
        return ask(p, r -> {
            FileReport.Kernel k = r.kernel(kernel.name);
            FileReport.Target t = k == null || selectedGpu == null ? null : k.gpus.get(selectedGpu);
            whatIfResult.setText(t == null ? "the server returned no result"
                    : launchText + " → " + ReportText.comparison(now, t));
            relayout();
        });
    }

    private CompletableFuture<Void> ask(WhatIfParams p, java.util.function.Consumer<FileReport> then) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        ReportSource s = source;
        if (s == null) {
            done.complete(null);
            return done;
        }
        s.whatIf(p).whenComplete((r, error) -> ui(() -> {
            if (error != null) {
                whatIfResult.setText("what-if failed: " + cause(error).getMessage());
                relayout();
            } else {
                then.accept(r);
            }
            done.complete(null);
        }, done));
        return done;
    }

    private void showError(Throwable e) {
        clear("warpsight: " + e.getMessage());
    }

    private void clear(String message) {
        report = null;
        kernel = null;
        kernelLabel.setText("—");
        headline.setText("");
        launch.setText("");
        occupancy.setText("");
        mwpCwp.setText("");
        models.setInput(new String[0][]);
        power.setText("");
        contributions.setText("");
        energy.setText("");
        whatIfResult.setText("");
        setEnabledInputs(false);
        setStatus(message);
        relayout();
    }

    private void setEnabledInputs(boolean on) {
        for (org.eclipse.swt.widgets.Control c : new org.eclipse.swt.widgets.Control[] {gridText, blockText, smemText,
            tryButton, gpuCombo}) {
            c.setEnabled(on);
        }
    }

    private void setStatus(String s) {
        Display d = display();
        if (d == null) {
            return;
        }
        if (Display.getCurrent() == null) {
            d.asyncExec(() -> setStatus(s));
            return;
        }
        if (!status.isDisposed()) {
            status.setText(s);
            status.getParent().layout(new org.eclipse.swt.widgets.Control[] {status});
        }
    }

    private void relayout() {
        body.layout(true, true);
        scroll.setMinSize(body.computeSize(SWT.DEFAULT, SWT.DEFAULT));
    }

    private static String dimsText(long[] d) {
        if (d == null) {
            return "";
        }
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < d.length; i++) {
            if (i > 0) {
                b.append('x');
            }
            b.append(d[i]);
        }
        return b.toString();
    }

    static String fileName(String uri) {
        if (uri == null) {
            return "";
        }
        int slash = uri.lastIndexOf('/');
        return slash >= 0 ? uri.substring(slash + 1) : uri;
    }

    // Read access for the tests (what a person sees).
    String kernelText() {
        return kernelLabel.getText();
    }

    String headlineText() {
        return headline.getText();
    }

    String occupancyText() {
        return occupancy.getText();
    }

    String mwpCwpText() {
        return mwpCwp.getText();
    }

    String powerText() {
        return power.getText() + "\n" + contributions.getText();
    }

    String energyText() {
        return energy.getText();
    }

    String whatIfText() {
        return whatIfResult.getText();
    }

    String statusText() {
        return status.getText();
    }

    int modelRowCount() {
        return models.getTable().getItemCount();
    }

    String[] gpuItems() {
        return gpuCombo.getItems();
    }

    void setLaunchFields(String grid, String block, String smem) {
        gridText.setText(grid);
        blockText.setText(block);
        smemText.setText(smem);
    }
}
