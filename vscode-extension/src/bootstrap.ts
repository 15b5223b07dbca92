//! Finds the `warpsight` server binary.
//!
//! The order is the one rust-analyzer's extension uses, so that a developer can always point
//! the extension at a fresh build without touching settings: the environment variable
//! `WARPSIGHT_SERVER` first (for debugging and tests), then the `warpsight.server.path`
//! setting, then a server bundled inside the extension (`server/warpsight`, for a .vsix that
//! ships one), and last `warpsight` on PATH. Each candidate is checked to exist and be
//! executable, so that a wrong setting is reported by name instead of as a spawn failure.

import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as vscode from "vscode";

/** Where the binary came from, for the error message and the output channel. */
export type ServerSource = "env WARPSIGHT_SERVER" | "setting warpsight.server.path" | "bundled" | "PATH";

export interface ServerBinary {
  path: string;
  source: ServerSource;
}

/** Expands a leading `~` and `${workspaceFolder}`, the two forms users write in settings. */
function expand(raw: string): string {
  let p = raw.trim();
  if (p === "~" || p.startsWith("~/")) {
    p = path.join(os.homedir(), p.slice(1));
  }
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  if (folder !== undefined) {
    p = p.replace(/\$\{workspaceFolder\}/g, folder);
  }
  return p;
}

function isExecutable(p: string): boolean {
  try {
    fs.accessSync(p, fs.constants.X_OK);
    return fs.statSync(p).isFile();
  } catch {
    return false;
  }
}

/** Looks `name` up on PATH the way a shell would. */
function onPath(name: string): string | undefined {
  const exts = process.platform === "win32" ? [".exe", ""] : [""];
  for (const dir of (process.env.PATH ?? "").split(path.delimiter)) {
    if (dir === "") continue;
    for (const ext of exts) {
      const candidate = path.join(dir, name + ext);
      if (isExecutable(candidate)) return candidate;
    }
  }
  return undefined;
}

/**
 * Resolves the server binary. Returns an error message (not an exception) when an explicit
 * choice (the environment variable or the setting) names a file that is not executable, or
 * when nothing is found at all, so that `main.ts` can show it to the user.
 */
export function findServer(extensionPath: string): ServerBinary | string {
  const fromEnv = process.env.WARPSIGHT_SERVER;
  if (fromEnv !== undefined && fromEnv.trim() !== "") {
    const p = expand(fromEnv);
    return isExecutable(p)
      ? { path: p, source: "env WARPSIGHT_SERVER" }
      : `WARPSIGHT_SERVER is set to "${fromEnv}", which is not an executable file.`;
  }
  const fromSetting = vscode.workspace.getConfiguration("warpsight").get<string | null>("server.path");
  if (typeof fromSetting === "string" && fromSetting.trim() !== "") {
    const p = expand(fromSetting);
    return isExecutable(p)
      ? { path: p, source: "setting warpsight.server.path" }
      : `The setting warpsight.server.path is "${fromSetting}", which is not an executable file.`;
  }
  const exe = process.platform === "win32" ? "warpsight.exe" : "warpsight";
  const bundled = path.join(extensionPath, "server", exe);
  if (isExecutable(bundled)) {
    return { path: bundled, source: "bundled" };
  }
  const found = onPath("warpsight");
  if (found !== undefined) {
    return { path: found, source: "PATH" };
  }
  return (
    "The warpsight language server was not found: set warpsight.server.path, " +
    "or put `warpsight` on PATH (cargo install --path server/warpsight)."
  );
}
