#!/usr/bin/env python3
"""docs/simulation.md's tables from scripts/sim-bench.sh's runs (runs/sim/).

usage: sim_table.py [RUNS_DIR] [--out results]   (default runs/sim)

Prints markdown: (a) TRA time vs radix at P = 1024, (b) a2a's alltoall rows
against the SMPI selectors, (c) TuNA against the selectors' alltoallv,
(d) wall time and memory of every simulation, the validated P = 256
table, and the later tables (e)-(u) of each issue's phases (the k-port
form: (p)-(u)).  Cells are simulated microseconds per call, in brackets the ratio to
the named baseline.  Runs that are missing or failed show as "-".  With
--out DIR each table becomes DIR/sim-LETTER.csv, which tools/tables.py
renders into docs/simulation.md and docs/simulation-howto.md."""
import argparse
import contextlib
import csv
import glob
import io
import math
import os
import re
import sys


SELECTORS = ("mpich", "ompi", "mvapich2")


def rows(d, name):
    path = os.path.join(d, name + ".csv")
    if not os.path.exists(path) or os.path.getsize(path) == 0:
        return []
    return list(csv.DictReader(open(path, newline="")))


def native_us(d, name, size):
    for r in rows(d, name):
        if r["algorithm"] == "native" and int(r["bytes"]) == size:
            return float(r["median_us"])
    return None


def cell(us, base):
    if us is None:
        return "-"
    return f"{us:.1f}" if not base else f"{us:.1f} ({us / base:.2f})"


def label(r):
    return r["algorithm"] if r["algorithm"] == r["resolved"] else f"{r['algorithm']} ({r['resolved']})"


def named(alg, per_size):
    """The row's name with what ran, per size where that differs."""
    ran = {s: r["resolved"] for s, r in per_size.items()}
    if len(set(ran.values())) == 1:
        return label(per_size[max(per_size)])
    return f"{alg} (" + "; ".join(f"{ran[s]} at {s} B" for s in sorted(ran)) + ")"


def table(header, lines):
    print("| " + " | ".join(header) + " |")
    print("|---" * len(header) + "|")
    for line in lines:
        print("| " + " | ".join(line) + " |")
    print()


def radix_table(d, sizes=(16, 128, 512, 2048), procs=1024):
    root = math.isqrt(procs)
    by_size = {s: [r for r in rows(d, f"p{procs}-radix-{s}") if r["radix"] not in ("-1", "")] for s in sizes}
    base = {s: native_us(d, f"p{procs}-radix-{s}", s) for s in sizes}
    best = {s: min(by_size[s], key=lambda r: float(r["median_us"]))["radix"] if by_size[s] else None for s in sizes}
    radices = sorted({int(r["radix"]) for s in sizes for r in by_size[s]})
    print(f"(a) TRA at P = {procs}: simulated us per call, in brackets the ratio to SMPI's Bruck "
          f"(MPICH's, radix 2); **bold** = best radix of the column, sqrt(P) = {root}.\n")
    lines = [["SMPI bruck (MPICH port)"] + [cell(base[s], None) for s in sizes]]
    for k in radices:
        name = f"tra:radix={k}" + (" = sqrt(P)" if k == root else "")
        cells = []
        for s in sizes:
            r = next((r for r in by_size[s] if int(r["radix"]) == k), None)
            c = cell(float(r["median_us"]), base[s]) if r else "-"
            cells.append(f"**{c}**" if r and r["radix"] == best[s] else c)
        lines.append([name] + cells)
    table(["radix"] + [f"S = {s} B" for s in sizes], lines)


def versus_selectors(d, title, prefix, a2a_prefixes, sizes, selectors=SELECTORS):
    """Natives of each selector, then a2a's rows; **bold** = the fastest row of each column."""
    base = {s: native_us(d, f"{prefix}native-mpich-{s}", s) for s in sizes}
    print(title + "\n")
    lines = [(f"native: SMPI {sel} selector", {s: native_us(d, f"{prefix}native-{sel}-{s}", s) for s in sizes})
             for sel in selectors]
    seen = {}  # a later run of the same row replaces an earlier one
    for a2a_prefix in a2a_prefixes:
        for s in sizes:
            for r in rows(d, f"{a2a_prefix}{s}"):
                if r["algorithm"] == "auto" and a2a_prefix not in ("p1024-auto-", "p1024-v-auto-"):
                    continue  # auto as it chooses now comes from runs of its own
                seen.setdefault(r["algorithm"], {})[s] = r
    for alg, per_size in seen.items():
        lines.append((named(alg, per_size), {s: float(r["median_us"]) for s, r in per_size.items()}))
    fastest = {s: min((us[s] for _, us in lines if us.get(s) is not None), default=None) for s in sizes}
    out = []
    for name, us in lines:
        cells = [cell(us.get(s), base[s]) for s in sizes]
        out.append([name] + [f"**{c}**" if us.get(s) is not None and us[s] == fastest[s] else c
                             for c, s in zip(cells, sizes)])
    table(["algorithm (as run)"] + [f"S = {s} B" for s in sizes], out)


