package warpsight.eclipse.core;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The report in words, as the view shows it (the same wording as the server's hover where
 * there is one: docs/lsp-extensions.md, "textDocument/hover").
 */
public final class ReportText {
    private ReportText() {
    }

    /**
     * The power model's features in words (docs/power.md, "Feature definitions"); the
     * same labels as {@code Features::label} in server/power-model/src/features.rs, which
     * a test compares with this table.
     */
    static final Map<String, String> FEATURE_LABELS = new LinkedHashMap<>();

    static {
        String[][] labels = {
            {"inst_issue_cycles", "total work in issue cycles"},
            {"avg_comp_lat", "compute latency"},
            {"avg_glob_lat", "global-memory latency"},
            {"avg_shar_lat", "shared-memory latency"},
            {"branch", "branches per SM"},
            {"comp_inst_kernel", "compute instructions in the code"},
            {"glob_inst_kernel", "global-memory instructions in the code"},
            {"glob_load_sm", "global loads per SM"},
            {"glob_store_sm", "global stores per SM"},
            {"misc_inst_kernel", "other instructions in the code"},
            {"cache_penalty", "L2 cache pressure"},
            {"occupancy", "occupancy"},
            {"reg_thread", "registers per thread"},
            {"shmem_block", "shared memory per block"},
            {"block_size", "block size"},
            {"log2_issue", "total work on a log scale"},
            {"log2_threads", "threads launched"},
            {"frac_comp", "compute share of instructions"},
            {"frac_glob", "global-memory share of instructions"},
            {"frac_shar", "shared-memory share of instructions"},
            {"frac_branch", "branch share of instructions"},
            {"frac_store", "store share of global accesses"},
            {"mean_lat", "mean instruction latency"},
            {"log2_cache_penalty", "L2 cache pressure on a log scale"},
        };
        for (String[] l : labels) {
            FEATURE_LABELS.put(l[0], l[1]);
        }
    }

    /** The display order of the models: the headline's model first, then the papers'. */
    static final List<String> MODEL_ORDER = List.of("bottleneck", "mwp_cwp", "wave", "bsp", "cgpredict", "scheduling", "roofline");

    /** A time from microseconds: {@code 812 ns}, {@code 3.81 µs}, {@code 1.24 ms}, {@code 2.50 s}. */
    public static String time(double us) {
        if (us < 1) {
            return String.format(Locale.ROOT, "%.0f ns", us * 1000);
        }
        if (us < 1000) {
            return String.format(Locale.ROOT, "%.3g µs", us);
        }
        if (us < 1_000_000) {
            return String.format(Locale.ROOT, "%.3g ms", us / 1000);
        }
        return String.format(Locale.ROOT, "%.3g s", us / 1_000_000);
    }

    /** The headline: {@code ≈ 3.81 µs · launch-bound (bottleneck model)}. */
    public static String headline(FileReport.Target t) {
        if (t.cannotPredict != null) {
            return t.cannotPredict;
        }
        if (t.headline == null) {
            return "no time predicted";
        }
        return "≈ " + time(t.headline.timeUs) + " · " + t.headline.bound + "-bound (" + t.headline.model + " model)";
    }

    /** {@code grid 1024×1×1, block 256×1×1, dynamic smem 0 B (default)}. */
    public static String launch(FileReport.Launch l) {
        if (l == null) {
            return "launch unknown";
        }
        String source;
        switch (String.valueOf(l.source)) {
            case "default":
                source = "default: no launch found; add a // warpsight: annotation or try one below";
                break;
            case "call-site":
                source = "from the launch site";
                break;
            case "annotation":
                source = "from the // warpsight: annotation";
                break;
            case "setting":
                source = "from the settings";
                break;
            default:
                source = String.valueOf(l.source);
        }
        return "grid " + dims(l.grid) + ", block " + dims(l.block) + ", dynamic smem " + l.dynamicSmem + " B (" + source + ")";
    }

