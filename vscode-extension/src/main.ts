//! The extension's entry point: starts the warpsight language server and keeps it in step
//! with the settings.
//!
//! The extension is deliberately thin (house style §1.1): every analysis lives in the Rust
//! server, and this file only finds the binary (`bootstrap.ts`), starts
//! vscode-languageclient for CUDA and PTX documents, forwards the `warpsight.*` settings, and
//! turns the server's `warpsight.openReport` command into a webview (`report.ts`). A failure
//! to start is shown to the user with a button to the output channel, instead of leaving the
//! editor silently without hints.

import * as vscode from "vscode";
import {
  DidChangeConfigurationNotification,
  LanguageClient,
  type LanguageClientOptions,
  type ServerOptions,
  State,
  TransportKind,
  WorkDoneProgress,
  WorkDoneProgressCreateRequest,
} from "vscode-languageclient/node";
import { findServer } from "./bootstrap";
import { selectGpus, setLaunch, StatusItem, statusClicked } from "./commands";
import { ReportPanel, type ReportTarget } from "./report";

let client: LanguageClient | undefined;
let output: vscode.LogOutputChannel | undefined;
let status: StatusItem | undefined;
let reportRefresh: NodeJS.Timeout | undefined;

/** The report of a document, from the running server. */
function kernelReport(uri: string): Promise<unknown> {
  if (client === undefined) return Promise.reject(new Error("the server is not running"));
  return client.sendRequest("warpsight/kernelReport", { uri });
}

/** The report's notes say no CUDA compiler was found (cuda-frontend's PtxOrigin notes). */
function saysNoCompiler(report: unknown): boolean {
  const notes = (report as { notes?: unknown } | undefined)?.notes;
  return Array.isArray(notes) && notes.some((n) => typeof n === "string" && /^No (CUDA compiler found|PTX: no CUDA compiler)/.test(n));
}

/** Ready or no compiler, from the active `.cu` document's report. */
async function refreshCompilerState(): Promise<void> {
  const doc = vscode.window.activeTextEditor?.document;
  if (client === undefined || !client.isRunning() || status === undefined) return;
  if (doc === undefined || doc.languageId !== "cuda-cpp") {
    status.set("ready");
    return;
  }
  try {
    status.set(saysNoCompiler(await kernelReport(doc.uri.toString())) ? "no compiler" : "ready");
  } catch {
    // Not analysed yet: the compile's end brings another refresh.
  }
}

/**
 * The `warpsight.*` settings as the plain object the server reads
 * (docs/lsp-extensions.md § Configuration). Unset values (null) are left out, because the
 * server logs a malformed value for each null it receives (but `lockedClockMhz`, whose null
 * the server reads as the boost clock); `server.path` is the extension's
 * own and is not sent.
 */
export function serverSettings(): Record<string, unknown> {
  const cfg = vscode.workspace.getConfiguration("warpsight");
  const res: Record<string, unknown> = {};
  const put = (key: string) => {
    const v = cfg.get<unknown>(key);
    if (v !== undefined && v !== null) res[key] = v;
  };
  for (const key of ["gpus", "args", "defaultTripCount", "graphLaunch", "nvcc", "compiler", "compileTimeoutMs", "trustCompileCommands", "severities", "inlayHints", "debounceMs"]) {
    put(key);
  }
  const launch: Record<string, unknown> = {};
  for (const key of ["grid", "block", "dynamicSmem"]) {
    const v = cfg.get<unknown>(`launch.${key}`);
    if (v !== undefined && v !== null) launch[key] = v;
  }
  if (Object.keys(launch).length > 0) res.launch = launch;
  // Sent when unset too: the server reads `null` as "unlock" (the boost clock), where an
  // absent key would keep a clock set earlier in the session.
  res.lockedClockMhz = cfg.get<number | null>("lockedClockMhz") ?? null;
  return res;
}

/** The report target from a code lens argument, or else from the active editor. */
function reportTarget(args: unknown[]): ReportTarget | undefined {
  const first = args[0];
  if (typeof first === "object" && first !== null && typeof (first as { uri?: unknown }).uri === "string") {
    const { uri, kernel } = first as { uri: string; kernel?: unknown };
    return { uri, kernel: typeof kernel === "string" ? kernel : undefined };
  }
  const editor = vscode.window.activeTextEditor;
  if (editor !== undefined && ["ptx", "cuda-cpp"].includes(editor.document.languageId)) {
    return { uri: editor.document.uri.toString() };
  }
  return undefined;
}

async function openReport(context: vscode.ExtensionContext, args: unknown[]): Promise<void> {
  const target = reportTarget(args);
  if (client === undefined || target === undefined) {
    void vscode.window.showWarningMessage("warpsight: open a .ptx or .cu file to see its kernel report.");
    return;
  }
  try {
    const report = await client.sendRequest("warpsight/kernelReport", target);
    ReportPanel.show(context, target, report);
  } catch (e) {
    void vscode.window.showErrorMessage(`warpsight: the kernel report failed: ${String(e)}`);
  }
}

