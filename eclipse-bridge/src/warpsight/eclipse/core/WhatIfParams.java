package warpsight.eclipse.core;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * {@code warpsight/whatIf} params (docs/lsp-extensions.md): the launch and GPU to try
 * instead of the document's settings. A field left null keeps the document's value.
 */
public final class WhatIfParams {
    public String uri;
    public String kernel;
    /** {@code "XxYxZ"}, as the server accepts it. */
    public String grid;
    public String block;
    public Long dynamicSmem;
    public String gpu;

    public WhatIfParams(String uri, String kernel) {
        this.uri = uri;
        this.kernel = kernel;
    }

    /**
     * Parses launch dimensions as a person types them: {@code 256}, {@code 16x16},
     * {@code 64 x 64 x 1} (1 to 3 positive integers below 2^31, separated by x, × or
     * commas). Returns the server's {@code "XxYxZ"} form.
     *
     * @throws IllegalArgumentException naming the problem
     */
    public static String parseDims(String what, String text) {
        String t = text.trim().toLowerCase(Locale.ROOT);
        if (t.isEmpty()) {
            throw new IllegalArgumentException(what + " is empty");
        }
        String[] parts = t.split("\\s*[x×,]\\s*", -1);
        if (parts.length > 3) {
            throw new IllegalArgumentException(what + " has more than three dimensions: " + text);
        }
        List<String> dims = new ArrayList<>();
        for (String p : parts) {
            long v;
            try {
                v = Long.parseLong(p);
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(what + ": '" + p + "' is not a whole number (write e.g. 16x16)");
            }
            if (v < 1 || v > Integer.MAX_VALUE) {
                throw new IllegalArgumentException(what + ": " + v + " is outside 1.." + Integer.MAX_VALUE);
            }
            dims.add(Long.toString(v));
        }
        while (dims.size() < 3) {
            dims.add("1");
        }
        return String.join("x", dims);
    }

    /** Parses a byte count (0 to 2^32 − 1, the server's range for dynamic shared memory). */
    public static long parseBytes(String what, String text) {
        String t = text.trim();
        long v;
        try {
            v = Long.parseLong(t);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(what + ": '" + t + "' is not a whole number of bytes");
        }
        if (v < 0 || v > 0xFFFF_FFFFL) {
            throw new IllegalArgumentException(what + ": " + v + " is outside 0..4294967295");
        }
        return v;
    }
}
