package warpsight.eclipse.core;

import com.google.gson.JsonElement;
import com.google.gson.annotations.SerializedName;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The result of {@code warpsight/kernelReport} and {@code warpsight/whatIf}: the per-file
 * object of {@code warpsight analyze --format json} (docs/cli.md, "analyze --format json";
 * docs/lsp-extensions.md, "Custom requests"). Only the keys the view shows are modelled;
 * keys are stable and unknown ones are ignored, as docs/cli.md asks of tools.
 */
public final class FileReport {
    public String path;
    public String kind;
    public String target;
    @SerializedName("ptx_version")
    public String ptxVersion;
    public List<SyntaxError> errors = new ArrayList<>();
    public List<String> notes = new ArrayList<>();
    @SerializedName("compiler_diagnostics")
    public List<String> compilerDiagnostics = new ArrayList<>();
    @SerializedName("unknown_gpus")
    public List<UnknownGpu> unknownGpus = new ArrayList<>();
    public List<Kernel> kernels = new ArrayList<>();
    /** {@code .cu} documents: where the PTX came from. */
    public String toolchain;

    /** Parses a result; a JSON null (no such document) is an error. */
    public static FileReport fromJson(JsonElement json) {
        if (json == null || json.isJsonNull()) {
            throw new IllegalArgumentException("the server returned no report");
        }
        return JsonRpcConnection.GSON.fromJson(json, FileReport.class);
    }

    /** The kernel with this PTX name, demangled signature or base name; null if none. */
    public Kernel kernel(String name) {
        for (Kernel k : kernels) {
            if (k.name.equals(name) || name.equals(k.demangled) || name.equals(k.baseName())) {
                return k;
            }
        }
        return null;
    }

    public static final class SyntaxError {
        public int line;
        public int column;
        public String severity;
        public String message;
    }

    public static final class UnknownGpu {
        public String id;
        public List<String> closest = new ArrayList<>();
    }

    public static final class Kernel {
        public String name;
        public String demangled;
        @SerializedName("ptx_line")
        public int ptxLine;
        public Registers registers;
        @SerializedName("shared_memory")
        public SharedMemory sharedMemory;
        public Launch launch;
        public List<Finding> findings = new ArrayList<>();
        public List<String> assumptions = new ArrayList<>();
        /**
         * Keyed by GPU id (in the server's key order, not the settings'; the primary GPU
         * is named by the kernel's code lens: {@link KernelAnchor#primaryGpu}).
         */
        public Map<String, Target> gpus = new LinkedHashMap<>();

        /** The unqualified name: {@code matmul} for {@code void ns::matmul(float*, int)}. */
        public String baseName() {
            if (demangled == null) {
                return name;
            }
            String s = demangled;
            int paren = s.indexOf('(');
            if (paren >= 0) {
                s = s.substring(0, paren);
            }
            int space = s.lastIndexOf(' ');
            if (space >= 0) {
                s = s.substring(space + 1);
            }
            int colons = s.lastIndexOf("::");
            if (colons >= 0) {
                s = s.substring(colons + 2);
            }
            return s.isEmpty() ? name : s;
        }

        /** The name a person reads: the demangled signature when there is one. */
        public String displayName() {
            return demangled != null ? demangled : name;
        }
    }

    public static final class Registers {
        @SerializedName("per_thread")
        public int perThread;
        public String source;
        @SerializedName("spill_store_bytes")
        public long spillStoreBytes;
        @SerializedName("spill_load_bytes")
        public long spillLoadBytes;
    }

    public static final class SharedMemory {
        @SerializedName("static_bytes")
        public long staticBytes;
        @SerializedName("dynamic_bytes")
        public long dynamicBytes;
    }

    public static final class Launch {
        public long[] grid;
        public long[] block;
        @SerializedName("dynamic_smem")
        public long dynamicSmem;
        /** {@code setting}, {@code annotation}, {@code call-site} or {@code default}. */
        public String source;
    }

    public static final class Finding {
        public String code;
        public String severity;
        public String message;
        public String gpu;
        @SerializedName("source_line")
        public Integer sourceLine;
        @SerializedName("ptx_line")
        public Integer ptxLine;
    }

    public static final class Target {
        public String gpu;
        public String name;
        @SerializedName("compute_capability")
        public String computeCapability;
        public Occupancy occupancy;
        public Waves waves;
        /** Keyed by model: mwp_cwp, wave, bsp, cgpredict, scheduling, roofline, bottleneck. */
        public Map<String, Prediction> predictions = new LinkedHashMap<>();
        public Headline headline;
        @SerializedName("cannot_predict")
        public String cannotPredict;
        public Power power;
        @SerializedName("energy_uj")
        public Double energyUj;
    }

    public static final class Occupancy {
        @SerializedName("blocks_per_sm")
        public int blocksPerSm;
        @SerializedName("warps_per_sm")
        public int warpsPerSm;
        @SerializedName("max_warps_per_sm")
        public int maxWarpsPerSm;
        /** 0 to 1. */
        public double occupancy;
        public List<String> limiters = new ArrayList<>();
        /** Why the kernel cannot launch; null when it can. */
        public String reason;
        /** Set instead of the numbers when the occupancy could not be computed. */
        public String error;
    }

    public static final class Waves {
        public double waves;
        @SerializedName("blocks_per_wave")
        public long blocksPerWave;
        @SerializedName("last_wave_blocks")
        public long lastWaveBlocks;
        @SerializedName("last_wave_fill")
        public double lastWaveFill;
    }

    public static final class Prediction {
        @SerializedName("time_us")
        public double timeUs;
        public String bound;
        public String confidence;
        public String explanation;
        public Double mwp;
        public Double cwp;
        @SerializedName("below_roofline_floor")
        public boolean belowRooflineFloor;
    }

    public static final class Headline {
        public String model;
        @SerializedName("time_us")
        public double timeUs;
        public String bound;
        public String rule;
    }

    public static final class Power {
        public double watts;
        @SerializedName("base_watts")
        public double baseWatts;
        public String confidence;
        /** Feature or term name to watts (TreeSHAP contributions of a trained model, or the activity model's terms; docs/power.md). */
        public Map<String, Double> contributions = new LinkedHashMap<>();
        @SerializedName("model_gpu")
        public String modelGpu;
        public List<String> notes = new ArrayList<>();
    }
}
