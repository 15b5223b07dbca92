//! The report page's charts, drawn in the webview with Apache ECharts (loaded before this
//! script from the extension's `media/echarts.min.js`; SVG renderer, so the charts are
//! elements a test and a screen reader can find).
//!
//! Input: the JSON in `#warpsight-charts`, one object per kernel mapping a GPU id to
//! `{ name, charts }`, where `charts` is the server's chart data (`analysis::charts`,
//! docs/cli.md § charts). Each `.chart[data-kind][data-kernel][data-gpu]` element gets its
//! chart. Colours come from the editor's theme (VS Code's `--vscode-charts-*` and
//! foreground variables), and every chart is redrawn when the theme changes (VS Code swaps
//! the body's `vscode-light` / `vscode-dark` / `vscode-high-contrast` class) or the panel is
//! resized. Text reaches the page only through ECharts (SVG text nodes), never as HTML.

/// <reference types="echarts" />

type Json = Record<string, unknown>;

interface OccupancyPoint {
  block_size: number;
  occupancy: number;
  limiters: string[];
}
interface OccupancyChart {
  points: OccupancyPoint[];
  current_block_size: number;
  current_occupancy: number;
  current_limiters: string[];
  best_block_size: number | null;
}
interface RooflineChart {
  peak_gops: number;
  bandwidth_gbs: number;
  ridge: number;
  kernel: { intensity: number; achieved_gops: number; fp32_ops: number; dram_bytes: number } | null;
  note: string;
}
interface TimeBreakdown {
  model: string;
  total_us: number;
  total_text: string;
  bound: string;
  parts: { key: string; label: string; us: number; text: string }[];
}
interface PowerWaterfall {
  base_watts: number;
  /** What the base is: the trained model's average kernel, or the idle board. */
  base_label?: string;
  total_watts: number;
  steps: { feature: string; label: string; watts: number }[];
  model_gpu: string;
}

/** The theme's colours, read from VS Code's CSS variables on every draw. */
interface Palette {
  fg: string;
  dim: string;
  lines: string;
  blue: string;
  red: string;
  green: string;
  orange: string;
  purple: string;
  font: string;
}

function palette(): Palette {
  const css = getComputedStyle(document.body);
  const v = (name: string, fallback: string) => css.getPropertyValue(name).trim() || fallback;
  const fg = v("--vscode-foreground", "#cccccc");
  return {
    fg,
    dim: v("--vscode-descriptionForeground", fg),
    lines: v("--vscode-charts-lines", "#80808080"),
    blue: v("--vscode-charts-blue", "#3794ff"),
    red: v("--vscode-charts-red", "#f14c4c"),
    green: v("--vscode-charts-green", "#89d185"),
    orange: v("--vscode-charts-orange", "#d18616"),
    purple: v("--vscode-charts-purple", "#b180d7"),
    font: v("--vscode-font-family", "sans-serif"),
  };
}

/** `shared_memory` → `shared memory`; several joined with `+`. */
function limiterWords(l: string[]): string {
  return l.length > 0 ? l.map((x) => x.replace(/_/g, " ")).join(" + ") : "nothing";
}

/** A number with three significant figures, for axes and labels: `1.5k`, `9.75T`, `0.25`. */
function sig3(x: number): string {
  if (!Number.isFinite(x)) return "—";
  const a = Math.abs(x);
  for (const [size, unit] of [
    [1e12, "T"],
    [1e9, "G"],
    [1e6, "M"],
    [1e3, "k"],
  ] as const) {
    if (a >= size) return `${Number((x / size).toPrecision(3))}${unit}`;
  }
  return String(Number(x.toPrecision(3)));
}

/** Options every chart shares: fonts, colours, title block, grid. */
function base(p: Palette, title: string, subtitle: string, width = 320): Record<string, unknown> {
  return {
    backgroundColor: "transparent",
    textStyle: { color: p.fg, fontFamily: p.font },
    animation: false,
    title: {
      text: title,
      subtext: subtitle,
      left: 8,
      top: 4,
      textStyle: { color: p.fg, fontSize: 13, fontWeight: "bold", fontFamily: p.font },
      subtextStyle: { color: p.dim, fontSize: 11, fontFamily: p.font, width: Math.max(width - 24, 120), overflow: "truncate" },
    },
    grid: { left: 56, right: 24, top: 74, bottom: 44, containLabel: false },
    tooltip: { confine: true },
  };
}

