#!/usr/bin/env bash
# End-to-end test of the VS Code extension in real VS Code: code-server 4.99.4 (VS Code
# 1.99.3, the last release that runs on Node 20) driven by Debian's headless Chromium through
# playwright-core. Nothing is downloaded from outside npm and Debian (toolchain notes §3).
#
#   scripts/test-vscode.sh                 # install what is missing, build, test
#   WARPSIGHT_SKIP_INSTALL=1 ...           # never install (fail if something is missing)
#   WARPSIGHT_SERVER_BIN=PATH ...          # test against this server binary instead of
#                                          # target/debug/warpsight
#
# Everything it installs or writes goes under target/vscode-test/ (gitignored):
#   tools/        code-server and playwright-core (npm, pinned below)
#   extension/    a copy of vscode-extension/ with its node_modules, out/ and the .vsix
#   run/          a fresh user-data dir, extensions dir and workspace per run
#   *.png         screenshots of each step
# The last line is `vscode: N passed, M failed`; the exit status is non-zero on any failure.
#debian: chromium libkrb5-dev ripgrep
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
T="$root/target/vscode-test"
CODE_SERVER_VERSION=4.99.4
PLAYWRIGHT_VERSION=1.65.1
RIPGREP_PREBUILT_VERSION=1.15.11   # the @vscode/ripgrep that code-server 4.99.4 depends on
mkdir -p "$T"
start_s=$(date +%s)
log() { printf '\n==> [%ss] %s\n' "$(( $(date +%s) - start_s ))" "$*"; }
# A failure before the browser test still ends with the summary line.
summary_printed=""
on_exit() {
  local rc=$?
  if [ -z "$summary_printed" ] && [ "$rc" != 0 ]; then echo "vscode: 0 passed, 1 failed (setup failed, exit $rc)"; fi
}
trap on_exit EXIT

npm_quiet=(--no-audit --no-fund --loglevel=error)

# --- 1. Debian packages ---------------------------------------------------------------------
. scripts/debian-packages.sh
install_debian_packages scripts/test-vscode.sh

# --- 2. code-server and playwright-core -------------------------------------------------------
tools="$T/tools"
tools_stamp="code-server@$CODE_SERVER_VERSION playwright-core@$PLAYWRIGHT_VERSION"
if [ "$(cat "$tools/.installed" 2>/dev/null)" != "$tools_stamp" ]; then
  [ -z "${WARPSIGHT_SKIP_INSTALL:-}" ] || { echo "code-server is not installed in $tools" >&2; exit 1; }
  log "npm install $tools_stamp"
  mkdir -p "$tools"
  cat > "$tools/package.json" <<JSON
{ "private": true, "name": "warpsight-vscode-test-tools",
  "dependencies": { "code-server": "$CODE_SERVER_VERSION", "playwright-core": "$PLAYWRIGHT_VERSION" } }
JSON
  # Workaround 3 (toolchain notes §3): @vscode/ripgrep's postinstall downloads rg from
  # GitHub; it takes a cached archive instead, so seed its cache with Debian's rg.
  rg_cache="$(node -p 'require("os").tmpdir()')/vscode-ripgrep-cache-$RIPGREP_PREBUILT_VERSION"
  rg_tar="$rg_cache/ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz"
  if [ ! -s "$rg_tar" ]; then
    mkdir -p "$rg_cache" "$T/rg-seed"
    cp /usr/bin/rg "$T/rg-seed/rg"
    tar czf "$rg_tar" -C "$T/rg-seed" rg
  fi
  # Workarounds 2 and 4: postinstall.sh refuses to run as root without unsafe-perm, and
  # node-pty's `npx node-gyp` needs yes=true (the machine's ~/.npmrc says yes=false).
  # Workaround 1 (libkrb5-dev for the kerberos module) is the Debian package above.
  (cd "$tools" && npm_config_yes=true npm_config_unsafe_perm=true PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 \
    npm install "${npm_quiet[@]}" --foreground-scripts >"$T/npm-tools.log" 2>&1) \
    || { tail -40 "$T/npm-tools.log" >&2; exit 1; }
  echo "$tools_stamp" > "$tools/.installed"
