#!/usr/bin/python3
"""The main job's verdict from `a2a bench` CSVs (and a2a-fft/a2a-closure
--compare outputs): per P and collective, auto over native and the best a2a
row over native (geometric mean over the sizes and the worst size), then
one line saying where auto was slower than the MPI library.

usage: verdict.py [--tolerance 0.05] BENCH.csv ... [--apps APP.txt ...]
"""
import argparse
import csv
import math
import re


def size(b):
    for unit in ("B", "KiB", "MiB", "GiB"):
        if b < 1024 or b % 1024:
            return f"{b} {unit}"
        b //= 1024
    return f"{b} TiB"


def bench_rows(path):
    """(label, P, [(bytes, auto/native, best/native, best row)])"""
    rows = list(csv.DictReader(open(path, newline="")))
    by = {}
    for r in rows:
        by.setdefault(int(r["bytes"]), {})[r["algorithm"]] = float(r["median_us"])
    cells = []
    for b, v in sorted(by.items()):
        if "native" not in v or "auto" not in v:
            continue
        others = {a: t for a, t in v.items() if a != "native" and not a.startswith("twin:")}
        best = min(others, key=others.get)
        cells.append((b, v["auto"] / v["native"], others[best] / v["native"], best))
    first = rows[0]
    label = first["collective"] + (" " + first["workload"].split(":")[0] if first["workload"] else "")
    return label, int(first["procs"]), cells


def app_rows(path):
    """(label, P, auto/native all-to-all time) from an application's --compare table."""
    text = open(path).read()
    procs = re.search(r"on (\d+) ranks|, (\d+) ranks", text)
    ratio = None
    for line in text.splitlines():
        cols = line.split()
        if len(cols) >= 6 and cols[0] == "auto":
            ratio = float(cols[-1])  # a2a/nat: the all-to-all time's median over native's
    name = re.sub(r"-p\d+\.txt$", "", path.split("/")[-1])
    P = int(next(g for g in procs.groups() if g)) if procs else 0
    return name, P, ratio


def gm(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("csv", nargs="*")
    ap.add_argument("--apps", nargs="*", default=[])
    ap.add_argument("--tolerance", type=float, default=0.05)
    a = ap.parse_args()
    print("| P | collective | auto/native gm | auto worst (at) | best a2a/native gm | best worst (at) |")
    print("|---|---|---|---|---|---|")
    slower, worst_all, cases = [], (0, ""), 0
    for path in a.csv:
        label, P, cells = bench_rows(path)
        if not cells:
            continue
        aw = max(cells, key=lambda c: c[1])
        bw = max(cells, key=lambda c: c[2])
        print(f"| {P} | {label} | {gm([c[1] for c in cells]):.3f} | {aw[1]:.3f} ({size(aw[0])}) | "
              f"{gm([c[2] for c in cells]):.3f} | {bw[2]:.3f} ({size(bw[0])}) |")
        for b, r, _, _ in cells:
            where = f"P={P} {label} {size(b)}"
            worst_all = max(worst_all, (r, where))
            cases += 1
            if r > 1 + a.tolerance:
                slower.append((r, where))
    for path in a.apps:
        name, P, r = app_rows(path)
        if r is None:
            continue
        print(f"| {P} | {name} (all-to-all time) | {r:.3f} | | | |")
        worst_all = max(worst_all, (r, f"P={P} {name}"))
        cases += 1
        if r > 1 + a.tolerance:
            slower.append((r, f"P={P} {name}"))
    pct = round(a.tolerance * 100)
    if slower:
        slower.sort(reverse=True)
        shown = ", ".join(f"{w} ({r:.2f})" for r, w in slower[:6])
        more = f" and {len(slower) - 6} more" if len(slower) > 6 else ""
        print(f"VERDICT: auto was more than {pct}% slower than the MPI library in {len(slower)} of {cases} cases: "
              f"{shown}{more} (all in {a.csv[0].rsplit('/', 1)[0] if a.csv else '.'}/*.txt)")
    else:
        print(f"VERDICT: auto was never more than {pct}% slower than the MPI library "
              f"(worst {worst_all[0]:.3f}, {worst_all[1]})")


if __name__ == "__main__":
    main()