def wall_rss(d, name):
    """(wall s, peak GiB) of a finished run, else None."""
    path = os.path.join(d, name + ".time")
    text = open(path).read().split() if os.path.exists(path) else []
    if len(text) < 2 or not rows(d, name):
        return None
    return float(text[-2]), int(text[-1]) / 1024 / 1024


def runs_table(d):
    print("(d) Every simulation: wall time and peak memory (resident set of the simulator process).\n")
    lines = []
    for path in sorted(glob.glob(os.path.join(d, "*.time")), key=lambda p: (len(p), p)):
        name = os.path.splitext(os.path.basename(path))[0]
        got = wall_rss(d, name)
        if got:
            done = rows(d, name)
            lines.append([name, done[0]["procs"], str(len(done)), f"{got[0]:.0f}", f"{got[1]:.2f}"])
        else:
            lines.append([name, "-", "-", "failed or unfinished", "-"])
    table(["run", "P", "rows", "wall s", "peak GiB"], lines)


def config_table(d):
    """(e) SimGrid's settings at P = 1024 (sim-bench.sh config), each against the default."""
    names = sorted(os.path.basename(p)[len("p1024-cfg-"):-len(".time")]
                   for p in glob.glob(os.path.join(d, "p1024-cfg-*.time")))
    if "default" not in names:
        return
    base = {r["algorithm"]: float(r["median_us"]) for r in rows(d, "p1024-cfg-default")}
    algs = list(base)
    print("(e) SimGrid's settings at P = 1024, 16 B (`sim-bench.sh config`): wall time and peak memory of the "
          "run, simulated us per call, in brackets the ratio to the default settings.\n")
    lines = []
    for n in ["default"] + [n for n in names if n != "default"]:
        got = wall_rss(d, "p1024-cfg-" + n)
        if not got:
            lines.append([n, "failed or unfinished", "-"] + ["-"] * len(algs))
            continue
        us = {r["algorithm"]: float(r["median_us"]) for r in rows(d, "p1024-cfg-" + n)}
        lines.append([n, f"{got[0]:.0f}", f"{got[1]:.2f}"] + [cell(us.get(a), base[a]) for a in algs])
    table(["setting", "wall s", "peak GiB"] + algs, lines)


def p4096_table(d):
    """(f) P = 4096, a run per row (sim-bench.sh p4096)."""
    runs = sorted(os.path.basename(p)[:-len(".time")] for p in glob.glob(os.path.join(d, "p4096-*.time")))
    runs = [r for r in runs if r != "p4096-16"]  # the attempt before issue 29, stopped after 54 minutes
    if not runs:
        return
    print("(f) P = 4096 (theta-64x64, `sim-bench.sh p4096`: the MPICH selector with `--cfg=smpi/bcast:default "
          "--cfg=smpi/allreduce:rdb`, one call each, no warm-up): simulated us, in brackets the ratio to the MPICH "
          "selector at that size; wall time and peak memory of each run. `p4096x1` runs the a2a rows again "
          "after an untimed call: without one, TRA2's timed call splits its node and port communicators.\n")
    lines = []
    for name in runs:
        got = wall_rss(d, name)
        v = name.startswith("p4096-v-")
        if not got:
            lines.append([name, "-", "-", "failed or unfinished", "-"])
            continue
        for r in rows(d, name):
            size = int(r["bytes"])
            base = native_us(d, f"p4096-{'v-' if v else ''}{size}-native-mpich", size)
            alg = ("alltoallv " if v else "") + label(r) + (", after a warm-up call" if "-x1-" in name else "")
            lines.append([alg, str(size), cell(float(r["median_us"]), base), f"{got[0]:.0f}", f"{got[1]:.2f}"])
    table(["row", "S (B)", "simulated us", "wall s", "peak GiB"], lines)


