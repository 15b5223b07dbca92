//! The extension's own commands and its status bar item.
//!
//! - **Choose Target GPUs** (`warpsight.selectGpus`): a multi-select quick pick filled from
//!   `warpsight gpus --json` (the server binary's GPU database), written to `warpsight.gpus`
//!   in the user settings, the first picked GPU first.
//! - **Set Launch of Kernel Under Cursor** (`warpsight.setLaunch`): asks for the launch
//!   (prefilled with what the server used) and writes the `// warpsight: grid=... block=...`
//!   annotation line above the kernel (replacing one already there), the annotation of
//!   docs/cuda.md § Stating a launch.
//! - **Restart Server** (`warpsight.restartServer`) and **Show Server Log**
//!   (`warpsight.showLog`).
//! - The status bar item: the primary target GPU and the server's state: starting,
//!   compiling (while the server reports work-done progress for a `.cu` compile), ready,
//!   no compiler (the active `.cu` document's report says no CUDA compiler was found;
//!   clicking explains how to get one), or stopped.

import { execFile } from "node:child_process";
import * as vscode from "vscode";

/** One GPU of `warpsight gpus --json`, the fields the quick pick shows. */
interface GpuEntry {
  id: string;
  name: string;
  aliases?: string[];
  architecture?: string;
  cc?: string;
  year?: number;
  segment?: string;
}

/** Runs `server gpus --json` and returns the list, or an error message. */
export function listGpus(server: string): Promise<GpuEntry[] | string> {
  return new Promise((resolve) => {
    execFile(server, ["gpus", "--json"], { maxBuffer: 64 * 1024 * 1024, timeout: 20000 }, (err, stdout) => {
      if (err) {
        resolve(`\`${server} gpus --json\` failed: ${err.message}`);
        return;
      }
      try {
        const parsed: unknown = JSON.parse(stdout);
        if (!Array.isArray(parsed)) {
          resolve("`warpsight gpus --json` did not print a list");
          return;
        }
        resolve(
          parsed
            .filter((g): g is GpuEntry => typeof g === "object" && g !== null && typeof (g as GpuEntry).id === "string")
            .map((g) => ({ ...g, name: typeof g.name === "string" ? g.name : g.id })),
        );
      } catch (e) {
        resolve(`\`warpsight gpus --json\` printed something that is not JSON: ${String(e)}`);
      }
    });
  });
}

export async function selectGpus(server: string | undefined): Promise<void> {
  if (server === undefined) {
    void vscode.window.showErrorMessage("warpsight: the server binary was not found, so its GPU list is unavailable (see warpsight.server.path).");
    return;
  }
  const gpus = await listGpus(server);
  if (typeof gpus === "string") {
    void vscode.window.showErrorMessage(`warpsight: ${gpus}`);
    return;
  }
  const cfg = vscode.workspace.getConfiguration("warpsight");
  const current = cfg.get<string[]>("gpus") ?? [];
  // The setting may name a GPU by an alias (`a100`): resolve each to its id.
  const idOf = (name: string) => {
    const n = name.trim().toLowerCase();
    return gpus.find((g) => g.id === n || (g.aliases ?? []).includes(n))?.id ?? n;
  };
  const chosen = new Set(current.map(idOf));
  const items = gpus
    .slice()
    .sort((a, b) => (b.year ?? 0) - (a.year ?? 0) || a.name.localeCompare(b.name))
    .map((g) => ({
      label: g.name,
      description: g.id,
      detail: [g.architecture, g.cc ? `CC ${g.cc}` : undefined, g.segment, g.year?.toString()].filter(Boolean).join(" · "),
      picked: chosen.has(g.id),
      id: g.id,
    }));
  const picked = await vscode.window.showQuickPick(items, {
    canPickMany: true,
    title: "warpsight: target GPUs (the first one drives hints and lenses)",
    placeHolder: "Type to filter by name or id",
    matchOnDescription: true,
    matchOnDetail: true,
  });
  if (picked === undefined || picked.length === 0) return;
  // Keep the current entries (as written) for GPUs that stay, in their order, then the new ones.
  const ids = picked.map((p) => p.id);
  const kept = current.filter((c) => ids.includes(idOf(c)));
  const order = [...kept, ...ids.filter((i) => !kept.some((c) => idOf(c) === i))];
  await cfg.update("gpus", order, vscode.ConfigurationTarget.Global);
}

