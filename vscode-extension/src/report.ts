//! The kernel report panel: a webview that shows the result of `warpsight/kernelReport`.
//!
//! The server computes everything, the chart data included (`charts` per GPU,
//! docs/lsp-extensions.md); this file lays it out. Per kernel and GPU: the headline (time as
//! the server rounds it, bound, occupancy, power, energy), four charts drawn by
//! `webview/charts.ts` with Apache ECharts (bundled in the extension under `media/`, no
//! network): occupancy against block size, the roofline, where the headline model's time
//! goes, and the power waterfall; then the models (the paper models as a secondary table
//! that says what they are) and the findings.
//!
//! Safety: every server string in the HTML goes through `esc`; the chart data goes to the
//! page as JSON inside a `<script type="application/json">` element with `<` escaped, and
//! the chart script writes text only through ECharts (SVG text nodes). The page's
//! Content-Security-Policy allows only the extension's own scripts, with a nonce.

import * as crypto from "node:crypto";
import * as vscode from "vscode";

export interface ReportTarget {
  uri: string;
  kernel?: string;
}

/** Where the page's scripts come from and what the CSP allows. */
export interface PageAssets {
  cspSource: string;
  echartsUri: string;
  chartsUri: string;
  nonce: string;
}

type Json = Record<string, unknown>;

/** Escapes text for HTML element content and attribute values. */
export function esc(value: unknown): string {
  return String(value)
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&#39;");
}

function obj(v: unknown): Json | undefined {
  return typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Json) : undefined;
}

function arr(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}

function num(v: unknown): number | undefined {
  return typeof v === "number" && Number.isFinite(v) ? v : undefined;
}

/** The server's rounded text of a time (`time_text`), or a dash. */
function timeText(p: Json | undefined): string {
  return typeof p?.time_text === "string" ? p.time_text : "—";
}

/** `shared_memory` → `shared memory`. */
function words(v: unknown): string {
  return String(v).replace(/_/g, " ");
}

/** How far apart the models are: the largest over the smallest positive time. */
function spread(preds: Json): number | undefined {
  const times = Object.values(preds)
    .map((p) => num(obj(p)?.time_us))
    .filter((t): t is number => t !== undefined && t > 0);
  if (times.length < 2) return undefined;
  return Math.max(...times) / Math.min(...times);
}

function modelsSection(t: Json): string {
  const preds = obj(t.predictions);
  const head = obj(t.headline);
  if (preds === undefined || head === undefined) return "";
  const headModel = String(head.model ?? "");
  const main = obj(preds[headModel]);
  const row = (model: string, pj: Json) =>
    `<tr><td>${esc(model)}</td><td class="num">${esc(timeText(pj))}${pj.below_roofline_floor === true ? " ⚠" : ""}</td>` +
    `<td>${esc(pj.bound ?? "")}</td><td>${esc(pj.confidence ?? "")}</td><td>${esc(pj.explanation ?? "")}</td></tr>`;
  const others = Object.entries(preds).filter(([m]) => m !== headModel);
  const na = Object.entries(obj(head.not_applicable) ?? {});
  const s = spread(preds);
  const disagree = s !== undefined && s >= 2;
  const table =
    `<table class="models"><thead><tr><th>model</th><th>time</th><th>bound</th><th>confidence</th><th>why</th></tr></thead><tbody>` +
    others.map(([m, p]) => row(m, obj(p) ?? {})).join("") +
    na.map(([m, why]) => `<tr class="dim"><td>${esc(m)}</td><td colspan="4">not applicable: ${esc(why)}</td></tr>`).join("") +
    `</tbody></table>`;
  const explain =
    `<p class="dim">The headline is <code>${esc(headModel)}</code> (${esc(head.rule ?? "")}). ` +
    `The others are published models reimplemented with their papers' parameters (docs/models.md): context for the headline, not predictions to average` +
    (disagree ? `; here they disagree by ${esc(Math.round(s))}× between the fastest and the slowest.` : ".") +
    `</p>`;
  return (
    `<div class="headline-model">${main ? `<p><b>why</b> <span class="dim">(${esc(headModel)})</span>: ${esc(main.explanation ?? "")}</p>` : ""}</div>` +
    (disagree
      ? `<h4 class="paper-models">Paper models</h4>${explain}${table}`
      : `<details class="paper-models"><summary>Paper models</summary>${explain}${table}</details>`)
  );
}

