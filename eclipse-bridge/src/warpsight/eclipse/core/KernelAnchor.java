package warpsight.eclipse.core;

import java.util.List;

/**
 * Where the server places a kernel in a document: the line of its code lens (the
 * {@code .entry} line in PTX, the {@code __global__} line in CUDA) and the PTX name that
 * lens's {@code warpsight.openReport} command carries.
 */
public final class KernelAnchor {
    public final int line;
    public final String kernel;
    public final String summary;

    public KernelAnchor(int line, String kernel, String summary) {
        this.line = line;
        this.kernel = kernel;
        this.summary = summary;
    }

    /**
     * The kernel "under the cursor": the last anchor at or above {@code line} (a kernel's
     * body follows its declaration), else the first one. Null when there are none.
     */
    public static KernelAnchor at(List<KernelAnchor> anchors, int line) {
        KernelAnchor best = null;
        KernelAnchor first = null;
        for (KernelAnchor a : anchors) {
            if (first == null || a.line < first.line) {
                first = a;
            }
            if (a.line <= line && (best == null || a.line > best.line)) {
                best = a;
            }
        }
        return best != null ? best : first;
    }

    /**
     * The GPU the lens summary is for, the first of the settings' {@code gpus}: the
     * summary ends in {@code " on GPU-ID"} (docs/lsp-extensions.md, textDocument/codeLens).
     * Null when the summary has no such ending.
     */
    public String primaryGpu() {
        if (summary == null) {
            return null;
        }
        int on = summary.lastIndexOf(" on ");
        if (on < 0) {
            return null;
        }
        String id = summary.substring(on + 4).trim();
        return id.isEmpty() || id.contains(" ") ? null : id;
    }

    @Override
    public String toString() {
        return kernel + "@" + line;
    }
}
