#!/usr/bin/env python3
"""The tables of docs/results.md from what scripts/parity.sh wrote.

Usage: parity_tables.py [--dir results/parity] [--update docs/results.md]
Prints markdown; with --update, replaces the text between the markers
<!-- parity begin --> and <!-- parity end --> of that file.
"""
import argparse
import collections
import csv
import glob
import math
import os
import re
import statistics


def rows_of(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def gm(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def size(n):
    n = int(n)
    return f"{n >> 10} KiB" if n >= 1024 and n % 1024 == 0 else f"{n} B"


def overhead(d):
    out = ["**Call overhead** (`mpirun -np P build/a2a bench -m 16:1024 -b 100 -i 300 -x 20 -a a2a/native "
           "-a plan/native -a spread-out -a auto -a agree/native -a agree/spread-out -a agree/auto`): median us "
           "per call (means of 100 back-to-back calls), and in brackets what a2a adds to MPI_Alltoall's time.",
           ""]
    cols = ["native", "a2a/native", "plan/native", "spread-out", "auto", "agree/native", "agree/spread-out",
            "agree/auto"]
    names = ["MPI_Alltoall", "a2a native", "plan/native", "spread-out", "auto", "agree: native", "agree: spread-out",
             "agree: auto"]
    for path in sorted(glob.glob(os.path.join(d, "overhead-p*.csv"))):
        rows = rows_of(path)
        P = rows[0]["procs"]
        out.append(f"P = {P}:")
        out.append("")
        out.append("| bytes | " + " | ".join(names) + " |")
        out.append("|---" * (len(cols) + 1) + "|")
        by = {}
        for r in rows:
            by.setdefault(r["bytes"], {})[r["algorithm"]] = float(r["median_us"])
        for b, v in by.items():
            mpi = v["native"]
            cells = [f"{mpi:.3f}"] + [f"{v[c]:.3f} ({v[c] - mpi:+.3f})" for c in cols[1:] if c in v]
            out.append(f"| {size(b)} | " + " | ".join(cells) + " |")
        out.append("")
    return out


def twins(d):
    out = ["**Twins** (`mpirun -np P build/a2a bench --twins -m 16:65536 -i 200 -x 10 -c`, with `-b 10` at P = 2; "
           "MPICH: `mpiexec.mpich -n P build-mpich/a2a bench --twins ... -i 100 -x 2`, `-i 15` at P = 4 and 8): each a2a algorithm's median "
           "over its twin's, the MPI library's own forced to the same algorithm, in the same run; geometric mean "
           "over 16 B .. 64 KiB and the worst size.", ""]
    out.append("| library | P | a2a | twin | geometric mean | worst (at) |")
    out.append("|---|---|---|---|---|---|")
    for path in sorted(glob.glob(os.path.join(d, "twins-*-p*.txt"))):
        lib, P = re.search(r"twins-(\w+)-p(\d+)", path).groups()
        for line in open(path):
            m = re.match(r"# twin: (\S+)\s+/ (\S+)\s+geometric mean ([\d.]+), worst ([\d.]+) \(at (\d+) B\)", line)
            if m:
                a, t, g, w, at = m.groups()
                out.append(f"| {'Open MPI 4.1.4' if lib == 'ompi' else 'MPICH 4.0.2'} | {P} | `{a}` | `{t}` | "
                           f"{float(g):.3f} | {float(w):.3f} ({size(at)}) |")
    out.append("")
    return out


def auto_vs_best(d):
    out = ["**auto against the best row** (`scripts/parity.sh avb`: `a2a bench --sweep-radix -a linear -a spread-out "
           "-a scattered -a pairwise -a factor -a shm -a auto -a bruck-zero-rotation -a bruck-modified` for alltoall, "
           "`--collective alltoallv --workload W` with `-a padded-bruck -a two-phase-bruck` instead of the Bruck "
           "rows, `-m 16:262144 -i 60 -x 5 -c`, default error mode; tuned: `A2A_TUNING_FILE` from "
           "`scripts/parity.sh tune`; model: none): auto's median over the best row's (native included) per size, "
           "geometric mean and worst over the 15 sizes.", ""]
    out.append("| P | collective | tuned: gm | tuned: worst (at, best row) | model: gm | model: worst (at, best row) |")
    out.append("|---|---|---|---|---|---|")
    summary = {}
    table = {}
    for path in sorted(glob.glob(os.path.join(d, "avb-*-p*.csv"))):
        mode = "tuned" if "avb-tuned" in path else "model"
        rows = rows_of(path)
        groups = {}
        for r in rows:
            groups.setdefault(int(r["bytes"]), []).append(r)
        ratios = []
        worst = (0, None, None)
        for b, rs in groups.items():
            fixed = [r for r in rs if not r["algorithm"].startswith(("auto", "agree/", "plan/"))]
            auto = [r for r in rs if r["algorithm"] == "auto"]
            if not fixed or not auto:
                continue
            best = min(fixed, key=lambda r: float(r["median_us"]))
            x = float(auto[0]["median_us"]) / float(best["median_us"])
            ratios.append(x)
            if x > worst[0]:
                worst = (x, b, f"{best['resolved']}; auto ran {auto[0]['resolved']}")
        P = int(rows[0]["procs"])
        coll = rows[0]["collective"] + (f" {rows[0]['workload']}" if rows[0]["workload"] else "")
        table.setdefault((P, coll), {})[mode] = (gm(ratios), worst)
        summary.setdefault(mode, []).extend(ratios)
    for (P, coll), m in sorted(table.items()):
        cells = []
        for mode in ("tuned", "model"):
            if mode in m:
                g, (w, at, what) = m[mode]
                cells += [f"{g:.3f}", f"{w:.3f} ({size(at)}, {what})"]
            else:
                cells += ["-", "-"]
        out.append(f"| {P} | {coll} | " + " | ".join(cells) + " |")
    out.append("")
    for mode, rs in summary.items():
        out.append(f"- {mode}: {len(rs)} cases, auto/best geometric mean {gm(rs):.3f}, worst {max(rs):.3f}, "
                   f"{sum(1 for x in rs if x <= 1.10)} within 1.10")
    out.append("")
    return out


def apps(d):
    out = ["**Applications** (`scripts/parity.sh apps`): all-to-all seconds, auto over native. a2a-fft and "
           "a2a-closure: `--compare native --compare auto --compare native`, medians of interleaved runs (a2a-fft `--repeat 31`, a2a-closure `--repeat 51`), the maximum "
           "over ranks, in 5 processes at P = 2 (1 above; earlier stops' rows 1 process, no control): the median of the processes' times and of their ratios. hpcc (`tests/apps/hpccinf.txt`) and the FFTW round trip, unchanged, under the preloaded "
           "shim (`A2A_ALLTOALL(V)` unset: auto) against the MPI library alone (preloaded `mpi_timer`, the same "
           "timer), rank 0's time in MPI_Alltoall(v), medians of alternating runs (hpcc 7, FFTW 41; fftw-x20: the "
           "same plans reused for 20 more round trips, `FFTW_ROUNDTRIP_REPEAT=20`, 15 runs); the FFTW rows' last "
           "column times the library alone a second time in the same rotation (the spread of two identical "
           "set-ups).", ""]
    out.append("| application | P | native all-to-all s | auto all-to-all s | auto/native | auto ran, or the control |")
    out.append("|---|---|---|---|---|---|")
    def phase_files(ext):
        """(name, P, path) of the phase's own apps-NAME-pP.EXT files, by name and P
        (not copies kept beside them under another suffix)."""
        found = []
        for path in glob.glob(os.path.join(d, "apps-*-p*." + ext)):
            m = re.fullmatch(r"apps-(.+)-p(\d+)\." + ext, os.path.basename(path))
            if m:
                found.append((m.group(1), int(m.group(2)), path))
        return sorted(found)

    for name, P, path in phase_files("txt"):
        # One table per process (parity.sh own_apps appends them): its rows
        # native, auto and, where run, native again (the control).
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
        out.append(f"| {name} | {P} | {n:.6f} | {a:.6f} | {statistics.median(ratio):.3f} | {cell} |")
    for name, P, path in phase_files("tsv"):
        t = {"native": [], "auto": [], "control": []}
        for line in open(path):
            kind, _, s = line.split()
            t[kind].append(float(s))
        n, a = statistics.median(t["native"]), statistics.median(t["auto"])
        control = (f"library again: {statistics.median(t['control']) / n:.3f} of library"
                   if t["control"] else "")
        out.append(f"| {name} (shim) | {P} | {n:.6f} | {a:.6f} | {a / n:.3f} | {control} |")
    out.append("")
    return out


def csvs_by_procs(d, prefix):
    """The bench CSVs `prefix-*-pP.csv`, by P, then name."""
    return sorted(glob.glob(os.path.join(d, prefix + "-*-p*.csv")),
                  key=lambda p: (int(re.search(r"-p(\d+)\.csv", p).group(1)), p))


def ratios(rows, algorithm):
    """Size -> the row's median over the library's in the same run."""
    return {int(r["bytes"]): float(r["ratio_to_native"]) for r in rows if r["algorithm"] == algorithm}


def shm_table(d):
    paths = csvs_by_procs(d, "shm")
    if not paths:
        return []
    shown = [16, 256, 1024, 4096, 65536, 1 << 20, 8 << 20]
    out = ["**shm** (`scripts/parity.sh shm`: `a2a bench --collective C -m 16:8388608 -i 50 -x 5 -c -a shm -a auto`, "
           "`-b 10` at P = 2; alltoallv with the uniform workload): median over the library's own call in the same "
           "run at a few sizes; where shm starts to win for good; auto over the library, geometric mean and worst "
           "over all sizes.", ""]
    out.append("| P | collective | " + " | ".join(size(n) for n in shown) + " | shm wins from | auto/MPI gm | auto/MPI worst (ran) |")
    out.append("|---|---|" + "---|" * len(shown) + "---|---|---|")
    for path in paths:
        coll, P = re.search(r"shm-(\w+)-p(\d+)\.csv", path).groups()
        rows = rows_of(path)
        shm = ratios(rows, "shm")
        auto = {int(r["bytes"]): (float(r["ratio_to_native"]), r["resolved"]) for r in rows if r["algorithm"] == "auto"}
        sizes = sorted(shm)
        wins = next((n for i, n in enumerate(sizes) if all(shm[m] < 1 for m in sizes[i:])), None)
        worst = max(auto, key=lambda n: auto[n][0])
        cells = [f"{shm[n]:.2f}" if n in shm else "-" for n in shown]
        out.append(f"| {P} | {coll} | " + " | ".join(cells) + f" | {size(wins) if wins else 'never'} | "
                   f"{gm([a for a, _ in auto.values()]):.3f} | {auto[worst][0]:.3f} ({size(worst)}, {auto[worst][1]}) |")
    out.append("")
    steady = csvs_by_procs(d, "steady")
    if steady:
        out += ["**shm back to back** (`scripts/parity.sh shm`: `a2a bench -m 16:1024 -b 100 -i 30 -x 3 -c -a shm "
                "-a auto`): the mean of 100 calls in a row per sample, no barrier between them; shm over the "
                "library's own call, at 16 B, 256 B and 1 KiB and the range over the 7 sizes.", ""]
        out.append("| P | 16 B | 256 B | 1 KiB | range | auto ran |")
        out.append("|---|---|---|---|---|---|")
        for path in steady:
            P = re.search(r"-p(\d+)\.csv", path).group(1)
            rows = rows_of(path)
            shm = ratios(rows, "shm")
            ran = sorted({r["resolved"] for r in rows if r["algorithm"] == "auto"})
            cells = [f"{shm[n]:.2f}" if n in shm else "-" for n in (16, 256, 1024)]
            out.append(f"| {P} | " + " | ".join(cells) + f" | {min(shm.values()):.2f}-{max(shm.values()):.2f} | "
                       + ", ".join(ran) + " |")
        out.append("")
    return out


def intra_table(d):
    paths = csvs_by_procs(d, "intra")
    if not paths:
        return []
    shown = [16, 256, 1024, 4096, 65536]
    out = ["**intra=shm against intra=p2p** (`scripts/parity.sh intra`: `A2A_NODE_SIZE=4 mpirun -np P a2a bench "
           "[--collective alltoallv] -m 16:65536 -i 40 -x 5 -c -a X -a X:intra=shm ...`, virtual nodes of 4 ranks on this "
           "machine): median of the shm variant over the p2p one in the same run; geometric mean over the 13 sizes.", ""]
    out.append("| P | collective | algorithm | " + " | ".join(size(n) for n in shown) + " | gm |")
    out.append("|---|---|---|" + "---|" * len(shown) + "---|")
    for path in paths:
        coll, P = re.search(r"intra-(\w+)-p(\d+)\.csv", path).groups()
        rows = rows_of(path)
        times = {}
        for r in rows:
            times.setdefault(r["algorithm"], {})[int(r["bytes"])] = float(r["median_us"])
        for base in sorted(a for a in times if "intra=shm" not in a and a != "native"):
            shm = base + (",intra=shm" if ":" in base else ":intra=shm")
            if shm not in times:
                continue
            ratio = {n: times[shm][n] / times[base][n] for n in times[base] if n in times[shm]}
            cells = [f"{ratio[n]:.2f}" if n in ratio else "-" for n in shown]
            out.append(f"| {P} | {coll} | `{base}` | " + " | ".join(cells) + f" | {gm(list(ratio.values())):.3f} |")
    out.append("")
    return out


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


def trial_tables(d):
    """Issue 27's acceptance: auto after its trial, and over its first 100
    calls, against the library's own call (scripts/parity.sh trial)."""
    def order(case):
        name, P = case
        lib = next(k for k in LIBS if name.startswith(k))
        return list(LIBS).index(lib), int(P), ["alltoall", "uniform", "power-law"].index(name[len(lib) + 1:])
    cases = sorted({re.search(r"trial-(.+)-p(\d+)-small\.csv", os.path.basename(p)).groups()
                    for p in glob.glob(os.path.join(d, "trial-*-small.csv"))}, key=order)
    if not cases:
        return []
    out = ["**auto after its trial, and over its first 100 calls** (`scripts/parity.sh trial`: `L -n P build/a2a bench "
           "[--collective alltoallv --workload W] -m 16:262144 -i 90 -x X -b B -c -a shm -a auto` with `-b 4` at P = 2 "
           "(as issue 27 measured), `-b 2` above (calls back to back, as the trial times them), X = 40 warm-up "
           "iterations, for alltoallv 1064 calls (its class of every size notices moved sizes up to 1024 calls late: "
           "the trial's calls untimed), then "
           "`-m 524288:8388608 -i 40 -x 40 -b B` (a call at P = 8, 8 MiB "
           "moves 512 MiB), and for the first calls `-m 16:8388608 -i 100 -x 0 -b 1 -a auto` (the mean of all 100 "
           "timed calls per size: the first call on world, the trial and what follows; the median over 5 processes "
           "at P = 2, one above); L is `mpirun --mca "
           "btl_vader_single_copy_mechanism cma` or `none`, or `mpiexec.mpich` (P = 2 only: MPICH polls, and "
           "time-sliced ranks crawl). Medians over the library's own call in the same run; paired: the median "
           "over iterations of auto's time over the library's in the same iteration; geometric mean and worst "
           "over the 20 sizes 16 B .. 8 MiB; what auto ran at them.", ""]
    out.append("| library | P | collective | auto/native gm | worst (at) | paired gm | worst (at) | first 100 calls gm "
               "| worst (at) | shm/native gm | auto ran |")
    out.append("|---|---|---|---|---|---|---|---|---|---|---|")
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
        out.append(f"| {LIBS[lib]} | {P} | {coll} | {gm(list(auto.values())):.3f} | {auto[wa]:.3f} ({size(wa)}) | "
                   + " | ".join(pcells + fcells) + f" | {gm(shm):.3f} | "
                   + ", ".join(f"{k} x{n}" for k, n in sorted(ran.items(), key=lambda kv: -kv[1])) + " |")
    out.append("")
    return out


def overhead_vs(d):
    """What the change adds to the call path: the overhead runs of this build
    and of another, alternating (scripts/parity.sh overhead_vs), alltoall's
    table and alltoallv's."""
    out = []
    for name, coll, native in (("overhead", "alltoall", "MPI_Alltoall"), ("overheadv", "alltoallv", "MPI_Alltoallv")):
        paths = glob.glob(os.path.join(d, f"{name}-vs-new-p*-*.csv"))
        if not paths:
            continue
        runs = len(glob.glob(os.path.join(d, f"{name}-vs-new-p1-*.csv")))
        out += [f"**Call overhead against an earlier build, {coll}** (`scripts/parity.sh overhead_vs`: "
                f"`mpirun -np P a2a bench --collective {coll} -m 16:1024 -b 100 -i 300 -x 20 -a a2a/native "
                f"-a plan/native -a spread-out -a auto`, {runs} runs of each library alternating, this build's bench "
                "on both, `A2A_BASE` the earlier build's library, named in the text below): what each "
                f"row adds to {native}'s time in the same run (us per call, means of 100 back-to-back calls), the "
                "median of the runs, before and now, and the difference.", ""]
        cols = ["a2a/native", "plan/native", "spread-out", "auto"]
        out.append("| P | bytes | " + " | ".join(f"{c}: before, now (diff)" for c in cols) + " |")
        out.append("|---|---|" + "---|" * len(cols))
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
                out.append(f"| {P} | {size(b)} | " + " | ".join(cells) + " |")
        out.append("")
    return out


def first_vs(d):
    """auto's first 100 calls per size, this build against another, their
    processes alternating (scripts/parity.sh first_vs)."""
    paths = glob.glob(os.path.join(d, "firstvs-new-*.csv"))
    if not paths:
        return []
    cases = sorted({re.search(r"firstvs-new-(.+)-p2-\d+\.csv", os.path.basename(p)).group(1) for p in paths})
    runs = len(glob.glob(os.path.join(d, f"firstvs-new-{cases[0]}-p2-*.csv")))
    out = ["**auto's first 100 calls against an earlier build** (`scripts/parity.sh first_vs`: `mpirun --mca "
           "btl_vader_single_copy_mechanism M -np 2 build/a2a bench [--collective alltoallv --workload W] "
           f"-m 16:8388608 -i 100 -x 0 -b 1 -a auto`, {runs} processes of each library alternating, this build's "
           "bench on both, `A2A_BASE` the earlier build's library, named in the text below): per size the mean of "
           "auto's 100 calls over the library's, the median over the processes; geometric mean and worst over "
           "the 20 sizes; the range of single processes' geometric means.", "",
           "| single copy | collective | before: gm | worst (at) | processes | now: gm | worst (at) | processes |",
           "|---|---|---|---|---|---|---|---|"]
    for case in sorted(cases, key=lambda c: (c.split("-")[1], ["alltoall", "uniform", "power-law"].index(
            c.split("-", 2)[2]))):
        cells = []
        for which in ("base", "new"):
            per, gms = {}, []
            for r in first_call_runs(glob.glob(os.path.join(d, f"firstvs-{which}-{case}-p2-*.csv"))):
                for b, x in r.items():
                    per.setdefault(b, []).append(x)
                gms.append(gm(list(r.values())))
            med = {b: statistics.median(x) for b, x in per.items()}
            w = max(med, key=med.get)
            cells += [f"{gm(list(med.values())):.3f}", f"{med[w]:.2f} ({size(w)})", f"{min(gms):.2f}-{max(gms):.2f}"]
        mech, w = case.split("-")[1], case.split("-", 2)[2]
        coll = "alltoall" if w == "alltoall" else f"alltoallv {w}"
        out.append(f"| {'CMA' if mech == 'cma' else 'none'} | {coll} | " + " | ".join(cells) + " |")
    out.append("")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir", default="results/parity")
    ap.add_argument("--update", help="markdown file whose parity markers to fill")
    args = ap.parse_args()
    text = "\n".join(trial_tables(args.dir) + first_vs(args.dir) + overhead_vs(args.dir) + apps(args.dir) + twins(args.dir)
                     + intra_table(args.dir))
    if not args.update:
        print(text)
        return
    doc = open(args.update).read()
    begin, end = "<!-- parity begin -->", "<!-- parity end -->"
    a, b = doc.index(begin) + len(begin), doc.index(end)
    open(args.update, "w").write(doc[:a] + "\n\n" + text + "\n" + doc[b:])


if __name__ == "__main__":
    main()