function gpuSection(ki: number, id: string, t: Json): string {
  const parts: string[] = [];
  const head = obj(t.headline);
  const occ = obj(t.occupancy);
  const power = obj(t.power);
  const facts: string[] = [];
  if (head !== undefined) facts.push(`<b class="time">≈ ${esc(timeText(head))}</b>`, `${esc(head.bound ?? "?")}-bound`);
  if (occ !== undefined && typeof occ.error !== "string") {
    const pct = num(occ.occupancy);
    facts.push(
      `occupancy ${pct === undefined ? "—" : esc(Math.round(pct * 100))} %` +
        (arr(occ.limiters).length > 0 ? ` (limited by ${arr(occ.limiters).map(words).map(esc).join(" + ")})` : ""),
    );
  }
  if (power !== undefined) facts.push(`${esc(Math.round(num(power.watts) ?? 0))} W <span class="dim">(${esc(power.confidence ?? "?")} confidence)</span>`);
  if (typeof t.energy_text === "string") facts.push(`${esc(t.energy_text)} per launch`);
  parts.push(
    `<h3>${esc(t.name ?? id)} <span class="dim">(${esc(id)}, CC ${esc(t.compute_capability ?? "?")})</span></h3>` +
      `<p class="facts">${facts.join(" · ")}</p>`,
  );
  if (occ !== undefined && typeof occ.error === "string") parts.push(`<p class="bad">occupancy: ${esc(occ.error)}</p>`);
  if (typeof occ?.reason === "string") parts.push(`<p class="bad">${esc(occ.reason)}</p>`);
  if (typeof t.cannot_predict === "string") parts.push(`<p class="bad">${esc(t.cannot_predict)}</p>`);
  const waves = obj(t.waves);
  if (waves !== undefined) {
    const fill = num(waves.last_wave_fill);
    parts.push(
      `<p><b>waves</b> ${esc(num(waves.waves) ?? "?")} of ${esc(waves.blocks_per_wave ?? "?")} blocks; ` +
        `last wave ${esc(waves.last_wave_blocks ?? "?")} blocks (${fill === undefined ? "—" : esc(Math.round(fill * 100))} % full)</p>`,
    );
  }
  const charts = obj(t.charts);
  if (charts !== undefined) {
    const slot = (kind: string) =>
      obj(charts[kind]) !== undefined ? `<div class="chart" data-kind="${esc(kind)}" data-kernel="${ki}" data-gpu="${esc(id)}"></div>` : "";
    parts.push(`<div class="charts">${["occupancy", "roofline", "time_breakdown", "power"].map(slot).join("")}</div>`);
  }
  parts.push(modelsSection(t));
  if (power !== undefined) {
    parts.push(arr(power.notes).map((n) => `<p class="dim">power: ${esc(n)}</p>`).join(""));
  }
  return `<section class="gpu">${parts.join("")}</section>`;
}

function kernelSection(k: Json, ki: number): string {
  const title = typeof k.demangled === "string" ? k.demangled : String(k.name ?? "?");
  const parts = [`<h2>${esc(title)}</h2>`];
  const launch = obj(k.launch);
  const facts: string[] = [];
  if (launch !== undefined) {
    const dims = (d: unknown) => arr(d).map(esc).join("×");
    facts.push(
      `<b>launch</b> grid ${dims(launch.grid)}, block ${dims(launch.block)}, dynamic smem ${esc(launch.dynamic_smem ?? 0)} B ` +
        `<span class="dim">(${esc(words(launch.source ?? "?"))})</span>`,
    );
  }
  const regs = obj(k.registers);
  if (regs !== undefined) {
    facts.push(`<b>registers</b> ${esc(regs.per_thread ?? "?")} per thread <span class="dim">(${esc(regs.source ?? "?")})</span>`);
  }
  if (facts.length > 0) parts.push(`<p>${facts.join(" · ")}</p>`);
  for (const [id, t] of Object.entries(obj(k.gpus) ?? {})) {
    const tj = obj(t);
    if (tj !== undefined) parts.push(gpuSection(ki, id, tj));
  }
  const findings = arr(k.findings)
    .map(obj)
    .filter((f): f is Json => f !== undefined)
    .map((f) => {
      const where = num(f.source_line) !== undefined ? `line ${esc(f.source_line)}` : num(f.ptx_line) !== undefined ? `PTX line ${esc(f.ptx_line)}` : "";
      return (
        `<li class="${esc(f.severity ?? "")}"><code>${esc(f.code ?? "")}</code> ${esc(f.message ?? "")}` +
        `${where ? ` <span class="dim">(${where}${typeof f.gpu === "string" ? `, ${esc(f.gpu)}` : ""})</span>` : ""}</li>`
      );
    })
    .join("");
  parts.push(`<h3>findings</h3>${findings ? `<ul class="findings">${findings}</ul>` : "<p>none</p>"}`);
  const assumptions = arr(k.assumptions).map((a) => `<li>${esc(a)}</li>`).join("");
  if (assumptions) parts.push(`<details><summary>assumptions</summary><ul>${assumptions}</ul></details>`);
  return `<article>${parts.join("")}</article>`;
}

/** The chart data of every kernel and GPU, as the page's script reads it. */
function chartData(kernels: Json[]): unknown {
  return kernels.map((k) =>
    Object.fromEntries(
      Object.entries(obj(k.gpus) ?? {}).map(([id, t]) => [id, { name: obj(t)?.name ?? id, charts: obj(t)?.charts ?? {} }]),
    ),
  );
}

/** JSON that is safe inside a `<script>` element: no `<` can end it. */
function scriptJson(value: unknown): string {
  return JSON.stringify(value).replace(/</g, "\\u003c").replace(/\u2028/g, "\\u2028").replace(/\u2029/g, "\\u2029");
}