async function start(context: vscode.ExtensionContext): Promise<void> {
  const out = output ?? vscode.window.createOutputChannel("warpsight", { log: true });
  output = out;
  const server = findServer(context.extensionPath);
  if (typeof server === "string") {
    out.appendLine(server);
    const pick = await vscode.window.showErrorMessage(`warpsight: ${server}`, "Open Settings");
    if (pick === "Open Settings") {
      void vscode.commands.executeCommand("workbench.action.openSettings", "warpsight.server.path");
    }
    return;
  }
  out.appendLine(`Starting ${server.path} lsp (from ${server.source}).`);
  const run = { command: server.path, args: ["lsp"], transport: TransportKind.stdio };
  const serverOptions: ServerOptions = { run, debug: run };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [
      { scheme: "file", language: "cuda-cpp" },
      { scheme: "file", language: "ptx" },
    ],
    outputChannel: out,
    initializationOptions: serverSettings(),
    middleware: {
      // The server offers `warpsight.openReport` through workspace/executeCommand, so the
      // client registers the VS Code command itself; intercepting it here shows the report
      // in a panel instead of discarding the result.
      executeCommand: async (command, args, next) => {
        if (command === "warpsight.openReport") {
          await openReport(context, args);
          return undefined;
        }
        return next(command, args);
      },
    },
  };
  const c = new LanguageClient("warpsight", "warpsight", serverOptions, clientOptions);
  client = c;
  status?.set("starting");
  c.onDidChangeState((e) => {
    if (e.newState === State.Stopped) status?.set("stopped");
  });
  try {
    await c.start();
    // The server reports each `.cu` compile as work-done progress (docs/lsp-extensions.md):
    // the status bar shows it instead of a progress notification.
    c.onRequest(WorkDoneProgressCreateRequest.type, ({ token }) => {
      const key = String(token);
      const sub = c.onProgress(WorkDoneProgress.type, token, (value) => {
        if (value.kind === "begin") status?.compileBegin(key);
        if (value.kind === "end") {
          status?.compileEnd(key);
          sub.dispose();
          void refreshCompilerState();
        }
      });
    });
    await refreshCompilerState();
  } catch (e) {
    client = undefined;
    status?.set("stopped");
    out.appendLine(`The server failed to start: ${String(e)}`);
    const pick = await vscode.window.showErrorMessage(
      `warpsight: the language server (${server.path}) failed to start: ${String(e)}`,
      "Show Output",
    );
    if (pick === "Show Output") out.show();
  }
}

async function restart(context: vscode.ExtensionContext): Promise<void> {
  const old = client;
  client = undefined;
  if (old !== undefined) {
    try {
      await old.stop();
    } catch {
      // A server that already died cannot be stopped; starting a new one is what matters.
    }
  }
  await start(context);
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  status = new StatusItem();
  context.subscriptions.push(
    status,
    vscode.commands.registerCommand("warpsight.selectGpus", () => {
      const server = findServer(context.extensionPath);
      return selectGpus(typeof server === "string" ? undefined : server.path);
    }),
    vscode.commands.registerCommand("warpsight.setLaunch", () => setLaunch(kernelReport)),
    vscode.commands.registerCommand("warpsight.restartServer", () => restart(context)),
    vscode.commands.registerCommand("warpsight.showLog", () => output?.show()),
    vscode.commands.registerCommand("warpsight.statusClicked", () => statusClicked(status?.current ?? "stopped")),
    vscode.window.onDidChangeActiveTextEditor(() => void refreshCompilerState()),
    // The server publishes diagnostics after every analysis of a document (with its
    // version): the moment to redraw an open report of that document.
    vscode.languages.onDidChangeDiagnostics((e) => {
      const target = ReportPanel.target;
      if (target === undefined || !e.uris.some((u) => u.toString() === target.uri)) return;
      if (reportRefresh !== undefined) clearTimeout(reportRefresh);
      reportRefresh = setTimeout(() => {
        reportRefresh = undefined;
        if (client === undefined || ReportPanel.target !== target) return;
        client.sendRequest("warpsight/kernelReport", target).then(
          (report) => {
            if (ReportPanel.target === target) ReportPanel.show(context, target, report, false);
          },
          (e: unknown) => output?.appendLine(`The report's refresh failed: ${String(e)}`),
        );
      }, 300);
    }),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (!e.affectsConfiguration("warpsight")) return;
      status?.render();
      if (e.affectsConfiguration("warpsight.server.path")) {
        void restart(context);
      } else if (client !== undefined && client.isRunning()) {
        // The server accepts `{ "warpsight": { ... } }` as the settings object.
        void client.sendNotification(DidChangeConfigurationNotification.type, {
          settings: { warpsight: serverSettings() },
        });
      }
    }),
  );
  await start(context);
}

export async function deactivate(): Promise<void> {
  const c = client;
  client = undefined;
  if (c !== undefined) await c.stop();
}