fi
code_server="$tools/node_modules/.bin/code-server"
[ -x "$code_server" ] || { echo "$code_server is missing; delete $tools and run again" >&2; exit 1; }

# --- 3. The server binary ---------------------------------------------------------------------
server="${WARPSIGHT_SERVER_BIN:-${CARGO_TARGET_DIR:-$root/target}/debug/warpsight}"
# A binary from before the language server existed has no `lsp` subcommand: rebuild it too.
if [ ! -x "$server" ] || ! "$server" lsp --help >/dev/null 2>&1; then
  [ -z "${WARPSIGHT_SERVER_BIN:-}" ] || { echo "WARPSIGHT_SERVER_BIN=$server is not a warpsight with \`lsp\`" >&2; exit 1; }
  log "cargo build -p warpsight"
  cargo build -p warpsight --locked
fi

# --- 4. Build and package the extension ---------------------------------------------------------
ext_build="$T/extension"
mkdir -p "$ext_build"
# A copy keeps node_modules, out/ and the .vsix out of the source tree.
rm -rf "$ext_build/src" "$ext_build/syntaxes" "$ext_build/test" "$ext_build/out"
cp -r vscode-extension/. "$ext_build/"
lock_sum=$(sha256sum vscode-extension/package-lock.json | cut -d' ' -f1)
if [ "$(cat "$T/extension-deps.stamp" 2>/dev/null)" != "$lock_sum" ] || [ ! -d "$ext_build/node_modules" ]; then
  [ -z "${WARPSIGHT_SKIP_INSTALL:-}" ] || { echo "the extension's npm dependencies are not installed" >&2; exit 1; }
  log "npm ci (extension dependencies)"
  (cd "$ext_build" && npm ci "${npm_quiet[@]}" >"$T/npm-extension.log" 2>&1) || { tail -40 "$T/npm-extension.log" >&2; exit 1; }
  echo "$lock_sum" > "$T/extension-deps.stamp"
fi
log "vsce package (its prepublish step: tsc for the client and the report page, ECharts into media/vendor)"
# build/package.cjs: vsce with the README's images resolved against the repository URL.
(cd "$ext_build" && node build/package.cjs -o "$T/warpsight.vsix" >"$T/vsce.log" 2>&1) \
  || { cat "$T/vsce.log" >&2 2>/dev/null; exit 1; }
# The package must hold the compiled client, the report page's script and charting library,
# the client's runtime dependency, and no sources.
vsix_list=$(python3 -c 'import sys,zipfile; print("\n".join(zipfile.ZipFile(sys.argv[1]).namelist()))' "$T/warpsight.vsix")
for f in extension/out/main.js extension/out/webview/charts.js extension/media/vendor/echarts.min.js \
  extension/media/vendor/echarts.LICENSE.txt extension/media/vendor/zrender.LICENSE.txt extension/media/icon.png extension/changelog.md \
  extension/syntaxes/ptx.tmLanguage.json extension/node_modules/vscode-languageclient/package.json; do
  grep -qx "$f" <<<"$vsix_list" || { echo "the .vsix lacks $f" >&2; exit 1; }
done
if grep -q '^extension/src/' <<<"$vsix_list"; then echo "the .vsix contains TypeScript sources" >&2; exit 1; fi
# Only the runtime dependency's tree: no development packages (echarts is copied, not shipped).
if grep -qE '^extension/node_modules/(echarts|typescript|@vscode/vsce)/' <<<"$vsix_list"; then echo "the .vsix contains development packages" >&2; exit 1; fi

# --- 5. A fresh code-server with the extension installed -----------------------------------------
run="$T/run"
rm -rf "$run"
mkdir -p "$run/user-data/User" "$run/extensions" "$run/workspace"
"$code_server" --user-data-dir "$run/user-data" --extensions-dir "$run/extensions" \
  --install-extension "$T/warpsight.vsix" >"$T/install-extension.log" 2>&1 \
  || { cat "$T/install-extension.log" >&2; exit 1; }
