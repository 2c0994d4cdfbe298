#!/usr/bin/python3
"""Ratio-to-native matrix (rows: algorithms, columns: bytes) of `a2a bench` CSVs,
as a Markdown table, plus the best a2a row per size and, where tuna or tra
rows are present, the best radix per size.

usage: summarize_bench.py BENCH.csv [BENCH.csv ...]
       summarize_bench.py --summary BENCH.csv   (the bench's summary lines: auto
       and the best a2a row over native, geometric mean and worst over the sizes)
       summarize_bench.py --nonblocking BENCH.csv|BENCH.txt ...   (issue 28: per run, each
       i/X row over its X row, geometric mean over the sizes, and the library's
       16 B median, which tells the machine's state; then per X the range over
       the runs, their median and how many are within 1.05)
"""
import csv
import math
import sys


def geomean(values):
    values = list(values)
    return math.exp(sum(math.log(v) for v in values) / len(values))


def summary(path):
    rows = list(csv.DictReader(open(path, newline="")))
    by = {}
    for r in rows:
        by.setdefault(int(r["bytes"]), {})[r["algorithm"]] = float(r["median_us"])
    lines = []
    for label, pick in (("auto/native", lambda v: v.get("auto")),
                        ("best a2a/native", lambda v: min((t for a, t in v.items()
                                                           if a != "native" and not a.startswith("twin:")),
                                                          default=None))):
        ratios = [(pick(v) / v["native"], b) for b, v in by.items() if "native" in v and pick(v)]
        if ratios:
            g = geomean(x for x, _ in ratios)
            w, at = max(ratios)
            lines.append(f"{label} geometric mean {g:.3f}, worst {w:.3f} (at {at} B)")
    print(f"{path}: P = {rows[0]['procs']}, {rows[0]['collective']} {rows[0]['workload']}: " + "; ".join(lines))


def medians(path):
    """{(bytes, row): median us} of a bench CSV, or of its printed table (.txt)."""
    if path.endswith(".csv"):
        return {(int(r["bytes"]), r["algorithm"]): float(r["median_us"]) for r in csv.DictReader(open(path, newline=""))}
    library = {"MPI_Alltoall": "native", "MPI_Alltoallv": "native", "i/MPI_Ialltoall": "i/native",
               "i/MPI_Ialltoallv": "i/native"}
    rows = (line.split() for line in open(path))
    return {(int(f[0]), library.get(f[1], f[1])): float(f[2]) for f in rows if len(f) > 2 and f[0].isdigit()}


def nonblocking(paths):
    runs = []
    for path in paths:
        t = medians(path)
        pairs = sorted({a[2:] for _, a in t if a.startswith("i/")})
        gm = {}
        for x in pairs:
            gm[x] = geomean(t[(b, "i/" + x)] / t[(b, x)] for b, a in t if a == "i/" + x and (b, x) in t)
        runs.append((path, t.get((min(b for b, _ in t), "native")), gm))
    names = list(dict.fromkeys(x for _, _, gm in runs for x in gm))
    print("| run | library at the smallest size (us) | " + " | ".join(f"i/{x} / {x}" for x in names) + " |")
    print("|---|---|" + "---|" * len(names))
    for path, floor, gm in runs:
        print(f"| {path} | {floor:.3f} | " + " | ".join(f"{gm[x]:.3f}" if x in gm else "-" for x in names) + " |")
    for x in names:
        v = sorted(gm[x] for _, _, gm in runs if x in gm)
        print(f"{x}: {v[0]:.3f}-{v[-1]:.3f}, median {v[len(v) // 2]:.3f}, within 1.05 in {sum(r <= 1.05 for r in v)}"
              f" of {len(v)} runs")


def main():
    if sys.argv[1:2] == ["--nonblocking"]:
        nonblocking(sys.argv[2:])
        return
    if sys.argv[1:2] == ["--summary"]:
        for path in sys.argv[2:]:
            summary(path)
        return
    for path in sys.argv[1:]:
        rows = list(csv.DictReader(open(path, newline="")))
        sizes = sorted({int(r["bytes"]) for r in rows})
        names = list(dict.fromkeys(r["algorithm"] for r in rows))
        ratio = {(r["algorithm"], int(r["bytes"])): float(r["ratio_to_native"]) for r in rows}
        coll = rows[0].get("collective", "alltoall")
        work = f", workload {rows[0]['workload']}" if rows[0].get("workload") else ""
        native = "MPI_Alltoallv" if coll == "alltoallv" else "MPI_Alltoall"
        print(f"\n{coll}, P = {rows[0]['procs']}{work} ({path}): median time / {native} median time\n")
        print("| algorithm | " + " | ".join(str(s) for s in sizes) + " |")
        print("|---|" + "---|" * len(sizes))
        for n in names:
            print(f"| {n} | " + " | ".join(f"{ratio[(n, s)]:.2f}" for s in sizes) + " |")
        best = []
        for s in sizes:
            cand = [(ratio[(n, s)], n) for n in names if n != "native"]
            r, n = min(cand)
            best.append(f"{n} {r:.2f}")
        print("| **best a2a** | " + " | ".join(best) + " |")
        inter = {r["algorithm"]: (r.get("inter_node_messages"), r["resolved"]) for r in rows}
        if any(v[0] not in (None, "", "-1") for v in inter.values()):
            print("\nInter-node messages (sum over ranks, one call): " +
                  ", ".join(f"{n}{'' if inter[n][1] == n else ' (ran ' + inter[n][1] + ')'}: {inter[n][0]}"
                            for n in names if inter[n][0] not in (None, "", "-1")))
        for family in ("tuna:radix=", "tra:radix="):
            radix_rows = [n for n in names if n.startswith(family) and not n.endswith("auto")]
            if len(radix_rows) > 1:
                cells = []
                for s in sizes:
                    r, n = min((ratio[(n, s)], n) for n in radix_rows)
                    cells.append(f"{n.split('=')[1]} ({r:.2f})")
                print(f"| **best {family[:-7]} radix** | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