function axis(p: Palette, extra: Record<string, unknown>): Record<string, unknown> {
  return {
    nameTextStyle: { color: p.dim },
    axisLine: { lineStyle: { color: p.lines } },
    axisLabel: { color: p.dim },
    splitLine: { lineStyle: { color: p.lines, opacity: 0.35 } },
    ...extra,
  };
}

function occupancyOption(p: Palette, c: OccupancyChart, w: number): Record<string, unknown> {
  const cur = c.current_block_size;
  const pct = Math.round(c.current_occupancy * 100);
  const best = c.best_block_size;
  const bestPoint = c.points.find((x) => x.block_size === best);
  const hint =
    best !== null && bestPoint !== undefined && bestPoint.occupancy > c.current_occupancy
      ? `; ${Math.round(bestPoint.occupancy * 100)} % from ${best} threads`
      : "";
  const max = c.points.length > 0 ? c.points[c.points.length - 1].block_size : 1024;
  return {
    ...base(p, "Occupancy against block size", `${cur} threads: ${pct} %, limited by ${limiterWords(c.current_limiters)}${hint}`, w),
    xAxis: axis(p, { type: "value", name: "threads per block", nameLocation: "middle", nameGap: 26, min: 0, max, interval: max > 512 ? 128 : 64 }),
    // No axis name at the top: the launch's mark is labelled there; the ticks say "%".
    yAxis: axis(p, { type: "value", min: 0, max: 100, axisLabel: { color: p.dim, formatter: "{value} %" } }),
    tooltip: {
      trigger: "axis",
      confine: true,
      formatter: (params: unknown) => {
        const first = (Array.isArray(params) ? params[0] : params) as { data?: [number, number, string] };
        const d = first.data;
        return d ? `${d[0]} threads: ${Math.round(d[1])} %, limited by ${d[2]}` : "";
      },
    },
    series: [
      {
        name: "occupancy",
        type: "line",
        step: "end",
        showSymbol: false,
        lineStyle: { color: p.blue, width: 2 },
        areaStyle: { color: p.blue, opacity: 0.12 },
        data: c.points.map((x) => [x.block_size, x.occupancy * 100, limiterWords(x.limiters)]),
        markLine: {
          symbol: "none",
          silent: true,
          lineStyle: { color: p.orange, type: "dashed" },
          label: { color: p.orange, formatter: "this launch", position: "end" },
          data: [{ xAxis: cur }],
        },
        markPoint: {
          symbol: "circle",
          symbolSize: 10,
          itemStyle: { color: p.orange },
          label: { show: false },
          data: [{ name: "this launch", coord: [cur, c.current_occupancy * 100] }],
        },
      },
    ],
  };
}

function rooflineOption(p: Palette, c: RooflineChart, w: number): Record<string, unknown> {
  const k = c.kernel;
  const lo = Math.min(c.ridge / 64, k ? k.intensity / 4 : Infinity);
  const hi = Math.max(c.ridge * 16, k ? k.intensity * 4 : 0);
  // Decade bounds keep the log axes readable.
  const xmin = Math.pow(10, Math.floor(Math.log10(lo)));
  const xmax = Math.pow(10, Math.ceil(Math.log10(hi)));
  const roof = [
    [xmin, xmin * c.bandwidth_gbs],
    [c.ridge, c.peak_gops],
    [xmax, c.peak_gops],
  ];
  const ymin = Math.pow(10, Math.floor(Math.log10(Math.min(xmin * c.bandwidth_gbs, k ? k.achieved_gops / 2 : Infinity))));
  const ymax = Math.pow(10, Math.ceil(Math.log10(c.peak_gops * 2)));
  const sub = k
    ? `${sig3(k.intensity)} op/B at ${sig3(k.achieved_gops)} GOP/s (${Math.round((100 * k.achieved_gops) / Math.min(c.peak_gops, k.intensity * c.bandwidth_gbs))} % of the roof)`
    : c.note;
  return {
    ...base(p, "Roofline (FP32)", sub, w),
    xAxis: axis(p, { type: "log", name: "FP32 ops per DRAM byte", nameLocation: "middle", nameGap: 26, min: xmin, max: xmax, axisLabel: { color: p.dim, formatter: sig3 } }),
    yAxis: axis(p, { type: "log", name: "GOP/s", min: ymin, max: ymax, axisLabel: { color: p.dim, formatter: sig3 } }),
    tooltip: { trigger: "item", confine: true },
    series: [
      {
        name: "roof",
        type: "line",
        showSymbol: false,
        silent: true,
        lineStyle: { color: p.fg, width: 2 },
        data: roof,
        markPoint: {
          symbol: "none",
          label: { color: p.dim, formatter: `${sig3(c.peak_gops)} GOP/s · ${sig3(c.bandwidth_gbs)} GB/s`, position: "top" },
          data: [{ coord: [c.ridge, c.peak_gops] }],
        },
      },
      ...(k
        ? [
            {
              name: "this kernel",
              type: "scatter",
              symbolSize: 12,
              itemStyle: { color: p.orange },
              label: { show: true, position: "right", color: p.orange, formatter: "this kernel" },
              tooltip: { formatter: () => `${sig3(k.fp32_ops)} FP32 ops, ${sig3(k.dram_bytes)} DRAM bytes: ${sig3(k.intensity)} op/B, ${sig3(k.achieved_gops)} GOP/s` },
              data: [[k.intensity, k.achieved_gops]],
            },
          ]
        : []),
    ],
  };
}

