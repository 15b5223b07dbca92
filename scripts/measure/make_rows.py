#!/usr/bin/env python3
"""Writes scripts/measure/rows/STEM.csv for every held-out set whose kernels are in this
repository (tests/fixtures/heldout/*.csv rows with a local `.cu` source): each distinct launch
(kernel, grid, block, dynamic shared memory, defines, arguments, footprint) once, without the
GPU and the time, so that run.py times the same configurations on another GPU. The rows of
the examples (rows/vadd.csv, rows/reduce.csv, rows/transpose.csv) and of the fixture corpus
(rows/cu_*.csv) are not generated: each was written with its driver.
"""
import csv
import glob
import os

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
HELD = os.path.join(ROOT, "tests", "fixtures", "heldout")
KEYS = ["kernel", "grid", "block", "dynamic_smem", "defines", "args", "footprint", "carveout"]

by_source = {}
for path in sorted(glob.glob(os.path.join(HELD, "*.csv"))):
    with open(path) as f:
        for r in csv.DictReader(f):
            src = r["source"]
            if src.startswith("..") or not src.endswith(".cu"):
                continue
            stem = os.path.splitext(src)[0]
            key = tuple(r.get(k, "") or "" for k in KEYS)
            rows = by_source.setdefault(stem, {})
            if key not in rows:
                rows[key] = {"source": "tests/fixtures/heldout/" + src,
                             **dict(zip(KEYS, key)),
                             "label": r.get("label", ""),
                             "group": os.path.basename(path)[:-4] + "/" + r["kernel"]}

for stem, rows in by_source.items():
    cols = ["source"] + [k for k in KEYS if any(v[k] for v in rows.values())] + ["label", "group"]
    with open(os.path.join(HERE, "rows", stem + ".csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols, extrasaction="ignore")
        w.writeheader()
        for v in rows.values():
            w.writerow(v)
    print(stem, len(rows))
