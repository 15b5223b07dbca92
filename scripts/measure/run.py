#!/usr/bin/env python3
"""Times the repository's fixture kernels on the GPU of this machine and writes the results as
`warpsight validate` rows (docs/cli.md, "validate").

    python3 scripts/measure/run.py --out DIR [--gpu-id ID] [--only NAME,...] [--jobs N]

Reads every scripts/measure/rows/NAME.csv (validate rows without times; `source` relative to
the repository root), builds scripts/measure/drivers/NAME.cu once per set of defines with the
nvcc on PATH for this GPU's architecture, runs each build over its rows (restarting after a row
that brought the CUDA context down), and writes DIR/NAME.csv (validate rows with `gpu` and
`time_ms`; `source` stays relative to the repository root), DIR/environment.txt (the GPU as
nvidia-smi names it, driver, nvcc, clocks before and after) and DIR/log.txt (build errors and
failed rows).

Builds go to target/measure-build/, keyed by the driver, the harness, the defines and the
architecture, so that they can be made on a machine without a GPU (`--build-only --arch
sm_90`) and carried to one; target/measure-build/NVCC records the nvcc that made them.

Needs a CUDA GPU, nvcc and Python 3.8+; nothing else. bench.cuh says how each row is timed.
"""
import argparse
import concurrent.futures
import csv
import datetime
import hashlib
import os
import re
import shlex
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def sh(cmd, **kw):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, **kw)
    except OSError as e:
        return subprocess.CompletedProcess(cmd, 127, "", str(e))


def gpu_facts():
    q = sh(["nvidia-smi", "--query-gpu=name,driver_version,compute_cap,clocks.sm,clocks.mem,"
            "clocks.max.sm,clocks.max.mem,power.limit,temperature.gpu", "--format=csv,noheader"])
    line = q.stdout.strip().splitlines()[0] if q.returncode == 0 and q.stdout.strip() else ""
    parts = [p.strip() for p in line.split(",")] if line else []
    return line, parts


def nvcc_version():
    v = sh(["nvcc", "--version"])
    m = re.search(r"release ([0-9.]+)", v.stdout)
    return m.group(1) if m else "unknown"


def driver_flags(path):
    """Extra nvcc flags a driver names on a line `// nvcc-flags: ...`."""
    with open(path) as f:
        for line in f:
            m = re.match(r"\s*//\s*nvcc-flags:\s*(.*)", line)
            if m:
                return shlex.split(m.group(1))
    return []


def build(driver, defines, arch, outdir):
    h = hashlib.sha1()
    for path in (driver, os.path.join(HERE, "bench.cuh")):
        with open(path, "rb") as f:
            h.update(f.read())
    h.update(("|" + defines + "|" + arch).encode())
    key = h.hexdigest()[:12]
    exe = os.path.join(outdir, "%s-%s" % (os.path.splitext(os.path.basename(driver))[0], key))
    if os.path.exists(exe):
        return exe, None
    extra = driver_flags(driver)
    # A driver that names its own -gencode targets (sm_90a) gets only those.
    target = [] if any(f.startswith("-gencode") for f in extra) else ["-arch=" + arch]
    cmd = ["nvcc", "-O3", "-std=c++17", "-I", HERE] + target + extra
    for d in filter(None, defines.split(";")):
        cmd.append("-D" + d.strip())
    cmd += ["-o", exe, driver]
    r = sh(cmd)
    if r.returncode != 0:
        return None, " ".join(cmd) + "\n" + r.stdout + r.stderr
    return exe, None


