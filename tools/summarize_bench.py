#!/usr/bin/python3
"""Ratio-to-native matrix (rows: algorithms, columns: bytes) of `a2a bench` CSVs,
as a Markdown table, plus the best a2a row per size and, where tuna or tra
rows are present, the best radix per size.

usage: summarize_bench.py BENCH.csv [BENCH.csv ...]
       summarize_bench.py --summary BENCH.csv   (the bench's summary lines: auto
       and the best a2a row over native, geometric mean and worst over the sizes)
"""
import csv
import math
import sys


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
            g = math.exp(sum(math.log(x) for x, _ in ratios) / len(ratios))
            w, at = max(ratios)
            lines.append(f"{label} geometric mean {g:.3f}, worst {w:.3f} (at {at} B)")
    print(f"{path}: P = {rows[0]['procs']}, {rows[0]['collective']} {rows[0]['workload']}: " + "; ".join(lines))


def main():
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
