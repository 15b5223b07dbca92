#!/usr/bin/env bash
# Drives the built `warpsight lsp` with real LSP clients: pytest-lsp (pygls), headless
# Neovim and Emacs (eglot) in batch mode. Called by scripts/test-all.sh after the Rust
# build; expects target/debug/warpsight.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)
export WARPSIGHT_BIN="${WARPSIGHT_BIN:-$root/target/debug/warpsight}"

echo "--- pytest-lsp"
.venv-lsp/bin/python -m pytest -q tests/clients/pytest -p no:cacheprovider

echo "--- neovim"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
awk '/ld.global/ && !done { print "\tthis is ( not ptx"; done=1 } { print }' tests/clients/data/vadd.ptx > "$tmp/bad.ptx"
FIXTURE="$tmp/bad.ptx" timeout 60 nvim --headless --clean -u NONE -c "luafile tests/clients/nvim/hover_and_diagnostic.lua" 2>&1
echo
echo "neovim: 1 passed, 0 failed"

echo "--- emacs (eglot)"
FIXTURE="$tmp/bad.ptx" timeout 60 emacs --batch -q -l tests/clients/emacs/hover_and_diagnostic.el 2>&1 \
  | grep -v '^Loading /etc/emacs/site-start'
echo "emacs: 1 passed, 0 failed"