function timeOption(p: Palette, c: TimeBreakdown, w: number): Record<string, unknown> {
  const parts = c.parts;
  const maxLabel = Math.max(...parts.map((x) => x.label.length), 6);
  return {
    ...base(p, `Where the time goes (${c.model})`, `≈ ${c.total_text}, ${c.bound}-bound; each bar alone, the model overlaps them`, w),
    grid: { left: Math.min(20 + maxLabel * 7, 150), right: 70, top: 84, bottom: 44 },
    // The axis reaches past the prediction, so its mark is always drawn.
    xAxis: axis(p, {
      type: "value",
      name: "µs",
      nameLocation: "middle",
      nameGap: 26,
      max: (v: { max: number }) => Math.max(v.max, c.total_us) * 1.08,
      axisLabel: { color: p.dim, formatter: sig3, hideOverlap: true },
    }),
    yAxis: axis(p, { type: "category", inverse: true, data: parts.map((x) => x.label), axisLabel: { color: p.fg } }),
    tooltip: { trigger: "item", confine: true, formatter: (x: { dataIndex: number }) => `${parts[x.dataIndex].label}: ${parts[x.dataIndex].text}` },
    series: [
      {
        name: "time",
        type: "bar",
        barMaxWidth: 22,
        data: parts.map((x, i) => ({ value: x.us, itemStyle: { color: i === 0 ? p.purple : p.blue } })),
        label: { show: true, position: "right", color: p.fg, formatter: (x: { dataIndex: number }) => parts[x.dataIndex].text },
        markLine: {
          symbol: "none",
          silent: true,
          lineStyle: { color: p.orange, type: "dashed" },
          // The category axis runs top to bottom (inverse), so the line's start is its top.
          label: { color: p.orange, formatter: `predicted ${c.total_text}`, position: "start" },
          data: [{ xAxis: c.total_us }],
        },
      },
    ],
  };
}