cat > "$run/user-data/User/settings.json" <<JSON
{
  "warpsight.server.path": "$server",
  "warpsight.gpus": ["a100", "tesla-k20"],
  "security.workspace.trust.enabled": false,
  "workbench.startupEditor": "none",
  "workbench.tips.enabled": false,
  "telemetry.telemetryLevel": "off",
  "extensions.autoCheckUpdates": false,
  "extensions.autoUpdate": false,
  "update.mode": "none",
  "chat.commandCenter.enabled": false,
  "git.enabled": false,
  "git.openRepositoryInParentFolders": "never",
  "editor.codeLens": true,
  "editor.hover.delay": 300
}
JSON
# The workspace: the fixture PTX with a launch annotation (the bank-conflict finding and the
# timings need a launch), and its CUDA source.
{ echo "// warpsight: grid=32x32 block=32x8 param_2=1024 param_3=1024"
  cat tests/fixtures/ptx/sm_80/transpose_naive.ptx; } > "$run/workspace/transpose_naive.ptx"
cp tests/fixtures/cu/transpose_naive.cu "$run/workspace/transpose_naive.cu"
# The CUDA file with two kernels and a main (vscode-extension/test/workspace/kernels.cu).
cp vscode-extension/test/workspace/kernels.cu "$run/workspace/kernels.cu"
# The .cu checks compile with the toolchain scripts/test-all.sh installs (.cuda/, NVRTC and
# nvcc from NVIDIA's wheels); code-server passes the environment down to the server.
if [ -z "${WARPSIGHT_CUDA_HOME:-}" ]; then
  WARPSIGHT_CUDA_HOME=$(ls -d "$root"/.cuda/lib/python3*/site-packages/nvidia/cu13 2>/dev/null | head -1)
  [ -n "$WARPSIGHT_CUDA_HOME" ] || { echo "no CUDA toolchain in .cuda/ (scripts/test-all.sh installs it): the .cu checks need it" >&2; exit 1; }
  export WARPSIGHT_CUDA_HOME
fi
export WARPSIGHT_NVCC="${WARPSIGHT_NVCC:-$WARPSIGHT_CUDA_HOME/bin/nvcc}"
export XDG_CACHE_HOME="${XDG_CACHE_HOME:-$root/target/test-cache}"

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
log "code-server on 127.0.0.1:$port"
# In its own session (setsid), so that cleanup can end code-server together with its
# extension host and the language server it spawned: the whole process group.
setsid "$code_server" --auth none --bind-addr "127.0.0.1:$port" --user-data-dir "$run/user-data" \
  --extensions-dir "$run/extensions" --disable-telemetry --disable-update-check \
  --disable-workspace-trust "$run/workspace" >"$T/code-server.log" 2>&1 &
cs_pid=$!
cleanup() {
  local rc=$?
  kill -TERM -- "-$cs_pid" 2>/dev/null || true
  for _ in $(seq 1 50); do
    kill -0 -- "-$cs_pid" 2>/dev/null || break
    sleep 0.1
  done
  kill -KILL -- "-$cs_pid" 2>/dev/null || true
  wait "$cs_pid" 2>/dev/null || true
  if [ -z "$summary_printed" ] && [ "$rc" != 0 ]; then echo "vscode: 0 passed, 1 failed (setup failed, exit $rc)"; fi
}
trap cleanup EXIT
for _ in $(seq 1 100); do
  curl -sf "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break
  sleep 0.1
done
curl -sf "http://127.0.0.1:$port/healthz" >/dev/null || { cat "$T/code-server.log" >&2; exit 1; }

# --- 6. Drive the workbench ----------------------------------------------------------------------
log "browser test"
rm -f "$T"/*.png   # the screenshots are this run's only
set +e
KERNEL_LINE=$(grep -n '^\.visible \.entry' "$run/workspace/transpose_naive.ptx" | head -1 | cut -d: -f1) \
WORKSPACE="$run/workspace" \
TOOLS_DIR="$tools" OUT_DIR="$T" CODE_SERVER_URL="http://127.0.0.1:$port/?folder=$run/workspace" \
  node vscode-extension/test/code-server.cjs
rc=$?
set -e
summary_printed=1
exit "$rc"