def polaris_table(d):
    """(g) The Polaris-like platform (sim-bench.sh polaris): each run's rows against its MPICH selector."""
    runs = [n for n in ("polaris-p256-mpich", "polaris-p1024-16") if rows(d, n)]
    if not runs:
        return
    print("(g) The Polaris-like platform (`sim-bench.sh polaris`; P = 256 validated, every byte checked; P = 1024 "
          "with shared buffers and the MPICH selector without its node-aware set-up): simulated us, in brackets "
          "the ratio to the MPICH selector.\n")
    lines = []
    for name in runs:
        procs = rows(d, name)[0]["procs"]
        for alg in dict.fromkeys(r["algorithm"] for r in rows(d, name)):
            per = {int(r["bytes"]): r for r in rows(d, name) if r["algorithm"] == alg}
            cells = [f"{s} B: " + cell(float(per[s]["median_us"]), native_us(d, name, s)) for s in sorted(per)]
            lines.append([procs, "native: SMPI mpich selector" if alg == "native" else named(alg, per),
                          "; ".join(cells)])
    table(["P", "algorithm (as run)", "simulated us per size"], lines)


def p256_table(d):
    main = rows(d, "p256-mpich")
    if not main:
        return
    sizes = sorted({int(r["bytes"]) for r in main})
    print("P = 256, every byte validated: simulated us, in brackets the ratio to the MPICH selector.\n")
    base = {s: native_us(d, "p256-mpich", s) for s in sizes}
    lines = [[f"native: SMPI {sel} selector"] + [cell(native_us(d, f"p256-{sel}", s), base[s]) for s in sizes]
             for sel in SELECTORS]
    for alg in dict.fromkeys(r["algorithm"] for r in main if r["algorithm"] != "native"):
        per = {int(r["bytes"]): r for r in main if r["algorithm"] == alg}
        lines.append([named(alg, per)] + [cell(float(per[s]["median_us"]), base[s]) for s in sizes])
    table(["algorithm (as run)"] + [f"{s} B" for s in sizes], lines)


def replay_rows(d, prefix):
    """{(collective, S, row, xt0): (us, run name)} of the replayed runs NAME = PREFIX-...; xt0: the run's
    name ends in -xt0 (network/crosstraffic:0, no reverse traffic)."""
    out = {}
    for path in glob.glob(os.path.join(d, prefix + "-*.csv")):
        name = os.path.basename(path)[:-4]
        for r in rows(d, name):
            if not r["resolved"].startswith("replay:"):  # an online run sharing the prefix (pl256-check)
                continue
            out[(r["collective"], int(r["bytes"]), r["algorithm"], name.endswith("-xt0"))] = \
                (float(r["median_us"]), name)
    return out


ONLINE = {  # the online runs a replayed row is checked against, by the replays' prefix (-x 1: no set-up in the
    # timed call); pl: power-law blocks
    "r256": ["p256-check", "p256-v-check"],
    "r1024": ["p1024-a2a-{s}", "p1024-native-mpich-{s}", "p1024-v-hier-coalesced-{s}", "p1024-v-native-mpich-{s}"],
    "r4096": ["p4096-{s}-native-mpich", "p4096-x1-{s}-{row}"],
    "pl256": ["pl256-check"],
    "portsr-p256": ["portsr-p256-online", "portsr-p256-v-online"],  # issue 57, maxmin/precision:1e-4 both
    "ports-r1024": ["ports-p1024-{s}-native"],
}


def online_us(d, prefix, coll, s, row):
    for pattern in ONLINE.get(prefix, []):
        name = pattern.format(s=s, row=re.sub(r"[:=,]", "-", row))
        for r in rows(d, name):
            if r["collective"] == coll and int(r["bytes"]) == s and r["algorithm"] == row:
                return float(r["median_us"]), name
    return None