function powerOption(p: Palette, c: PowerWaterfall, w: number): Record<string, unknown> {
  // Rows: the base, each step, the total. A transparent bar carries each step to where
  // the running sum was; the axis starts below the lowest point so small steps show.
  const labels = [c.base_label ?? "model's average kernel", ...c.steps.map((s) => s.label), "this kernel"];
  const offsets: number[] = [];
  const sizes: { value: number; itemStyle: { color: string }; text: string }[] = [];
  let run = c.base_watts;
  const lows = [c.base_watts, c.total_watts];
  for (const s of c.steps) {
    const next = run + s.watts;
    lows.push(Math.min(run, next));
    run = next;
  }
  // The axis starts a little below the lowest running sum: steps of a few watts on a base
  // of 150 W stay visible, and base and total bars still read as levels.
  const highs = [c.base_watts, c.total_watts, ...lows];
  const span = Math.max(...highs) - Math.min(...lows);
  const floor = Math.max(0, Math.floor(Math.min(...lows) - Math.max(span * 0.6, 2)));
  offsets.push(floor);
  sizes.push({ value: c.base_watts - floor, itemStyle: { color: p.blue }, text: `${c.base_watts.toFixed(1)} W` });
  run = c.base_watts;
  for (const s of c.steps) {
    const next = run + s.watts;
    offsets.push(Math.min(run, next));
    sizes.push({
      value: Math.abs(s.watts),
      itemStyle: { color: s.watts >= 0 ? p.red : p.green },
      text: `${s.watts >= 0 ? "+" : "−"}${Math.abs(s.watts).toFixed(1)} W`,
    });
    run = next;
  }
  offsets.push(floor);
  sizes.push({ value: c.total_watts - floor, itemStyle: { color: p.purple }, text: `${c.total_watts.toFixed(1)} W` });
  const maxLabel = Math.max(...labels.map((l) => l.length));
  return {
    ...base(p, "Power waterfall", `≈ ${Math.round(c.total_watts)} W (estimate, ${c.model_gpu} model), from its average kernel to this one`, w),
    grid: { left: Math.min(20 + maxLabel * 6.5, 0.45 * w), right: 64, top: 74, bottom: 44 },
    xAxis: axis(p, {
      type: "value",
      name: "W",
      nameLocation: "middle",
      nameGap: 26,
      min: floor,
      max: (v: { max: number }) => Math.ceil(v.max + Math.max(span * 0.15, 1)),
      splitNumber: 3,
      axisLabel: { color: p.dim, hideOverlap: true },
    }),
    yAxis: axis(p, { type: "category", inverse: true, data: labels, axisLabel: { color: p.fg, width: Math.min(200, 0.45 * w - 12), overflow: "truncate" } }),
    tooltip: { trigger: "item", confine: true, formatter: (x: { dataIndex: number }) => `${labels[x.dataIndex]}: ${sizes[x.dataIndex].text}` },
    series: [
      // Stacked bars start at 0: the transparent one reaches the step's start (the axis
      // hides what lies below its minimum), the visible one is the step.
      { name: "offset", type: "bar", stack: "w", silent: true, itemStyle: { color: "transparent" }, data: offsets, barMaxWidth: 18 },
      {
        name: "watts",
        type: "bar",
        stack: "w",
        barMaxWidth: 18,
        data: sizes.map(({ value, itemStyle }) => ({ value, itemStyle })),
        label: { show: true, position: "right", color: p.fg, formatter: (x: { dataIndex: number }) => sizes[x.dataIndex].text },
      },
    ],
  };
}

const builders: Record<string, (p: Palette, c: never, width: number) => Record<string, unknown>> = {
  occupancy: occupancyOption,
  roofline: rooflineOption,
  time_breakdown: timeOption,
  power: powerOption,
};

type Chart = ReturnType<typeof echarts.init>;
let drawn: Chart[] = [];

function draw(): void {
  for (const c of drawn) c.dispose();
  drawn = [];
  const source = document.getElementById("warpsight-charts");
  let data: Json[] = [];
  try {
    data = JSON.parse(source?.textContent ?? "[]") as Json[];
  } catch {
    return;
  }
  const p = palette();
  for (const el of Array.from(document.querySelectorAll<HTMLElement>(".chart[data-kind]"))) {
    const kind = el.dataset.kind ?? "";
    const gpu = (data[Number(el.dataset.kernel)] ?? {})[el.dataset.gpu ?? ""] as Json | undefined;
    const spec = (gpu?.charts as Json | undefined)?.[kind];
    const build = builders[kind];
    if (spec === undefined || spec === null || build === undefined) continue;
    try {
      const chart = echarts.init(el, undefined, { renderer: "svg" });
      chart.setOption(build(p, spec as never, el.clientWidth));
      el.dataset.drawn = "true";
      drawn.push(chart);
    } catch (e) {
      el.textContent = `chart failed: ${String(e)}`;
    }
  }
  lastPalette = JSON.stringify(p);
}

let lastPalette = "";
let pending: number | undefined;
/** Redraws when the theme's colours changed: VS Code swaps the body's class and the CSS
 * variables on the root element in separate steps, so wait for both to settle. */
function redrawIfThemeChanged(): void {
  if (pending !== undefined) window.clearTimeout(pending);
  pending = window.setTimeout(() => {
    pending = undefined;
    if (JSON.stringify(palette()) !== lastPalette) draw();
  }, 60);
}

draw();
const observer = new MutationObserver(redrawIfThemeChanged);
observer.observe(document.body, { attributes: true, attributeFilter: ["class"] });
observer.observe(document.documentElement, { attributes: true, attributeFilter: ["style", "class"] });
window.addEventListener("resize", () => {
  for (const c of drawn) c.resize();
});
