package warpsight.eclipse.ui;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.eclipse.swt.SWT;
import org.eclipse.swt.graphics.GC;
import org.eclipse.swt.graphics.Image;
import org.eclipse.swt.graphics.ImageData;
import org.eclipse.swt.graphics.ImageLoader;
import org.eclipse.swt.graphics.Point;
import org.eclipse.swt.layout.FillLayout;
import org.eclipse.swt.widgets.Display;
import org.eclipse.swt.widgets.Shell;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import warpsight.eclipse.core.Fixtures;
import warpsight.eclipse.core.GpuCatalog;
import warpsight.eclipse.core.SyncingReportSource;
import warpsight.eclipse.core.WarpsightClient;

/**
 * The view's real class in an SWT shell (under Xvfb: scripts/test-eclipse.sh), populated
 * from the real server, and saved as a screenshot (target/eclipse/gpu-performance-view.png).
 */
class GpuPerformanceViewTest {
    @TempDir
    Path dir;
    Display display;
    Shell shell;
    WarpsightClient client;

    @BeforeEach
    void open() {
        display = Display.getDefault();
        shell = new Shell(display);
        shell.setText("GPU Performance — warpsight");
        shell.setLayout(new FillLayout());
        shell.setSize(980, 860);
    }

    @AfterEach
    void close() {
        if (client != null) {
            client.close();
        }
        shell.dispose();
    }

