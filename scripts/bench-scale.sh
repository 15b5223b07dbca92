#!/usr/bin/env bash
# Builds warpsight and the scale benchmark (server/lsp/examples/scale_bench.rs) in release
# and runs it: time and peak memory of `warpsight analyze` on one kernel of 42k, 84k and
# 168k instructions and on a 100 MB PTX module (table and JSON), and the language
# server's memory after 20 documents of 5 MB were opened and closed.
#
#   scripts/bench-scale.sh                          # print the tables
#   scripts/bench-scale.sh --doc docs/benchmarks.md # also update the "Scale" block there
#   scripts/bench-scale.sh --big-mb 0 --lsp-docs 0  # only the single kernels
#
# The inputs are written to target/scale-bench/. Times are only meaningful on a quiet
# machine: the benchmark records the load average next to the results.
set -euo pipefail
cd "$(dirname "$0")/.."
target="${CARGO_TARGET_DIR:-target}"
cargo build --release --locked -p warpsight
cargo build --release --locked -p lsp --example scale_bench
exec "$target/release/examples/scale_bench" --bin "$target/release/warpsight" "$@"