def replay_check_table(d):
    """(h) Trace replay against online SMPI on the same platform (sim-bench.sh replaycheck)."""
    lines = []
    for prefix in ONLINE:
        procs = re.sub(r"\D", "", prefix)
        got = replay_rows(d, prefix)
        for (coll, s, row, xt0), (us, name) in sorted(got.items()):
            on = None if xt0 else online_us(d, prefix, coll, s, row)
            if not on:
                continue
            lines.append([procs, coll + (" (power-law)" if prefix.startswith("pl") else ""), str(s), row,
                          f"{on[0]:.1f}", f"{us:.1f}", f"{100 * (us / on[0] - 1):+.2f} %", on[1], name])
    if not lines:
        return
    print("(h) Trace replay (`a2a trace`, `smpirun -replay`) against online SMPI, the same row on the same "
          "platform: simulated us per call; a2a's online rows time a call after an untimed one (`-x 1`), the "
          "selectors' (which set nothing up) the first.\n")
    table(["P", "collective", "S (B)", "row", "online", "replay", "replay - online", "online run", "replay run"], lines)


def replay_scale_table(d, procs, title):
    """The replayed runs at one P at 16 B and 1 KiB (TRA, the default TRA2, the selector): simulated us with
    the ratio to the replayed MPICH selector, and without the reverse traffic with the ratio to the same row
    with it; wall time and memory of each replay."""
    got = {k: v for k, v in replay_rows(d, f"r{procs}").items()
           if k[1] in (16, 1024) and (k[2] in ("native", "tra2") or k[2].startswith("tra:"))}
    if not got:
        return
    print(title + "\n")
    lines = []
    keys = sorted({k[:3] for k in got}, key=lambda k: (k[0], k[1], k[2] != "native", k[2]))
    for coll, s, row in keys:
        cells, walls = [], []
        for xt0 in (False, True):
            us, name = got.get((coll, s, row, xt0), (None, None))
            # without the reverse traffic: against the same row with it, else the selector alike
            against = (xt0 and got.get((coll, s, row, False))) or got.get((coll, s, "native", xt0))
            cells.append(cell(us, against[0] if against else None))
            wall = wall_rss(d, name) if name else None
            walls.append(f"{wall[0]:.0f} s, {wall[1]:.2f} GiB" if wall else "-")
        lines.append([coll, str(s), row, cells[0], walls[0], cells[1], walls[1]])
    table(["collective", "S (B)", "row", "simulated us", "replay", "without reverse traffic", "replay"], lines)


def sweep_table(d, prefix, title):
    """Replayed rows of runs PREFIX-... by size: simulated us, in brackets the ratio to the MPICH selector at
    that size (to TRA at radix 2 where the selector did not run), then the replay's wall time; **bold** =
    fastest.  Rows of a P's runs without the reverse traffic named -xt0 (table (i)) are left out."""
    got = {k: v for k, v in replay_rows(d, prefix).items() if not k[3]}
    if not got:
        return
    print(title + "\n")
    for coll in sorted({k[0] for k in got}):
        sizes = sorted({k[1] for k in got if k[0] == coll})
        def order(row):  # native, then each algorithm by radix
            m = re.match(r"(tra|tuna):radix=(\d+)$", row)
            return (row != "native", m.group(1) if m else row, int(m.group(2)) if m else 0)
        names = sorted({k[2] for k in got if k[0] == coll}, key=order)
        lines = []
        for row in names:
            cells = []
            for s in sizes:
                hit = next((v for k, v in got.items() if k[:3] == (coll, s, row)), None)
                if not hit:
                    cells.append("-")
                    continue
                by_row = {k[2]: v[0] for k, v in got.items() if k[:2] == (coll, s)}
                base = by_row.get("native", by_row.get("tra:radix=2", by_row.get("tuna:radix=2")))
                fastest = min(v[0] for k, v in got.items() if k[0] == coll and k[1] == s)
                wall = wall_rss(d, hit[1])
                text = cell(hit[0], base) + (f", {wall[0]:.0f} s" if wall else "")
                cells.append(f"**{text}**" if hit[0] == fastest else text)
            lines.append([row] + cells)
        table([coll] + [f"S = {s} B" for s in sizes], lines)


V1024 = ["p1024-v-radix-", "p1024-v-a2a-", "p1024-v-hier-coalesced-", "p1024-v-hier-staggered-", "p1024-v-hier-auto-",
         "p1024-v-auto-"]  # table (c)'s a2a runs


