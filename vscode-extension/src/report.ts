//! The kernel report panel: a webview that shows the result of `warpsight/kernelReport`.
//!
//! The server already computes everything (docs/cli.md § `analyze --format json`); this
//! file only lays the per-file object out as plain HTML: per kernel and GPU the occupancy and
//! its limiters, the headline time and bound, every model's time, power with its largest
//! contributions, energy, and the findings. Every string from the server goes through
//! `esc`, and the webview runs no scripts (its Content-Security-Policy allows inline styles
//! only), so a kernel name or message can never inject markup. Unknown or missing keys are
//! skipped: the report's keys are stable but may grow.

import * as vscode from "vscode";

export interface ReportTarget {
  uri: string;
  kernel?: string;
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

/** A time in µs with a unit that keeps three significant figures readable. */
export function fmtTime(us: unknown): string {
  const t = num(us);
  if (t === undefined) return "—";
  if (t >= 1e6) return `${(t / 1e6).toPrecision(3)} s`;
  if (t >= 1e3) return `${(t / 1e3).toPrecision(3)} ms`;
  return `${t.toPrecision(3)} µs`;
}

function fmtNum(v: unknown, digits = 3): string {
  const n = num(v);
  return n === undefined ? "—" : n.toPrecision(digits);
}

function gpuSection(id: string, t: Json): string {
  const parts: string[] = [];
  parts.push(`<h3>${esc(t.name ?? id)} <span class="dim">(${esc(id)}, CC ${esc(t.compute_capability ?? "?")})</span></h3>`);

  const occ = obj(t.occupancy);
  if (occ !== undefined) {
    if (typeof occ.error === "string") {
      parts.push(`<p class="bad">occupancy: ${esc(occ.error)}</p>`);
    } else {
      const pct = num(occ.occupancy);
      const limiters = arr(occ.limiters).map(esc).join(", ");
      parts.push(
        `<p><b>occupancy</b> ${pct === undefined ? "—" : esc(Math.round(pct * 100))} % ` +
          `(${esc(occ.blocks_per_sm ?? "?")} blocks/SM, ${esc(occ.warps_per_sm ?? "?")}/${esc(occ.max_warps_per_sm ?? "?")} warps` +
          `${limiters ? `; limited by ${limiters}` : ""})` +
          `${typeof occ.reason === "string" ? ` <span class="bad">${esc(occ.reason)}</span>` : ""}</p>`,
      );
    }
  }
  const waves = obj(t.waves);
  if (waves !== undefined) {
    const fill = num(waves.last_wave_fill);
    parts.push(
      `<p><b>waves</b> ${esc(fmtNum(waves.waves))} of ${esc(waves.blocks_per_wave ?? "?")} blocks; ` +
        `last wave ${esc(waves.last_wave_blocks ?? "?")} blocks (${fill === undefined ? "—" : esc(Math.round(fill * 100))} % full)</p>`,
    );
  }
  const head = obj(t.headline);
  if (head !== undefined) {
    parts.push(
      `<p class="headline"><b>≈ ${esc(fmtTime(head.time_us))}</b>, ${esc(head.bound ?? "?")}-bound ` +
        `<span class="dim">(headline model ${esc(head.model ?? "?")}: ${esc(head.rule ?? "")})</span></p>`,
    );
  }
  const preds = obj(t.predictions);
  if (preds !== undefined) {
    const rows = Object.entries(preds)
      .map(([model, p]) => {
        const pj = obj(p) ?? {};
        return (
          `<tr><td>${esc(model)}</td><td class="num">${esc(fmtTime(pj.time_us))}</td><td>${esc(pj.bound ?? "")}</td>` +
          `<td>${esc(pj.confidence ?? "")}</td><td>${esc(pj.explanation ?? "")}</td></tr>`
        );
      })
      .join("");
    const na = obj(head?.not_applicable);
    const naRows =
      na === undefined
        ? ""
        : Object.entries(na)
            .map(([model, why]) => `<tr class="dim"><td>${esc(model)}</td><td colspan="4">not applicable: ${esc(why)}</td></tr>`)
            .join("");
    parts.push(
      `<table><thead><tr><th>model</th><th>time</th><th>bound</th><th>confidence</th><th>why</th></tr></thead>` +
        `<tbody>${rows}${naRows}</tbody></table>`,
    );
  }
  const power = obj(t.power);
  if (power !== undefined) {
    const contrib = Object.entries(obj(power.contributions) ?? {})
      .filter((e): e is [string, number] => num(e[1]) !== undefined)
      .sort((a, b) => Math.abs(b[1]) - Math.abs(a[1]))
      .slice(0, 5)
      .map(([k, w]) => `<li>${esc(k)}: ${w >= 0 ? "+" : ""}${esc(w.toFixed(1))} W</li>`)
      .join("");
    parts.push(
      `<p><b>power</b> ≈ ${esc(fmtNum(power.watts))} W <span class="dim">(estimate, confidence ${esc(power.confidence ?? "?")}` +
        `${typeof power.model_gpu === "string" ? `, model of ${esc(power.model_gpu)}` : ""})</span></p>` +
        (contrib ? `<p>largest contributions:</p><ul>${contrib}</ul>` : "") +
        arr(power.notes)
          .map((n) => `<p class="dim">${esc(n)}</p>`)
          .join(""),
    );
  }
  const energy = num(t.energy_uj);
  if (energy !== undefined) {
    parts.push(`<p><b>energy</b> ≈ ${esc(energy.toPrecision(3))} µJ per launch</p>`);
  }
  return `<section class="gpu">${parts.join("")}</section>`;
}

function kernelSection(k: Json): string {
  const title = typeof k.demangled === "string" ? k.demangled : String(k.name ?? "?");
  const parts = [`<h2>${esc(title)}</h2>`];
  const launch = obj(k.launch);
  if (launch !== undefined) {
    const dims = (d: unknown) => arr(d).map(esc).join("×");
    parts.push(
      `<p><b>launch</b> grid ${dims(launch.grid)}, block ${dims(launch.block)}, dynamic smem ${esc(launch.dynamic_smem ?? 0)} B ` +
        `<span class="dim">(${esc(launch.source ?? "?")})</span></p>`,
    );
  }
  const regs = obj(k.registers);
  if (regs !== undefined) {
    parts.push(`<p><b>registers</b> ${esc(regs.per_thread ?? "?")} per thread <span class="dim">(${esc(regs.source ?? "?")})</span></p>`);
  }
  for (const [id, t] of Object.entries(obj(k.gpus) ?? {})) {
    const tj = obj(t);
    if (tj !== undefined) parts.push(gpuSection(id, tj));
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

/** The whole page for one `warpsight/kernelReport` result. */
export function renderReport(target: ReportTarget, report: unknown): string {
  const r = obj(report) ?? {};
  const kernels = arr(r.kernels).map(obj).filter((k): k is Json => k !== undefined);
  const notes = arr(r.notes).map((n) => `<p class="dim">${esc(n)}</p>`).join("");
  const unknown = arr(r.unknown_gpus)
    .map(obj)
    .filter((u): u is Json => u !== undefined)
    .map((u) => `<p class="bad">unknown GPU ${esc(u.id)}; closest: ${arr(u.closest).map(esc).join(", ")}</p>`)
    .join("");
  const body = kernels.length > 0 ? kernels.map(kernelSection).join("") : `<p>No kernel${target.kernel ? ` named ${esc(target.kernel)}` : ""} in this document.</p>`;
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline';">
<title>warpsight report</title>
<style>
body { font-family: var(--vscode-font-family); font-size: var(--vscode-font-size); color: var(--vscode-foreground); padding: 0 1em; }
.dim { opacity: 0.7; } .bad, .error { color: var(--vscode-errorForeground); }
.warning { color: var(--vscode-editorWarning-foreground); }
table { border-collapse: collapse; margin: 0.5em 0; } td, th { border: 1px solid var(--vscode-panel-border); padding: 2px 6px; text-align: left; vertical-align: top; }
td.num { text-align: right; white-space: nowrap; } .headline { font-size: 1.2em; }
section.gpu { border-left: 3px solid var(--vscode-textLink-foreground); padding-left: 0.8em; margin: 1em 0; }
</style></head>
<body><h1 class="report-title">warpsight kernel report</h1>
<p class="dim">${esc(target.uri)} · estimates from static analysis of the PTX, not measurements</p>
${notes}${unknown}${body}
</body></html>`;
}

/** One panel, reused for each report so that clicking lens after lens does not pile up tabs. */
export class ReportPanel {
  private static current: vscode.WebviewPanel | undefined;

  static show(context: vscode.ExtensionContext, target: ReportTarget, report: unknown): void {
    let panel = ReportPanel.current;
    if (panel === undefined) {
      panel = vscode.window.createWebviewPanel("warpsight.report", "warpsight report", vscode.ViewColumn.Beside, {
        enableScripts: false,
        retainContextWhenHidden: false,
      });
      panel.onDidDispose(() => (ReportPanel.current = undefined), undefined, context.subscriptions);
      ReportPanel.current = panel;
    }
    panel.title = `warpsight: ${target.kernel ?? "report"}`;
    panel.webview.html = renderReport(target, report);
    panel.reveal(vscode.ViewColumn.Beside, true);
  }
}
