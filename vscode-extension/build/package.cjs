// `npm run package [-- vsce options]`: vsce package with the README's relative links and
// images resolved against the repository URL of package.json (vsce detects only GitHub and
// GitLab by itself), so that the Marketplace page loads the screenshots from the
// repository. Extra arguments go to vsce (`-o FILE`, `--target linux-x64`).
"use strict";
const { spawnSync } = require("node:child_process");
const path = require("node:path");

const root = path.join(__dirname, "..");
const repo = String(require(path.join(root, "package.json")).repository.url).replace(/\.git$/, "");
const base = `${repo}/raw/HEAD/vscode-extension`;
const args = ["--no-install", "vsce", "package", "--skip-license", "--baseContentUrl", base, "--baseImagesUrl", base, ...process.argv.slice(2)];
const r = spawnSync(process.platform === "win32" ? "npx.cmd" : "npx", args, { cwd: root, stdio: "inherit" });
process.exit(r.status ?? 1);