    /** Runs the event loop until {@code f} completes (the view updates on this thread). */
    private void pump(CompletableFuture<?> f, Duration timeout) throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!f.isDone()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("the view did not update within " + timeout + "; server log:\n" + client.stderrTail());
            }
            if (!display.readAndDispatch()) {
                Thread.sleep(10);
            }
        }
        f.get();
        while (display.readAndDispatch()) {
            // settle layout and paint
        }
    }

    @Test
    void populatedFromTheServerWithWhatIfAndAScreenshot() throws Exception {
        Path cu = Fixtures.example(dir, "reduce.cu");
        String uri = Fixtures.uri(cu);
        client = Fixtures.start(dir, Map.of("gpus", List.of("a100", "tesla-k20"), "debounceMs", 0));
        SyncingReportSource source = new SyncingReportSource(client);
        String[] text = {Files.readString(cu)};
        source.track(uri, () -> text[0]);

        GpuPerformanceView view = new GpuPerformanceView();
        view.createPartControl(shell);
        view.setReportSource(source);
        view.setGpuCatalog(GpuCatalog.load(Fixtures.server(), Fixtures.TIMEOUT));
        shell.open();

        List<String> lines = Files.readAllLines(cu);
        int shuffleLine = -1;
        for (int i = 0; i < lines.size(); i++) {
            if (lines.get(i).contains("__global__ void reduce_shuffle(")) {
                shuffleLine = i;
            }
        }
        // The cursor inside reduce_shuffle's body selects it, not reduce_shared above it.
        pump(view.showKernelAt(uri, shuffleLine + 4), Fixtures.TIMEOUT);
        assertTrue(view.kernelText().contains("reduce_shuffle"), "kernel: " + view.kernelText() + " / " + view.statusText());
        assertTrue(view.headlineText().startsWith("NVIDIA A100"), view.headlineText());
        assertTrue(view.headlineText().contains("-bound ("), view.headlineText());
        assertTrue(view.occupancyText().contains("limited by"), view.occupancyText());
        assertTrue(view.mwpCwpText().matches(".*MWP [0-9.]+ [<>=]+ CWP [0-9.]+.*"), view.mwpCwpText());
        assertEquals(7, view.modelRowCount(), "the bottleneck model and the six paper models");
        assertTrue(view.powerText().contains(" W from "), view.powerText());
        assertTrue(view.energyText().contains("J per launch"), view.energyText());
        String[] gpus = view.gpuItems();
        assertTrue(gpus.length > 50, "the report's GPUs and the database: " + gpus.length);
        assertTrue(gpus[0].startsWith("a100-sxm4-80gb"), gpus[0]);

        // A GPU of the database that is not in the report: computed with warpsight/whatIf.
        pump(view.selectGpu("rtx-4090"), Fixtures.TIMEOUT);
        assertTrue(view.headlineText().startsWith("NVIDIA GeForce RTX 4090"), view.headlineText());
        assertTrue(view.statusText().contains("rtx-4090"), view.statusText());
        pump(view.selectGpu("a100-sxm4-80gb"), Fixtures.TIMEOUT);
        assertTrue(view.statusText().startsWith("reduce.cu · 1 kernel(s)"), view.statusText());

        // The what-if of the launch configuration: the same threads in blocks of 128.
        view.setLaunchFields("131072", "128", "0");
        pump(view.runWhatIf(), Fixtures.TIMEOUT);
        assertTrue(view.whatIfText().contains("than now") || view.whatIfText().contains("no change"), view.whatIfText());
        assertTrue(view.whatIfText().startsWith("grid 131072×1×1, block 128×1×1"), view.whatIfText());

        // Bad input is refused in words, with no request.
        view.setLaunchFields("131072", "16xx16", "0");
        pump(view.runWhatIf(), Fixtures.TIMEOUT);
        assertTrue(view.whatIfText().startsWith("block:"), view.whatIfText());
        view.setLaunchFields("131072", "128", "0");
        pump(view.runWhatIf(), Fixtures.TIMEOUT);

        Path png = Fixtures.out().resolve("gpu-performance-view.png");
        screenshot(png);
        ImageData saved = new ImageLoader().load(png.toString())[0];
        assertEquals(shell.getSize().x, saved.width);
        assertTrue(distinctColours(saved) > 8, "the screenshot shows more than a blank window");
    }

    @Test
    void anEditRefreshesTheReport() throws Exception {
        // PTX: the edit changes the kernel with no compiler involved.
        Path ptx = Fixtures.example(dir, "vadd.ptx");
        String uri = Fixtures.uri(ptx);
        client = Fixtures.start(dir, Map.of("debounceMs", 0));
        SyncingReportSource source = new SyncingReportSource(client);
        String[] text = {Files.readString(ptx)};
        source.track(uri, () -> text[0]);
        GpuPerformanceView view = new GpuPerformanceView();
        view.createPartControl(shell);
        view.setReportSource(source);
        pump(view.showKernelAt(uri, 20), Fixtures.TIMEOUT);
        assertEquals("vadd(float const*, float const*, float*, int)", view.kernelText(), view.statusText());
        // The editor tracker calls refresh() when typing pauses; the source sends the new text.
        text[0] = text[0].replace("_Z4vaddPKfS0_Pfi", "_Z5vadd2PKfS0_Pfi");
        pump(view.refresh(), Fixtures.TIMEOUT);
        assertEquals("vadd2(float const*, float const*, float*, int)", view.kernelText(), view.statusText());
    }

    @Test
    void aFileWithoutKernelsSaysSo() throws Exception {
        Path ptx = dir.resolve("empty.ptx");
        Files.writeString(ptx, ".version 8.0\n.target sm_80\n.address_size 64\n");
        String uri = Fixtures.uri(ptx);
        client = Fixtures.start(dir, Map.of("debounceMs", 0));
        SyncingReportSource source = new SyncingReportSource(client);
        source.track(uri, () -> {
            try {
                return Files.readString(ptx);
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        });
        GpuPerformanceView view = new GpuPerformanceView();
        view.createPartControl(shell);
        view.setReportSource(source);
        pump(view.showKernelAt(uri, 0), Fixtures.TIMEOUT);
        assertTrue(view.statusText().startsWith("no kernel in empty.ptx"), view.statusText());
        assertEquals("—", view.kernelText());
        assertFalse(view.headlineText().contains("µs"));
    }

    @Test
    void aServerThatIsGoneIsShownAsAnError() throws Exception {
        Path ptx = Fixtures.example(dir, "vadd.ptx");
        String uri = Fixtures.uri(ptx);
        client = Fixtures.start(dir, null);
        SyncingReportSource source = new SyncingReportSource(client);
        source.track(uri, () -> "");
        assertEquals(0, client.shutdown(Fixtures.TIMEOUT));
        GpuPerformanceView view = new GpuPerformanceView();
        view.createPartControl(shell);
        view.setReportSource(source);
        pump(view.showKernelAt(uri, 0), Fixtures.TIMEOUT);
        assertTrue(view.statusText().startsWith("warpsight: "), view.statusText());
        assertEquals("—", view.kernelText());
    }

    private void screenshot(Path png) {
        Point size = shell.getSize();
        Image image = new Image(display, size.x, size.y);
        // Control.print draws the widgets into the image; where the platform cannot, the
        // screen area of the shell is copied instead (the X server of Xvfb).
        GC gc = new GC(image);
        boolean printed;
        try {
            printed = shell.print(gc);
        } finally {
            gc.dispose();
        }
        if (!printed) {
            GC screen = new GC(display);
            try {
                Point at = shell.getLocation();
                screen.copyArea(image, at.x, at.y);
            } finally {
                screen.dispose();
            }
        }
        ImageLoader loader = new ImageLoader();
        loader.data = new ImageData[] {image.getImageData()};
        loader.save(png.toString(), SWT.IMAGE_PNG);
        image.dispose();
    }

    private static int distinctColours(ImageData d) {
        Set<Integer> seen = new HashSet<>();
        int[] row = new int[d.width];
        for (int y = 0; y < d.height; y += 4) {
            d.getPixels(0, y, d.width, row, 0);
            Arrays.stream(row).forEach(seen::add);
        }
        return seen.size();
    }
}
