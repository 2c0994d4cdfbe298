#!/usr/bin/env python3
"""The compact CSVs of docs/results.md's tables from what scripts/parity.sh
and scripts/node.sh wrote.

Usage: parity_tables.py [--dir runs/parity] [--node runs/node-h200/p2-16-c] [--out results]
Reads the raw runs of --dir (scripts/parity.sh trial, overhead_vs, apps) and
writes results/parity-trial.csv, parity-overhead.csv, parity-overheadv.csv and
parity-apps.csv; with --node, the trial runs of that scripts/node.sh directory
into results/node-h200-trial.csv.  A table whose runs are absent is not
written.  `python3 tools/tables.py` then renders them into docs/results.md.
"""
import argparse
import collections
import csv
import glob
import math
import os
import re
import statistics

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def rows_of(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def gm(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def size(n):
    n = int(n)
    return f"{n >> 10} KiB" if n >= 1024 and n % 1024 == 0 else f"{n} B"


def apps(d):
    """a2a-fft and a2a-closure (--compare native/auto/native, one table per
    process appended), hpcc and FFTW under the shim (.tsv of alternating runs)."""
    out = [["application", "P", "native all-to-all s", "auto all-to-all s", "auto/native", "auto ran, or the control"]]

    def phase_files(ext):
        """(name, P, path) of the phase's own apps-NAME-pP.EXT files."""
        found = []
        for path in glob.glob(os.path.join(d, "apps-*-p*." + ext)):
            m = re.fullmatch(r"apps-(.+)-p(\d+)\." + ext, os.path.basename(path))
            if m:
                found.append((m.group(1), int(m.group(2)), path))
        return sorted(found)

    for name, P, path in phase_files("txt"):
        procs, rows = [], []
        for line in open(path):
            f = line.split()
            if len(f) >= 6 and f[0] in ("native", "auto") and re.match(r"[\d.]+$", f[-3]):
                rows.append((f[0], float(f[-3]), " ".join(f[1:-4])))
            elif line.startswith("# medians") and rows:
                natives = [r for r in rows if r[0] == "native"]
                auto = next((r for r in rows if r[0] == "auto"), None)
                if natives and auto:
                    procs.append((natives[0][1], auto[1], auto[2], natives[1][1] if len(natives) > 1 else None))
                rows = []
        if not procs:
            continue
        ratio = [a / n for n, a, _, _ in procs]
        n, a = statistics.median(p[0] for p in procs), statistics.median(p[1] for p in procs)
        ran = collections.Counter(p[2] for p in procs).most_common()
        cell = ran[0][0] if len(ran) == 1 else ", ".join(
            f"{what} in {k} process{'es' if k > 1 else ''}" for what, k in ran)
        if len(procs) > 1:
            cell += f"; {len(procs)} processes, auto/native {min(ratio):.3f}-{max(ratio):.3f}"
            ctl = [p[3] / p[0] for p in procs if p[3]]
            if ctl:
                cell += f"; native again {statistics.median(ctl):.3f} ({min(ctl):.3f}-{max(ctl):.3f})"
        out.append([name, str(P), f"{n:.6f}", f"{a:.6f}", f"{statistics.median(ratio):.3f}", cell])
    for name, P, path in phase_files("tsv"):
        t = {"native": [], "auto": [], "control": []}
        for line in open(path):
            kind, _, s = line.split()
            t[kind].append(float(s))
        n, a = statistics.median(t["native"]), statistics.median(t["auto"])
        control = (f"library again: {statistics.median(t['control']) / n:.3f} of library"
                   if t["control"] else "")
        out.append([f"{name} (shim)", str(P), f"{n:.6f}", f"{a:.6f}", f"{a / n:.3f}", control])
    return out if len(out) > 1 else None


LIBS = {"ompi-cma": "Open MPI 4.1.4, CMA", "ompi-none": "Open MPI 4.1.4, no single copy", "mpich": "MPICH 4.0.2",
        "node-cma": "Open MPI 4.1.6, 16-core node, CMA", "node-none": "Open MPI 4.1.6, 16-core node, no single copy"}


def bench_cells(paths):
    """bytes -> {algorithm: row} over several bench CSVs of one case."""
    by = {}
    for path in paths:
        for r in rows_of(path):
            by.setdefault(int(r["bytes"]), {})[r["algorithm"]] = r
    return by


def first_call_runs(paths):
    """Per bench CSV of auto's first calls (-x 0): size -> the mean of auto's
    calls over the library's."""
    return [{b: float(v["auto"]["mean_us"]) / float(v["native"]["mean_us"])
             for b, v in bench_cells([path]).items() if "auto" in v and "native" in v and v["auto"].get("mean_us")}
            for path in paths]


def trial_table(d):
    """Issue 27's acceptance: auto after its trial, and over its first 100
    calls, against the library's own call (scripts/parity.sh trial)."""
    def order(case):
        name, P = case
        lib = next(k for k in LIBS if name.startswith(k))
        return list(LIBS).index(lib), int(P), ["alltoall", "uniform", "power-law"].index(name[len(lib) + 1:])
    cases = sorted({re.search(r"trial-(.+)-p(\d+)-small\.csv", os.path.basename(p)).groups()
                    for p in glob.glob(os.path.join(d, "trial-*-small.csv"))}, key=order)
    if not cases:
        return None
    out = [["library", "P", "collective", "auto/native gm", "worst (at)", "paired gm", "worst (at)",
            "first 100 calls gm", "worst (at)", "shm/native gm", "auto ran"]]
    for name, P in cases:
        lib = next(k for k in LIBS if name.startswith(k))
        w = name[len(lib) + 1:]
        by = bench_cells([os.path.join(d, f"trial-{name}-p{P}-{part}.csv") for part in ("small", "large")
                          if os.path.exists(os.path.join(d, f"trial-{name}-p{P}-{part}.csv"))])
        auto = {b: float(v["auto"]["median_us"]) / float(v["native"]["median_us"]) for b, v in by.items()
                if "auto" in v and "native" in v}
        paired = {b: float(v["auto"]["paired_to_native"]) for b, v in by.items()
                  if "auto" in v and v["auto"].get("paired_to_native")}
        shm = [float(v["shm"]["median_us"]) / float(v["native"]["median_us"]) for v in by.values() if "shm" in v]
        ran = {}
        for v in by.values():
            if "auto" in v:
                ran[v["auto"]["resolved"]] = ran.get(v["auto"]["resolved"], 0) + 1
        runs = {}  # size -> the ratio of means in each process
        for r in first_call_runs(glob.glob(os.path.join(d, f"first-{name}-p{P}-*.csv"))):
            for b, x in r.items():
                runs.setdefault(b, []).append(x)
        first = {b: statistics.median(x) for b, x in runs.items()}
        wa = max(auto, key=auto.get)
        pcells = ["-", "-"]
        if paired:
            wp = max(paired, key=paired.get)
            pcells = [f"{gm(list(paired.values())):.3f}", f"{paired[wp]:.3f} ({size(wp)})"]
        fcells = ["-", "-"]
        if first:
            wf = max(first, key=first.get)
            fcells = [f"{gm(list(first.values())):.3f}", f"{first[wf]:.3f} ({size(wf)})"]
        coll = "alltoall" if w == "alltoall" else f"alltoallv {w}"
        out.append([LIBS[lib], P, coll, f"{gm(list(auto.values())):.3f}", f"{auto[wa]:.3f} ({size(wa)})"]
                   + pcells + fcells + [f"{gm(shm):.3f}",
                   ", ".join(f"{k} x{n}" for k, n in sorted(ran.items(), key=lambda kv: -kv[1]))])
    return out


def overhead_vs(d, name):
    """What the change adds to the call path: the overhead runs of this build
    and of another, alternating (scripts/parity.sh overhead_vs); name is
    overhead (alltoall) or overheadv (alltoallv)."""
    paths = glob.glob(os.path.join(d, f"{name}-vs-new-p*-*.csv"))
    if not paths:
        return None
    cols = ["a2a/native", "plan/native", "spread-out", "auto"]
    out = [["P", "bytes"] + [f"{c}: before, now (diff)" for c in cols]]
    for P in sorted({re.search(r"-p(\d+)-", p).group(1) for p in paths}, key=int):
        added = {}
        for which in ("base", "new"):
            for path in glob.glob(os.path.join(d, f"{name}-vs-{which}-p{P}-*.csv")):
                for b, v in bench_cells([path]).items():
                    for c in cols:
                        if c in v:
                            added.setdefault((which, b, c), []).append(
                                float(v[c]["median_us"]) - float(v["native"]["median_us"]))
        for b in sorted({k[1] for k in added}):
            cells = []
            for c in cols:
                before, now = (statistics.median(added.get((w, b, c), [float("nan")])) for w in ("base", "new"))
                cells.append(f"{before:+.3f}, {now:+.3f} ({now - before:+.3f})")
            out.append([P, size(b)] + cells)
    return out


def shim_nb(d):
    """The shim's MPI_Ialltoall + MPI_Wait over its blocking MPI_Alltoall
    (pure times, geometric mean over the sizes, the worst, and over 64 KiB ..
    1 MiB), and the mean overlap over the sizes of the shim's call, a2a's
    own A2A_Ialltoall and the library's MPI_Ialltoall (shim-nb-*.csv)."""
    paths = sorted(glob.glob(os.path.join(d, "shim-nb-p*-*-*.csv")))
    if not paths:
        return None
    out = [["P", "single copy", "algorithm", "nonblocking / blocking: gm (worst, at)", "gm 64 KiB .. 1 MiB",
            "overlap: shim", "a2a's own", "the library's"]]
    keyed = []
    for path in paths:
        np_, spec, copy = re.match(r"shim-nb-p(\d+)-(.+)-(cma|none)\.csv", os.path.basename(path)).groups()
        by = {}
        for r in rows_of(path):
            by.setdefault(r["algorithm"], {})[int(r["bytes"])] = r
        nb, bl = by["shim:" + spec], by["shim-blocking:" + spec]
        ratios = {m: float(nb[m]["pure_us"]) / float(bl[m]["pure_us"]) for m in nb}
        worst = max(ratios, key=ratios.get)
        large = [v for m, v in ratios.items() if m >= 65536]
        mean = lambda rows: sum(float(r["overlap_pct"]) for r in rows.values()) / len(rows)
        keyed.append(((int(np_), copy != "cma", ["tra", "shm", "auto"].index(spec) if spec in ("tra", "shm", "auto") else 9),
                      [np_, "CMA" if copy == "cma" else "none", spec,
                       f"{gm(list(ratios.values())):.2f} ({ratios[worst]:.2f}, {size(worst)})", f"{gm(large):.2f}",
                       f"{mean(nb):.1f} %", f"{mean(by[spec]):.1f} %", f"{mean(by['native']):.1f} %"]))
    return out + [row for _, row in sorted(keyed)]


def write(path, rows):
    if rows is None:
        print(f"{path}: no runs, not written")
        return
    with open(path, "w", newline="") as f:
        csv.writer(f, lineterminator="\n").writerows(rows)
    print(f"{path}: {len(rows) - 1} rows")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir", default="runs/parity", help="scripts/parity.sh's output (PARITY_OUT)")
    ap.add_argument("--node", help="a scripts/node.sh trial directory (OUT) for node-h200-trial.csv")
    ap.add_argument("--out", default=os.path.join(ROOT, "results"))
    args = ap.parse_args()
    if args.node:
        write(os.path.join(args.out, "node-h200-trial.csv"), trial_table(args.node))
        return
    write(os.path.join(args.out, "parity-trial.csv"), trial_table(args.dir))
    write(os.path.join(args.out, "parity-overhead.csv"), overhead_vs(args.dir, "overhead"))
    write(os.path.join(args.out, "parity-overheadv.csv"), overhead_vs(args.dir, "overheadv"))
    write(os.path.join(args.out, "parity-apps.csv"), apps(args.dir))
    write(os.path.join(args.out, "parity-shim-nb.csv"), shim_nb(args.dir))


if __name__ == "__main__":
    main()