/** The line of the kernel that contains or precedes `line`: its `__global__` or `.entry`. */
export function kernelLineAt(doc: vscode.TextDocument, line: number): number | undefined {
  const pattern = doc.languageId === "ptx" ? /\.entry\s+[A-Za-z_$]/ : /__global__/;
  for (let l = Math.min(line, doc.lineCount - 1); l >= 0; l--) {
    if (pattern.test(doc.lineAt(l).text)) return l;
  }
  return undefined;
}

/** Where the annotation goes: above the kernel's `template <...>` line and its
 * `extern "C"`, and the line of an annotation already there (to replace). */
function annotationPlace(doc: vscode.TextDocument, kernelLine: number): { insertAt: number; existing?: number } {
  let at = kernelLine;
  while (at > 0 && /^\s*(template\s*<|extern\s+"C"|\.visible|\.weak)/.test(doc.lineAt(at - 1).text)) at--;
  if (at > 0 && /^\s*\/\/\s*warpsight:/.test(doc.lineAt(at - 1).text)) return { insertAt: at - 1, existing: at - 1 };
  return { insertAt: at };
}

/** `[128, 1, 1]` → `128`, `[32, 8, 1]` → `32x8`: the annotation grammar's dimensions. */
function dims(v: unknown): string | undefined {
  if (!Array.isArray(v) || !v.every((x) => typeof x === "number")) return undefined;
  const d = v.slice() as number[];
  while (d.length > 1 && d[d.length - 1] === 1) d.pop();
  return d.join("x");
}

export async function setLaunch(kernelReport: (uri: string) => Promise<unknown>): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  if (editor === undefined || !["ptx", "cuda-cpp"].includes(editor.document.languageId)) {
    void vscode.window.showWarningMessage("warpsight: put the cursor in a kernel of a .cu or .ptx file.");
    return;
  }
  const doc = editor.document;
  const kline = kernelLineAt(doc, editor.selection.active.line);
  if (kline === undefined) {
    void vscode.window.showWarningMessage("warpsight: no kernel (`__global__` or `.entry`) at or above the cursor.");
    return;
  }
  // Prefill with the launch the server used for this kernel, when it knows the kernel.
  let prefill = "grid=1024 block=256";
  try {
    const report = (await kernelReport(doc.uri.toString())) as { kernels?: { launch?: { grid?: unknown; block?: unknown } }[] } | undefined;
    const kernels = (report?.kernels ?? []) as { name?: unknown; demangled?: unknown; launch?: { grid?: unknown; block?: unknown }; ptx_line?: unknown }[];
    // PTX: the kernel whose `.entry` is this line; CUDA: the kernel named on this line
    // (the identifier before the parameter list), by its demangled base name.
    const name = /([A-Za-z_]\w*)\s*\(/.exec(doc.lineAt(kline).text.replace(/__launch_bounds__\s*\([^)]*\)/, ""))?.[1];
    const match =
      kernels.find((k) =>
        doc.languageId === "ptx"
          ? k.ptx_line === kline + 1
          : name !== undefined && (k.name === name || (typeof k.demangled === "string" && k.demangled.startsWith(`${name}(`))),
      ) ?? (kernels.length === 1 ? kernels[0] : undefined);
    const g = dims(match?.launch?.grid);
    const b = dims(match?.launch?.block);
    if (g !== undefined && b !== undefined) prefill = `grid=${g} block=${b}`;
  } catch {
    // Without a report the default launch is a fine starting point.
  }
  const place = annotationPlace(doc, kline);
  if (place.existing !== undefined) prefill = doc.lineAt(place.existing).text.replace(/^\s*\/\/\s*warpsight:\s*/, "");
  const value = await vscode.window.showInputBox({
    title: "warpsight: launch of this kernel",
    prompt: "grid=X[xY[xZ]] block=X[xY[xZ]] [smem=BYTES] [NAME=VALUE ...] (docs/cuda.md § Stating a launch)",
    value: prefill,
    validateInput: (v) => (/\bgrid=\S+/.test(v) || /\bblock=\S+/.test(v) ? undefined : "state at least grid=... or block=..."),
  });
  if (value === undefined) return;
  const indent = /^\s*/.exec(doc.lineAt(kline).text)?.[0] ?? "";
  const text = `${indent}// warpsight: ${value.trim()}`;
  await editor.edit((e) => {
    if (place.existing !== undefined) {
      e.replace(doc.lineAt(place.existing).range, text);
    } else {
      e.insert(new vscode.Position(place.insertAt, 0), `${text}\n`);
    }
  });
}

