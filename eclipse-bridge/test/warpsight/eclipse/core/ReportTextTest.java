package warpsight.eclipse.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

class ReportTextTest {
    @Test
    void featureLabelsAreTheServers() throws Exception {
        // Features::label in the power model crate is the source of these words.
        String rust = Files.readString(Fixtures.repo().resolve("server/power-model/src/features.rs"));
        int start = rust.indexOf("pub fn label(");
        int end = rust.indexOf("_ => return None", start);
        assertTrue(start > 0 && end > start, "Features::label found in features.rs");
        Map<String, String> fromRust = new LinkedHashMap<>();
        Matcher m = Pattern.compile("\"([a-z0-9_]+)\" => \"([^\"]+)\"").matcher(rust.substring(start, end));
        while (m.find()) {
            fromRust.put(m.group(1), m.group(2));
        }
        assertEquals(24, fromRust.size(), "the 24 features of docs/power.md");
        assertEquals(fromRust, ReportText.FEATURE_LABELS);
    }

    @Test
    void timesInTheirUnit() {
        assertEquals("812 ns", ReportText.time(0.812));
        assertEquals("3.81 µs", ReportText.time(3.8071));
        assertEquals("1.24 ms", ReportText.time(1240));
        assertEquals("2.50 s", ReportText.time(2.5e6));
    }

    @Test
    void contributionsLargestFirstInWords() {
        FileReport.Target t = new FileReport.Target();
        t.power = new FileReport.Power();
        t.power.contributions.put("frac_store", -0.03);
        t.power.contributions.put("misc_inst_kernel", -14.48);
        t.power.contributions.put("log2_threads", 2.85);
        t.power.contributions.put("inst_issue_cycles", 5.4);
        assertEquals(List.of("-14.5 W from other instructions in the code (misc_inst_kernel)",
                "+5.4 W from total work in issue cycles (inst_issue_cycles)",
                "+2.9 W from threads launched (log2_threads)"), ReportText.powerContributions(t, 3));
    }

    @Test
    void whatIfComparison() {
        FileReport.Target now = target(4.0, "memory");
        FileReport.Target faster = target(3.0, "memory");
        assertEquals("≈ 3.00 µs · memory-bound; 25% faster than now (4.00 µs)", ReportText.comparison(now, faster));
        assertEquals("≈ 8.00 µs · issue-bound; 100% slower than now (4.00 µs)", ReportText.comparison(now, target(8.0, "issue")));
        FileReport.Target none = new FileReport.Target();
        none.cannotPredict = "cannot predict: absurd counts";
        assertEquals("cannot predict: absurd counts", ReportText.comparison(now, none));
    }

    private static FileReport.Target target(double us, String bound) {
        FileReport.Target t = new FileReport.Target();
        t.headline = new FileReport.Headline();
        t.headline.timeUs = us;
        t.headline.bound = bound;
        t.headline.model = "bottleneck";
        return t;
    }

    @Test
    void launchDimensionsAsTyped() {
        assertEquals("256x1x1", WhatIfParams.parseDims("block", "256"));
        assertEquals("16x16x1", WhatIfParams.parseDims("block", " 16 x 16 "));
        assertEquals("64x64x2", WhatIfParams.parseDims("grid", "64×64×2"));
        assertEquals("8x4x1", WhatIfParams.parseDims("grid", "8,4"));
        for (String bad : new String[] {"", "0", "-1", "1x2x3x4", "16xx16", "abc", "4294967296"}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> WhatIfParams.parseDims("block", bad), bad);
            assertTrue(e.getMessage().startsWith("block"), e.getMessage());
        }
        assertEquals(4096, WhatIfParams.parseBytes("smem", "4096"));
        assertThrows(IllegalArgumentException.class, () -> WhatIfParams.parseBytes("smem", "4294967296"));
        assertThrows(IllegalArgumentException.class, () -> WhatIfParams.parseBytes("smem", "-1"));
    }

    @Test
    void kernelUnderTheCursor() {
        List<KernelAnchor> anchors = List.of(new KernelAnchor(10, "a", ""), new KernelAnchor(26, "b", ""));
        assertEquals("a", KernelAnchor.at(anchors, 0).kernel, "above every kernel: the first");
        assertEquals("a", KernelAnchor.at(anchors, 10).kernel);
        assertEquals("a", KernelAnchor.at(anchors, 25).kernel);
        assertEquals("b", KernelAnchor.at(anchors, 26).kernel);
        assertEquals("b", KernelAnchor.at(anchors, 400).kernel);
        assertEquals(null, KernelAnchor.at(List.of(), 3));
    }
}