def run_binary(exe, tsv, indices, log, timeout, profile=None):
    """Runs exe over tsv from the first index on; restarts after a crash at the row after the
    last reported one. Returns {index: (status, fields)}. With profile (a list of Nsight
    Compute metrics), runs under ncu instead, one profiled launch per row; each row's fields
    are then the metric values."""
    results = {}
    pending = sorted(indices)
    attempt = 0
    while pending:
        start = pending[0]
        cmd = [exe, tsv, str(start)]
        env = None
        ncu_log = None
        if profile:
            attempt += 1
            ncu_log = "%s.ncu%d.csv" % (exe, attempt)
            cmd = ["ncu", "--profile-from-start", "off", "--clock-control", "none", "--csv", "--page", "raw",
                   "--metrics", ",".join(profile), "--log-file", ncu_log] + cmd
            env = dict(os.environ, BENCH_PROFILE="1")
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
            out, err, rc = r.stdout, r.stderr, r.returncode
        except subprocess.TimeoutExpired as e:
            out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
            err, rc = "timed out after %d s" % timeout, -1
        done = []
        for line in out.splitlines():
            f = line.split("\t")
            if len(f) >= 3 and f[0] in ("RESULT", "FAILED"):
                try:
                    results[int(f[1])] = (f[0], f[2:])
                    if f[0] == "RESULT":
                        done.append(int(f[1]))
                except ValueError:
                    pass
        if profile:
            metrics = read_ncu(ncu_log)
            for k, i in enumerate(done):
                results[i] = ("RESULT", [metrics[k].get(m, "") for m in profile] if k < len(metrics) else [])
        if err.strip():
            log.write("%s: %s\n" % (os.path.basename(exe), err.strip()[-2000:]))
        pending = [i for i in pending if i not in results]
        if "FAILED\t-1\t" in out:
            # The harness could not start (no device, no memory): no row of it can run.
            reason = out.split("FAILED\t-1\t", 1)[1].splitlines()[0]
            for i in pending:
                results[i] = ("FAILED", ["harness: " + reason])
            break
        if pending and rc == 0:
            for i in pending:
                results[i] = ("FAILED", ["not reported"])
            break
        if pending:
            # The row after the last reported one brought the process down.
            crashed = pending[0]
            results[crashed] = ("FAILED", ["process ended (rc %s): %s" % (rc, err.strip()[-300:])])
            pending = pending[1:]
    return results


def read_ncu(path):
    """The kernels of an `ncu --csv --page raw` log, in launch order: {metric: value}."""
    try:
        with open(path) as f:
            lines = [l for l in f if l.startswith('"')]
    except OSError:
        return []
    rows = list(csv.reader(lines))
    if len(rows) < 2:
        return []
    head = rows[0]
    # The second line gives the units.
    return [dict(zip(head, r)) for r in rows[2:]]


