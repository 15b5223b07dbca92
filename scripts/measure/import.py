#!/usr/bin/env python3
"""Turns run.py's output (DIR/NAME.csv, sources relative to the repository root) into held-out
rows for `warpsight validate`: every row of the re-timed held-out sets into
tests/fixtures/heldout/OUT_PREFIX-heldout-kernels.csv, the examples' and the fixture corpus's
into tests/fixtures/heldout/OUT_PREFIX-fixtures.csv, with `source` relative to
tests/fixtures/heldout and `group` prefixed by the GPU id.

    python3 scripts/measure/import.py DIR PREFIX      (e.g. DIR h200)
"""
import csv
import glob
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
HELD = os.path.join(ROOT, "tests", "fixtures", "heldout")
COLS = ["source", "kernel", "gpu", "grid", "block", "dynamic_smem", "defines", "args", "footprint", "carveout",
        "arch", "time_ms", "label", "group", "source_of_measurement"]


def main():
    src_dir, prefix = sys.argv[1], sys.argv[2]
    out = {"heldout-kernels": [], "fixtures": []}
    for path in sorted(glob.glob(os.path.join(src_dir, "*.csv"))):
        name = os.path.splitext(os.path.basename(path))[0]
        with open(path) as f:
            for r in csv.DictReader(f):
                r["source"] = os.path.relpath(os.path.join(ROOT, r["source"]), HELD)
                r["group"] = "%s-%s" % (prefix, r.get("group", name))
                kind = "heldout-kernels" if r["source"].count("/") == 0 else "fixtures"
                out[kind].append(r)
    for kind, rows in out.items():
        cols = [c for c in COLS if any(r.get(c) for r in rows)]
        dest = os.path.join(HELD, "%s-%s.csv" % (prefix, kind))
        with open(dest, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=cols, extrasaction="ignore")
            w.writeheader()
            for r in rows:
                w.writerow(r)
        print("%s: %d rows" % (os.path.relpath(dest, ROOT), len(rows)))


if __name__ == "__main__":
    main()