/** The whole page for one `warpsight/kernelReport` result. */
export function renderReport(target: ReportTarget, report: unknown, assets: PageAssets): string {
  const r = obj(report) ?? {};
  const kernels = arr(r.kernels).map(obj).filter((k): k is Json => k !== undefined);
  const notes = arr(r.notes).map((n) => `<p class="dim">${esc(n)}</p>`).join("");
  const unknown = arr(r.unknown_gpus)
    .map(obj)
    .filter((u): u is Json => u !== undefined)
    .map((u) => `<p class="bad">unknown GPU ${esc(u.id)}; closest: ${arr(u.closest).map(esc).join(", ")}</p>`)
    .join("");
  const body =
    kernels.length > 0 ? kernels.map(kernelSection).join("") : `<p>No kernel${target.kernel ? ` named ${esc(target.kernel)}` : ""} in this document.</p>`;
  const csp =
    `default-src 'none'; img-src ${assets.cspSource} data:; style-src ${assets.cspSource} 'unsafe-inline'; ` +
    `script-src 'nonce-${assets.nonce}';`;
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${esc(csp)}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>warpsight report</title>
<style>
body { font-family: var(--vscode-font-family); font-size: var(--vscode-font-size); color: var(--vscode-foreground); padding: 0 1em 2em; max-width: 100%; box-sizing: border-box; }
.dim { opacity: 0.75; } .bad, .error { color: var(--vscode-errorForeground); }
.warning { color: var(--vscode-editorWarning-foreground); }
h2 { margin-top: 1.2em; overflow-wrap: anywhere; }
table { border-collapse: collapse; margin: 0.5em 0; width: 100%; }
td, th { border: 1px solid var(--vscode-panel-border, var(--vscode-contrastBorder, #8884)); padding: 2px 6px; text-align: left; vertical-align: top; }
td.num { text-align: right; white-space: nowrap; }
.facts { font-size: 1.15em; } .facts .time { font-size: 1.1em; }
section.gpu { border-left: 3px solid var(--vscode-textLink-foreground); padding-left: 0.8em; margin: 1em 0; }
.charts { display: grid; grid-template-columns: repeat(auto-fill, minmax(320px, 1fr)); gap: 12px; margin: 0.8em 0; }
.chart { height: 300px; min-width: 0; border: 1px solid var(--vscode-panel-border, var(--vscode-contrastBorder, #8884)); border-radius: 4px; }
code { font-family: var(--vscode-editor-font-family); }
</style></head>
<body><h1 class="report-title">warpsight kernel report</h1>
<p class="dim">${esc(target.uri)} · estimates from static analysis of the PTX, not measurements</p>
${notes}${unknown}${body}
<script type="application/json" id="warpsight-charts">${scriptJson(chartData(kernels))}</script>
<script nonce="${esc(assets.nonce)}" src="${esc(assets.echartsUri)}"></script>
<script nonce="${esc(assets.nonce)}" src="${esc(assets.chartsUri)}"></script>
</body></html>`;
}

/** One panel, reused for each report so that clicking lens after lens does not pile up tabs. */
export class ReportPanel {
  private static current: vscode.WebviewPanel | undefined;
  /** What the open panel shows, so that a new analysis of its document can refresh it. */
  static target: ReportTarget | undefined;

  static show(context: vscode.ExtensionContext, target: ReportTarget, report: unknown, reveal = true): void {
    const media = vscode.Uri.joinPath(context.extensionUri, "media");
    const scripts = vscode.Uri.joinPath(context.extensionUri, "out", "webview");
    let panel = ReportPanel.current;
    if (panel === undefined) {
      panel = vscode.window.createWebviewPanel("warpsight.report", "warpsight report", vscode.ViewColumn.Beside, {
        enableScripts: true,
        localResourceRoots: [media, scripts],
        retainContextWhenHidden: false,
      });
      panel.onDidDispose(
        () => {
          ReportPanel.current = undefined;
          ReportPanel.target = undefined;
        },
        undefined,
        context.subscriptions,
      );
      ReportPanel.current = panel;
    }
    ReportPanel.target = target;
    const webview = panel.webview;
    // The tab names the kernel as written in the source (`row_sums`), not its PTX name.
    const kernels = arr(obj(report)?.kernels).map(obj);
    const shown = kernels.length === 1 && typeof kernels[0]?.demangled === "string" ? kernels[0].demangled.replace(/\(.*$/, "") : target.kernel;
    panel.title = `warpsight: ${shown ?? "report"}`;
    webview.html = renderReport(target, report, {
      cspSource: webview.cspSource,
      echartsUri: webview.asWebviewUri(vscode.Uri.joinPath(media, "vendor", "echarts.min.js")).toString(),
      chartsUri: webview.asWebviewUri(vscode.Uri.joinPath(scripts, "charts.js")).toString(),
      nonce: crypto.randomBytes(16).toString("base64"),
    });
    if (reveal) panel.reveal(vscode.ViewColumn.Beside, true);
  }
}