PROFILE_METRICS = [
    "gpu__time_duration.sum", "dram__bytes_read.sum", "dram__bytes_write.sum", "lts__t_bytes.sum",
    "l1tex__t_bytes.sum", "sm__warps_active.avg.pct_of_peak_sustained_active", "launch__registers_per_thread",
    "smsp__inst_executed.sum", "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
]
if os.environ.get("BENCH_METRICS"):
    PROFILE_METRICS = os.environ["BENCH_METRICS"].split(",")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--gpu-id", default="", help="warpsight GPU id for the rows (default: from the device name)")
    ap.add_argument("--arch", default="", help="nvcc -arch (default: sm_ of the device's compute capability)")
    ap.add_argument("--only", default="", help="comma-separated row-file names, run in this order")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 4)
    ap.add_argument("--timeout", type=int, default=180, help="seconds per driver process")
    ap.add_argument("--build-only", action="store_true")
    ap.add_argument("--build-dir", default=os.path.join(ROOT, "target", "measure-build"),
                    help="where the builds go (default target/measure-build)")
    ap.add_argument("--profile", action="store_true",
                    help="instead of timing, profile one launch per row with Nsight Compute (ncu on PATH) and "
                         "write OUT/NAME.profile.csv: each row with " + ", ".join(PROFILE_METRICS))
    a = ap.parse_args()

    os.makedirs(a.out, exist_ok=True)
    builddir = a.build_dir
    os.makedirs(builddir, exist_ok=True)
    log = open(os.path.join(a.out, "log.txt"), "a")
    facts_line, facts = gpu_facts()
    arch = a.arch or ("sm_" + facts[2].replace(".", "") if len(facts) > 2 else "sm_90")
    name = facts[0] if facts else "unknown GPU"
    gpu_id = a.gpu_id or name
    stamp = os.path.join(builddir, "NVCC")
    if os.path.exists(stamp):
        with open(stamp) as f:
            nvcc = f.read().strip()
    else:
        nvcc = nvcc_version()
        with open(stamp, "w") as f:
            f.write(nvcc + "\n")
    today = datetime.date.today().isoformat()
    with open(os.path.join(a.out, "environment.txt"), "a") as env:
        env.write("date %s\nnvcc %s\narch %s\nbefore: %s\n" % (today, nvcc, arch, facts_line))

    rowdir = os.path.join(HERE, "rows")
    names = sorted(os.path.splitext(f)[0] for f in os.listdir(rowdir) if f.endswith(".csv"))
    if a.only:
        # In the order given: the sets that matter most first, in case the time runs out.
        names = [n for n in a.only.split(",") if n in names]

    sets = {}
    for n in names:
        with open(os.path.join(rowdir, n + ".csv")) as f:
            rows = list(csv.DictReader(f))
        sets[n] = rows
    if not a.only:
        # The examples first, then the fixture corpus, then the held-out kernels.
        def rank(n):
            src = sets[n][0]["source"] if sets[n] else ""
            return (0 if src.startswith("examples/") else 1 if src.startswith("tests/fixtures/cu/") else 2, n)
        sets = {n: sets[n] for n in sorted(sets, key=rank)}

    # Build every (driver, defines) pair in parallel.
    jobs = {}
    for n, rows in sets.items():
        driver = os.path.join(HERE, "drivers", n + ".cu")
        for r in rows:
            jobs.setdefault((driver, r.get("defines", "") or ""), None)
    t0 = time.time()
    with concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as ex:
        futs = {ex.submit(build, d, defs, arch, builddir): (d, defs) for (d, defs) in jobs}
        for fu in concurrent.futures.as_completed(futs):
            exe, err = fu.result()
            jobs[futs[fu]] = exe
            if err:
                log.write("BUILD FAILED %s\n" % err)
    print("built %d binaries in %.0f s (%d failed)" % (len(jobs), time.time() - t0,
                                                      sum(1 for v in jobs.values() if v is None)), flush=True)
    if a.build_only:
        return 0

    total_ok = total = 0
    for n, rows in sets.items():
        driver = os.path.join(HERE, "drivers", n + ".cu")
        by_exe = {}
        for i, r in enumerate(rows):
            by_exe.setdefault(jobs[(driver, r.get("defines", "") or "")], []).append(i)
        results = {}
        t1 = time.time()
        for exe, idx in by_exe.items():
            if exe is None:
                for i in idx:
                    results[i] = ("FAILED", ["build failed"])
                continue
            tsv = exe + ".rows.tsv"
            with open(tsv, "w") as f:
                for i in idx:
                    r = rows[i]
                    f.write("\t".join([str(i), r["kernel"], r["grid"], r["block"], r.get("dynamic_smem", "") or "",
                                       r.get("args", "") or ""]) + "\n")
            results.update(run_binary(exe, tsv, idx, log, a.timeout, PROFILE_METRICS if a.profile else None))
        if a.profile:
            cols = ["kernel", "grid", "block", "dynamic_smem", "defines", "args"]
            with open(os.path.join(a.out, n + ".profile.csv"), "w", newline="") as f:
                w = csv.writer(f)
                w.writerow(["row"] + cols + PROFILE_METRICS)
                for i, r in enumerate(rows):
                    st, fl = results.get(i, ("FAILED", []))
                    w.writerow([i] + [r.get(c, "") for c in cols] + (fl if st == "RESULT" else []))
            print("%-28s profiled in %5.1f s" % (n, time.time() - t1), flush=True)
            continue
        fields = [k for k in rows[0].keys() if k not in ("time_ms", "gpu", "source_of_measurement")] if rows else []
        outcols = ["source", "kernel", "gpu"] + [k for k in fields if k not in ("source", "kernel")] + \
                  ["time_ms", "source_of_measurement"]
        ok = 0
        with open(os.path.join(a.out, n + ".csv"), "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=outcols)
            w.writeheader()
            for i, r in enumerate(rows):
                st, fl = results.get(i, ("FAILED", ["no result"]))
                if st != "RESULT":
                    log.write("%s row %d (%s %s %s %s): %s\n" % (n, i, r["kernel"], r["grid"], r["block"],
                                                                r.get("args", ""), " ".join(fl)))
                    continue
                ok += 1
                med, launches, mn, mx = fl[0], fl[1], fl[2], fl[3]
                out = {k: r.get(k, "") for k in outcols}
                out["gpu"] = gpu_id
                out["time_ms"] = med
                out["source_of_measurement"] = (
                    "warpsight scripts/measure on an %s (driver %s, nvcc %s, %s), %s: median of %s launches "
                    "timed alone with CUDA events, L2 overwritten before each (min %s, max %s ms)"
                    % (name, facts[1] if len(facts) > 1 else "?", nvcc, arch, today, launches, mn, mx))
                w.writerow(out)
        total_ok += ok
        total += len(rows)
        print("%-28s %4d/%4d rows in %5.1f s" % (n, ok, len(rows), time.time() - t1), flush=True)
    after_line, _ = gpu_facts()
    with open(os.path.join(a.out, "environment.txt"), "a") as env:
        env.write("after: %s\n" % after_line)
    print("%d/%d rows timed; see %s" % (total_ok, total, a.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