export type ServerState = "starting" | "ready" | "compiling" | "no compiler" | "stopped";

/** The status bar item: `$(pulse) warpsight: a100-sxm4-80gb · ready`. */
export class StatusItem implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem("warpsight.status", vscode.StatusBarAlignment.Right, 100);
  private state: ServerState = "starting";
  private compiling = new Set<string>();

  constructor() {
    this.item.name = "warpsight";
    this.item.command = "warpsight.statusClicked";
    this.render();
    this.item.show();
  }

  get current(): ServerState {
    return this.compiling.size > 0 ? "compiling" : this.state;
  }

  set(state: ServerState): void {
    this.state = state;
    this.render();
  }

  compileBegin(token: string): void {
    this.compiling.add(token);
    this.render();
  }

  compileEnd(token: string): void {
    this.compiling.delete(token);
    this.render();
  }

  render(): void {
    const gpus = vscode.workspace.getConfiguration("warpsight").get<string[]>("gpus") ?? [];
    const gpu = gpus[0] ?? "no GPU";
    const more = gpus.length > 1 ? ` +${gpus.length - 1}` : "";
    const state = this.current;
    const icon = { starting: "$(loading~spin)", compiling: "$(sync~spin)", ready: "$(pulse)", "no compiler": "$(warning)", stopped: "$(error)" }[state];
    this.item.text = `${icon} warpsight: ${gpu}${more} · ${state}`;
    this.item.tooltip = new vscode.MarkdownString(
      `**warpsight** — target ${gpus.map((g) => `\`${g}\``).join(", ") || "none"}; server ${state}.\n\n` +
        (state === "no compiler"
          ? "No CUDA compiler was found for `.cu` files: click for how to get one."
          : "Click to choose the target GPUs, open the report, restart the server or show its log."),
    );
    this.item.backgroundColor = state === "no compiler" || state === "stopped" ? new vscode.ThemeColor("statusBarItem.warningBackground") : undefined;
  }

  dispose(): void {
    this.item.dispose();
  }
}

/** What clicking the status bar item does: explain a missing compiler, else offer the commands. */
export async function statusClicked(state: ServerState): Promise<void> {
  if (state === "no compiler") {
    const pick = await vscode.window.showWarningMessage(
      "warpsight found no CUDA compiler, so .cu files are analysed from recorded PTX only (or not at all). " +
        "Install one with `warpsight setup-cuda` (NVIDIA's compiler wheels, no GPU needed), or point the setting " +
        "warpsight.nvcc (or the environment variable WARPSIGHT_NVCC or CUDA_HOME) at an installed CUDA toolkit, then restart the server.",
      { modal: false },
      "Set warpsight.nvcc",
      "Restart Server",
    );
    if (pick === "Set warpsight.nvcc") void vscode.commands.executeCommand("workbench.action.openSettings", "warpsight.nvcc");
    if (pick === "Restart Server") void vscode.commands.executeCommand("warpsight.restartServer");
    return;
  }
  const pick = await vscode.window.showQuickPick(
    [
      { label: "$(server) Choose Target GPUs", command: "warpsight.selectGpus" },
      { label: "$(graph) Open Kernel Report", command: "warpsight.openReport" },
      { label: "$(symbol-parameter) Set Launch of Kernel Under Cursor", command: "warpsight.setLaunch" },
      { label: "$(debug-restart) Restart Server", command: "warpsight.restartServer" },
      { label: "$(output) Show Server Log", command: "warpsight.showLog" },
    ],
    { title: "warpsight" },
  );
  if (pick !== undefined) void vscode.commands.executeCommand(pick.command);
}
