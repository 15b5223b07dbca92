#!/usr/bin/env bash
# Runs every test of warpsight on a fresh Debian machine, installing what the tests need
# first (idempotently: a second run skips what is already there).
#
#   scripts/test-all.sh            # everything
#   WARPSIGHT_SKIP_INSTALL=1 ...   # only run, never install
#
# What it installs, and where:
#   .cuda/        a Python venv with NVIDIA's CUDA compiler and header wheels
#                 (scripts/cuda-requirements.txt; about 1.2 GB installed, cuBLAS is half)
#   .venv-lsp/    a Python venv with pytest-lsp (tests/clients/requirements.txt)
#   target/vscode-test/  code-server, playwright-core and the extension's npm packages
#                 (scripts/test-vscode.sh; it also installs Debian's chromium when missing)
#   target/eclipse/lib/  LSP4J for the Eclipse plug-in (scripts/test-eclipse.sh; it also
#                 installs the Debian Eclipse platform jars, JUnit 5 and Xvfb it lists)
#   Debian        the packages listed on the `#debian:` lines below, when missing
#                 (neovim and emacs-nox + elpa-eglot: real LSP clients for tests/clients)
#debian: neovim
#debian: emacs-nox
#debian: elpa-eglot
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

log() { printf '\n==> %s\n' "$*"; }
. scripts/debian-packages.sh

# --- 1. Installs -----------------------------------------------------------------------
if [ -z "${WARPSIGHT_SKIP_INSTALL:-}" ]; then
  log "CUDA toolchain venv (.cuda)"
  if [ ! -x .cuda/bin/python ]; then python3 -m venv .cuda; fi
  # Install when any pinned requirement is missing (a new header package included).
  frozen=$(.cuda/bin/pip freeze 2>/dev/null || true)
  for req in $(grep -v '^#' scripts/cuda-requirements.txt); do
    if ! grep -qxF "$req" <<<"$frozen"; then
      .cuda/bin/pip install -q --disable-pip-version-check -r scripts/cuda-requirements.txt
      break
    fi
  done
  log "LSP client venv (.venv-lsp)"
  if [ ! -x .venv-lsp/bin/python ]; then python3 -m venv .venv-lsp; fi
  if ! .venv-lsp/bin/python -c 'import pytest_lsp' 2>/dev/null; then
    .venv-lsp/bin/pip install -q --disable-pip-version-check -r tests/clients/requirements.txt
  fi
  install_debian_packages scripts/test-all.sh
fi
export WARPSIGHT_CUDA_HOME="$root/.cuda/lib/python3.11/site-packages/nvidia/cu13"
if [ ! -x "$WARPSIGHT_CUDA_HOME/bin/nvcc" ]; then
  WARPSIGHT_CUDA_HOME=$(ls -d "$root"/.cuda/lib/python3*/site-packages/nvidia/cu13 2>/dev/null | head -1)
fi
# The CLI and the language server find this nvcc first (docs/cuda.md, discovery order).
# For the tests only: outside this script warpsight does not run a compiler found inside
# the repository (docs/security.md); `warpsight setup-cuda` installs one for the user.
export WARPSIGHT_NVCC="$WARPSIGHT_CUDA_HOME/bin/nvcc"
# Tests that need the compiler fail (instead of returning early) when this is set.
export WARPSIGHT_REQUIRE_CUDA=1
# Keep the compile cache inside the build tree, not in the user's cache directory.
export XDG_CACHE_HOME="$root/target/test-cache"

# --- 2. Rust: build, unit and integration tests ------------------------------------------
log "cargo build"
cargo build --workspace --all-targets --locked
# The workspace lints (no printing to stdout in library crates: stdout is the LSP wire)
# are clippy lints: they hold only if clippy runs.
log "cargo clippy"
if cargo clippy --version >/dev/null 2>&1; then
  cargo clippy --workspace --all-targets --locked -- -D warnings
else
  echo "clippy is not installed with this Rust toolchain: lints not checked" >&2
fi
log "cargo test"
# The bounded fuzz run (proptest over mutated real PTX) is part of the ptx crate's tests;
# PROPTEST_CASES bounds it.
PROPTEST_CASES="${PROPTEST_CASES:-512}" cargo test --workspace --locked --no-fail-fast

# --- 3. The README's main command (on the debug build), as a newcomer runs it -------------
log "warpsight analyze examples/ (README)"
target/debug/warpsight analyze examples/ > target/readme-analyze.txt
grep -q "kernel vadd" target/readme-analyze.txt
echo "README command: 1 passed, 0 failed"

# --- 3b. The GPU timing harness still builds (scripts/measure; running it needs a GPU) ----
log "scripts/measure drivers build (nvcc, sm_90)"
rm -rf target/measure-check
PATH="$WARPSIGHT_CUDA_HOME/bin:$PATH" python3 scripts/measure/run.py --build-only --arch sm_90 \
  --build-dir target/measure-check/build --out target/measure-check --only vadd,reduce,transpose,cu_spmv_csr,cu_wgmma_sm90a
if [ -s target/measure-check/log.txt ]; then cat target/measure-check/log.txt >&2; exit 1; fi
echo "measure drivers: 5 built"

# --- 4. Real LSP clients against the built server ------------------------------------------
log "LSP clients (pytest-lsp, neovim, emacs)"
tests/clients/run.sh

# --- 5. The VS Code extension inside real VS Code (code-server + headless Chromium) -------
log "VS Code extension (code-server)"
WARPSIGHT_SERVER_BIN="$root/target/debug/warpsight" scripts/test-vscode.sh

# --- 6. The Eclipse plug-in: built with javac, JUnit 5 against the server, view under Xvfb --
log "Eclipse plug-in (scripts/test-eclipse.sh)"
WARPSIGHT_BIN="$root/target/debug/warpsight" scripts/test-eclipse.sh

log "done"
echo "The tests used the CUDA compiler in .cuda/ through WARPSIGHT_NVCC. warpsight does not"
echo "run a compiler found inside a repository on its own (docs/security.md): to analyse .cu"
echo "files with it, run \`warpsight setup-cuda\` once (installs for your user, found with no"
echo "setting), or export WARPSIGHT_NVCC=$WARPSIGHT_NVCC"