def auto_table(d):
    """(l) auto at P = 1024, 4096 and 16384 (sim-bench.sh autopick; alltoallv at P = 1024: autopickv): its model's
    pick and trial candidates (runs/sim/auto-rP-S.rank, auto-rP-v-S.rank), each candidate's replayed time, the
    fastest (what the trial keeps) and the fastest row at that P and S."""
    lines, replayed = [], {}  # replayed: replay_rows by P, read once
    def by_procs_coll_size(path):  # auto-rP-S.rank, auto-rP-v-S.rank
        procs, s = (int(x) for x in re.findall(r"\d+", os.path.basename(path)))
        return procs, "alltoallv" if "-v-" in os.path.basename(path) else "alltoall", s

    for procs, coll, s, path in sorted(by_procs_coll_size(p) + (p,)
                                       for p in glob.glob(os.path.join(d, "auto-r*-*.rank"))):
        text = open(path).read()
        pick = re.search(r"^auto without a trial runs: (.*)$", text, re.M)
        trial = re.search(r"^auto's trial times: (.*)$", text, re.M)
        if not pick or not trial:
            continue
        if procs not in replayed:
            replayed[procs] = replay_rows(d, f"r{procs}")
        got = replayed[procs]
        times = {}
        for c in trial.group(1).split(", "):
            hit = got.get((coll, s, c.replace(",intra=shm", ""), False)) or \
                online_us(d, f"r{procs}", coll, s, c)  # the selector above 256 B, P = 1024: its online run
            times[c] = hit[0] if hit else None
        known = {c: t for c, t in times.items() if t is not None}
        rivals = [(v[0], k[2]) for k, v in got.items() if k[:2] == (coll, s) and not k[3]]
        if coll == "alltoallv":  # table (c)'s online rows, auto's own excepted
            rivals += [(float(r["median_us"]), r["resolved"] if r["algorithm"] != "native" else "native")
                       for pre in V1024 + ["p1024-v-native-mpich-"] for r in rows(d, f"{pre}{s}")
                       if "auto" not in r["algorithm"]]
        best = min(rivals, default=None)
        keeps = min(known, key=known.get) if known and len(known) == len(times) else None
        cands = "; ".join(f"{c} {t:.1f}" if t is not None else f"{c} -" for c, t in times.items())
        lines.append([str(procs), ("alltoallv " if coll == "alltoallv" else "") + str(s), pick.group(1), cands,
                      f"{keeps} {known[keeps]:.1f}" if keeps else "-",
                      f"{best[1]} {best[0]:.1f}" if best else "-",
                      f"{known[keeps] / best[0]:.2f}" if keeps and best else "-"])
    if not lines:
        return
    print("(l) `auto` at P = 1024, 4096 and 16384 (`sim-bench.sh autopick autopickv`): the machine as auto measured it "
          "online at P = 256 on the same platform, its cost model's pick and trial candidates at each P (`a2a "
          "model --rank`), each candidate replayed (simulated us; intra=shm runs point to point under SMPI; the "
          "selectors at P = 1024 from 1 KiB: their online runs), the one its trial keeps (the fastest), and the "
          "fastest replayed row at that P and S (tables (h), (i), (j), (k); alltoallv, `autopickv`: blocks uniform in "
          "0..S, the model given a mean block of S/2 and a largest of S, against table (c)'s online rows too); "
          "\"-\": not simulated (the selector above 256 B posts all P^2 messages at once; TRA2 at P = 16384 "
          "crawls).\n")
    table(["P", "S (B)", "model's pick", "trial candidates (us)", "auto keeps (us)", "fastest row (us)",
           "auto / fastest"], lines)


def row_name(row):
    """sim-bench.sh's row_name: a row's part of a run's name."""
    m = re.match(r"tra2:radix-intra=(\d+),radix-inter=(\d+)$", row)
    return f"tra2-{m.group(1)}-{m.group(2)}" if m else re.sub(r"[:=,]", "-", row)


def validated_table(d, name, title):
    """One validated run's rows by size (sim-bench.sh ports, portsv: P = 256, every byte checked), each against
    the MPICH selector of the same run; **bold** = fastest of the column."""
    got = rows(d, name)
    if not got:
        return
    sizes = sorted({int(r["bytes"]) for r in got})
    base = {s: native_us(d, name, s) for s in sizes}
    print(title + "\n")
    lines = []
    for alg in dict.fromkeys(r["algorithm"] for r in got):
        cells = []
        for s in sizes:
            r = next((r for r in got if r["algorithm"] == alg and int(r["bytes"]) == s), None)
            us = float(r["median_us"]) if r else None
            fastest = min(float(x["median_us"]) for x in got if int(x["bytes"]) == s)
            text = cell(us, base[s] if alg != "native" else None)
            cells.append(f"**{text}**" if us == fastest else text)
        lines.append(["native: SMPI mpich selector" if alg == "native" else alg] + cells)
    table(["algorithm"] + [f"{s} B" for s in sizes], lines)