    static String dims(long[] d) {
        if (d == null) {
            return "?";
        }
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < d.length; i++) {
            if (i > 0) {
                b.append('×');
            }
            b.append(d[i]);
        }
        return b.toString();
    }

    /** {@code 100% (8 blocks/SM, 64/64 warps), limited by warps; 2 waves, last 19% full}. */
    public static String occupancy(FileReport.Target t) {
        FileReport.Occupancy o = t.occupancy;
        if (o == null) {
            return "occupancy unknown";
        }
        if (o.error != null) {
            return "occupancy: " + o.error;
        }
        if (o.reason != null) {
            return "cannot launch: " + o.reason;
        }
        String s = String.format(Locale.ROOT, "%.0f%% (%d blocks/SM, %d/%d warps)", o.occupancy * 100, o.blocksPerSm,
                o.warpsPerSm, o.maxWarpsPerSm);
        if (!o.limiters.isEmpty()) {
            s += ", limited by " + String.join(" and ", o.limiters);
        }
        if (t.waves != null) {
            s += String.format(Locale.ROOT, "; %s wave%s, last wave %.0f%% full", trim(t.waves.waves),
                    t.waves.waves == 1 ? "" : "s", t.waves.lastWaveFill * 100);
        }
        return s;
    }

    /** MWP and CWP (Hong & Kim 2009 via the mwp_cwp model) and what they mean. */
    public static String mwpCwp(FileReport.Target t) {
        FileReport.Prediction p = t.predictions.get("mwp_cwp");
        if (p == null || p.mwp == null || p.cwp == null) {
            return "MWP/CWP not computed";
        }
        // The model's explanation names both and the bound ("memory-bound: MWP 20.6 < CWP 64.0, ...").
        return p.explanation != null ? p.explanation : String.format(Locale.ROOT, "MWP %.1f, CWP %.1f", p.mwp, p.cwp);
    }

    /** {@code ≈ 108 W (low confidence; base 147.8 W)}. */
    public static String power(FileReport.Target t) {
        FileReport.Power p = t.power;
        if (p == null) {
            return "power not predicted";
        }
        return String.format(Locale.ROOT, "≈ %.0f W (%s confidence; base %.1f W%s)", p.watts, p.confidence, p.baseWatts,
                p.modelGpu == null ? "" : "; model trained on " + p.modelGpu);
    }

    /** The largest contributions in words: {@code −14.5 W from other instructions in the code}. */
    public static List<String> powerContributions(FileReport.Target t, int count) {
        List<String> out = new ArrayList<>();
        if (t.power == null) {
            return out;
        }
        List<Map.Entry<String, Double>> entries = new ArrayList<>(t.power.contributions.entrySet());
        entries.sort(Comparator.comparingDouble((Map.Entry<String, Double> e) -> -Math.abs(e.getValue())));
        for (Map.Entry<String, Double> e : entries.subList(0, Math.min(count, entries.size()))) {
            String label = FEATURE_LABELS.getOrDefault(e.getKey(), e.getKey());
            out.add(String.format(Locale.ROOT, "%+.1f W from %s (%s)", e.getValue(), label, e.getKey()));
        }
        return out;
    }

    /** {@code ≈ 409 µJ per launch}. */
    public static String energy(FileReport.Target t) {
        if (t.energyUj == null) {
            return "energy not predicted";
        }
        double uj = t.energyUj;
        String v = uj < 1000 ? String.format(Locale.ROOT, "%.3g µJ", uj)
                : uj < 1e6 ? String.format(Locale.ROOT, "%.3g mJ", uj / 1000) : String.format(Locale.ROOT, "%.3g J", uj / 1e6);
        return "≈ " + v + " per launch (power × headline time)";
    }

    /** The models in display order, each as {model, time, bound, confidence, explanation}. */
    public static List<String[]> modelRows(FileReport.Target t) {
        List<String[]> rows = new ArrayList<>();
        List<String> names = new ArrayList<>(t.predictions.keySet());
        names.sort(Comparator.comparingInt(n -> MODEL_ORDER.indexOf(n) < 0 ? MODEL_ORDER.size() : MODEL_ORDER.indexOf(n)));
        for (String n : names) {
            FileReport.Prediction p = t.predictions.get(n);
            String headline = t.headline != null && n.equals(t.headline.model) ? " ★" : "";
            rows.add(new String[] {n + headline, time(p.timeUs), p.bound, p.confidence,
                p.explanation == null ? "" : p.explanation});
        }
        return rows;
    }

    /** The what-if's effect: {@code 2.10 µs (memory-bound), 45% faster than now (3.81 µs)}. */
    public static String comparison(FileReport.Target now, FileReport.Target tried) {
        if (tried.cannotPredict != null || tried.headline == null) {
            return headline(tried);
        }
        String s = "≈ " + time(tried.headline.timeUs) + " · " + tried.headline.bound + "-bound";
        if (tried.occupancy != null && tried.occupancy.reason == null && tried.occupancy.error == null) {
            s += String.format(Locale.ROOT, ", occupancy %.0f%%", tried.occupancy.occupancy * 100);
        }
        if (now != null && now.headline != null && now.cannotPredict == null && now.headline.timeUs > 0) {
            double ratio = tried.headline.timeUs / now.headline.timeUs;
            String change = ratio < 1 ? String.format(Locale.ROOT, "%.0f%% faster", (1 - ratio) * 100)
                    : ratio > 1 ? String.format(Locale.ROOT, "%.0f%% slower", (ratio - 1) * 100) : "no change";
            s += "; " + change + " than now (" + time(now.headline.timeUs) + ")";
        }
        return s;
    }

    private static String trim(double v) {
        return v == Math.rint(v) ? Long.toString((long) v) : String.format(Locale.ROOT, "%.2f", v);
    }
}
