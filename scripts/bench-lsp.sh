#!/usr/bin/env bash
# Builds the language server and its benchmark in release and runs the benchmark
# (server/lsp/examples/lsp_bench.rs): keystroke-to-publishDiagnostics latency, hover
# latency, memory per open document and a 100 MB document, against the real
# `warpsight lsp` binary over pipes.
#
#   scripts/bench-lsp.sh                          # print the tables
#   scripts/bench-lsp.sh --doc docs/benchmarks.md # also update the "Language server
#                                                 # latency" block of that file
#   scripts/bench-lsp.sh --big-mb 0               # skip the 100 MB document
#
# Latency numbers are only meaningful on a quiet machine: the script prints the load
# average first, and the benchmark records it next to the results.
set -euo pipefail
cd "$(dirname "$0")/.."
target="${CARGO_TARGET_DIR:-target}"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
cargo build --release --locked -p warpsight
cargo build --release --locked -p lsp --example lsp_bench
exec "$target/release/examples/lsp_bench" --server "$target/release/warpsight" "$@"