def ports_rows_table(d, prefix, sizes, algs, title):
    """A run per (size, row), PREFIX-S-ROW, against PREFIX-S-native: simulated us (ratio to the selector),
    a row that did not run "-"; the wall time of the row's simulation."""
    print(title + "\n")
    lines = []
    for alg in ["native"] + algs:
        cells = []
        for s in sizes:
            name = f"{prefix}-{s}-{row_name(alg)}"
            got = rows(d, name)
            us = float(got[0]["median_us"]) if got else None
            base = native_us(d, f"{prefix}-{s}-native", s)
            wall = wall_rss(d, name)
            text = cell(us, base if alg != "native" else None)
            cells.append(text + (f", {wall[0]:.0f} s" if wall and us is not None else ""))
        lines.append(["native: SMPI mpich selector" if alg == "native" else alg] + cells)
    table(["row"] + [f"S = {s} B" for s in sizes], lines)


def main(d):
    radix_table(d)
    versus_selectors(d, "(b) alltoall at P = 1024: simulated us per call, in brackets the ratio to the MPICH "
                        "selector; **bold** = fastest; auto's \"-\": its online run did not finish, its pick "
                        "replayed is in table (l); Open MPI's at 1 KiB: \"Not done yet\".", "p1024-",
                     ["p1024-a2a-", "p1024-auto-"], (32, 1024))
    versus_selectors(d, "(c) alltoallv at P = 1024, block sizes uniform in 0..S: simulated us per call, in "
                        "brackets the ratio to the MPICH selector; **bold** = fastest; auto's \"-\": its online run "
                        "aborted in SimGrid's solver, its pick replayed is in table (l).", "p1024-v-",
                     V1024, (16, 1024, 16384), selectors=("mpich",))
    runs_table(d)
    config_table(d)
    p4096_table(d)
    polaris_table(d)
    p256_table(d)
    replay_check_table(d)
    replay_scale_table(d, 4096, "(i) P = 4096 replayed (theta-64x64, `sim-bench.sh p4096r`): simulated us per "
                                "call, in brackets the ratio to the replayed MPICH selector; without the reverse "
                                "traffic (`network/crosstraffic:0`), in brackets the ratio to the same row with it; "
                                "wall time and peak memory of each replay.")
    sweep_table(d, "r16384", "(j) P = 16384 replayed (theta-256x64, `sim-bench.sh p16384 p16384sizes p16384s128`), "
                             "without the reverse traffic (`network/crosstraffic:0`): simulated us per call, in "
                             "brackets the ratio to the replayed MPICH selector at that size (16 B; SMPI's Bruck, as "
                             "radix 2) or to TRA at radix 2 (128 B: the selector, Bruck again, not replayed; from 512 "
                             "B it posts every message at once and was not run), then the replay's wall time; "
                             "**bold** = fastest; sqrt(P) = 128.")
    sweep_table(d, "r4096", "(k) P = 4096 replayed by size (theta-64x64; `sim-bench.sh p4096r p4096sweep "
                            "p4096sizes p4096tra2 autopick`): simulated us per call, in brackets the ratio to the "
                            "replayed MPICH selector at that size (16 and 128 B: SMPI's Bruck) or to TRA at radix 2 "
                            "(from 1 KiB, where the selector posts every message at once and was not run), then "
                            "the replay's wall time; **bold** = fastest; sqrt(P) = 64; tra2 rows name their "
                            "intra- and inter-node radix (the default: 8 and 64).")
    auto_table(d)
    sweep_table(d, "polaris-r4096", "(m) The Polaris-like platform at P = 4096 replayed (polaris-128x32, "
                                    "`sim-bench.sh polaris4096`): simulated us per call, in brackets the ratio to "
                                    "the replayed MPICH selector (16 B) or to TRA at radix 2 (1 KiB), then the "
                                    "replay's wall time; **bold** = fastest.")
    sweep_table(d, "pl1024", "(n) alltoallv at P = 1024 with the TuNA paper's power-law block sizes (exponent 0.95, "
                             "largest block S; theta-16x64, replayed, `sim-bench.sh powerlaw`): simulated us per call, "
                             "in brackets the ratio to the replayed MPICH selector's alltoallv (to TuNA at radix 2 "
                             "where it did not finish), then the replay's wall time; **bold** = fastest; sqrt(P) = "
                             "32; two-phase Bruck is TuNA's schedule at radix 2.")
    sweep_table(d, "polaris-r16384", "(o) The Polaris-like platform at P = 16384 replayed (polaris-512x32, one "
                                     "dragonfly group of 8 chassis; `sim-bench.sh polaris16384`), without the reverse "
                                     "traffic as (j): simulated us per call, in brackets the ratio to the replayed "
                                     "MPICH selector (16 B) or to TRA at radix 2 (512 B), then the replay's wall "
                                     "time; **bold** = fastest; sqrt(P) = 128.")

    k_port = ("(simulated us per call, in brackets the ratio to the MPICH selector; `maxmin/precision:1e-4`, "
              "docs/simulation.md \"The k-port form\")")
    for letter, plat in (("p", "theta-4x64"), ("q", "polaris-8x32")):
        validated_table(d, f"ports-p256-{plat}", f"({letter}) The k-port form at P = 256 on {plat} (`sim-bench.sh "
                        f"ports`, every byte validated) {k_port}; **bold** = fastest of the column.")
    tra_rows = [f"tra:radix={r}{b}" for r in (8, 16, 32, 64) for b in ("", ",ports=1")]
    tra2_rows = [f"{t}{b}" for t in ("tra2", "tra2:radix-intra=2", "tra2:radix-intra=8,radix-inter=8")
                 for b in ("", ",ports-intra=1,ports-inter=1")]
    ports_rows_table(d, "ports-r1024", (16, 32, 1024), tra_rows + [r.replace("tra2,", "tra2:") for r in tra2_rows],
                     f"(r) The k-port form at P = 1024 (theta-16x64, `sim-bench.sh ports1024`, replayed) "
                     f"{k_port}, then the replay's wall time; tra2's default radices are 8 inside a node "
                     "and 16 among the nodes.")
    for letter, w in (("s", "uniform"), ("t", "power-law")):
        validated_table(d, f"portsv-p256-{w}", f"({letter}) alltoallv, the k-port form at P = 256 (theta-4x64, "
                        f"{w} blocks of at most S, `sim-bench.sh portsv`, every byte validated) {k_port}; "
                        "**bold** = fastest of the column.")
    ports_rows_table(d, "portsv-r1024", (16, 1024), ["tuna:radix=32", "tuna:radix=32,ports=1", "tuna-hier",
                     "tuna-hier:ports=1"],
                     f"(u) alltoallv, the k-port form at P = 1024 (theta-16x64, blocks uniform in 0..S, "
                     f"`sim-bench.sh portsv`, replayed) {k_port}, then the replay's wall time.")


def write_csvs(d, out_dir):
    """Each table of main() that a doc shows (a "<!-- table results/NAME.csv -->"
    line in docs/*.md) as out_dir/sim-LETTER.csv (the validated P = 256 table:
    sim-p256.csv), for tools/tables.py to render."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    shown = set(re.findall(r"<!-- table results/(sim-[a-z0-9]+\.csv) -->",
                           "".join(open(p).read() for p in glob.glob(os.path.join(root, "docs", "*.md")))))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        main(d)
    caption, written = "", []
    for block in out.getvalue().split("\n\n"):
        lines = [l for l in block.split("\n") if l]
        if not lines:
            continue
        if not lines[0].startswith("|"):
            caption = lines[0]
            continue
        m = re.match(r"\(([a-z])\) ", caption)
        name = "sim-" + (m.group(1) if m else "p256") + ".csv"
        if name not in shown:
            continue
        cells = [[c.strip().replace("\\|", "|") for c in l.strip("|").split(" | ")]
                 for l in lines if not l.startswith("|---")]
        with open(os.path.join(out_dir, name), "w", newline="") as f:
            csv.writer(f, lineterminator="\n").writerows(cells)
        written.append(name)
    print(" ".join(written))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="docs/simulation.md's tables from scripts/sim-bench.sh's runs")
    parser.add_argument("results", nargs="?", default="runs/sim")
    parser.add_argument("--out", metavar="DIR", help="write each table as DIR/sim-LETTER.csv (results/) "
                        "instead of printing markdown; python3 tools/tables.py renders them into docs/")
    args = parser.parse_args()
    if args.out:
        write_csvs(args.results, args.out)
    else:
        main(args.results)
