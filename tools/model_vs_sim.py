#!/usr/bin/env python3
"""auto's cost model against online SMPI at P = 256 (theta-4x64): model / SMPI per row and size.

usage: model_vs_sim.py [--a2a build/a2a] [--results runs/sim] [--out results]

The SMPI times are sim-bench.sh's validated runs (ports: table (p); portsv,
uniform blocks of at most S: table (s)); the model is `a2a model --rank` fed
the machine auto measured online on the same platform
(p256-auto-model.txt, as sim-bench.sh's autopick), alltoallv
priced at a mean block of S/2 and a largest of S.  Prints markdown tables, or
with --out DIR writes DIR/sim-model-alltoall.csv and sim-model-alltoallv.csv
for tools/tables.py to render into docs/simulation.md."""
import argparse
import csv
import math
import os
import re
import subprocess

NODES = "64,64,64,64"
Q, N = 64, 4


def measured_machine(results):
    text = open(os.path.join(results, "p256-auto-model.txt")).read()
    return re.search(r"machine measured in [0-9.]* ms: ([^;]*);", text).group(1) + ",shm_copy=0,cma=0"


def ranked(a2a, machine, coll, s):
    """The model's candidates at block size s: canonical spec -> us."""
    args = [a2a, "model", "--rank", "--procs", "256", "--node-sizes", NODES, "--library", "other",
            "--cost-model", machine, "--collective", coll]
    args += ["--bytes", str(s)] if coll == "alltoall" else ["--bytes", str(s // 2), "--max-block", str(s)]
    out = {}
    for line in subprocess.run(args, capture_output=True, text=True, check=True).stdout.splitlines():
        m = re.match(r"\s*([0-9.]+) us\s+(\S+)$", line)
        if m:
            out[m.group(2)] = float(m.group(1))
    return out


def canonical(row):
    """A bench row's spec as the model names it: the node-aware rows' default radices spelled out
    (ceil(sqrt(Q)) inside a node, N among nodes; tuna-hier coalesced with its default block)."""
    alg, _, knobs = row.partition(":")
    r1 = math.isqrt(Q - 1) + 1
    if alg == "tra2":
        return f"tra2:radix-intra={r1},radix-inter={N}" + (f",{knobs}" if knobs else "")
    if alg == "tuna-hier":
        return f"tuna-hier:variant=coalesced,radix={r1},block=" + (f"*,{knobs}" if knobs else "*")
    if re.fullmatch(r"(tra|tuna):radix=2,ports=1", row):
        return alg + ":radix=2"  # one exchange a digit: B = 1 is all
    return row


def find(model, spec):
    if "*" not in spec:
        return model.get(spec)
    pattern = re.compile("^" + re.escape(spec).replace(r"\*", r"[0-9]+") + "$")
    return next((us for name, us in model.items() if pattern.match(name)), None)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--a2a", default="build/a2a")
    ap.add_argument("--results", default="runs/sim")
    ap.add_argument("--out", metavar="DIR")
    args = ap.parse_args()
    machine = measured_machine(args.results)
    for coll, run in (("alltoall", "ports-p256-theta-4x64"), ("alltoallv", "portsv-p256-uniform")):
        got = list(csv.DictReader(open(os.path.join(args.results, run + ".csv"), newline="")))
        sizes = sorted({int(r["bytes"]) for r in got})
        model = {s: ranked(args.a2a, machine, coll, s) for s in sizes}
        table = [["row"] + [f"{s} B" for s in sizes]]
        for row in dict.fromkeys(r["algorithm"] for r in got):
            cells = []
            for s in sizes:
                smpi = next(float(r["median_us"]) for r in got if r["algorithm"] == row and int(r["bytes"]) == s)
                us = find(model[s], canonical(row))
                cells.append("-" if us is None else f"{us / smpi:.2f}")
            table.append([row] + cells)
        if args.out:
            with open(os.path.join(args.out, f"sim-model-{coll}.csv"), "w", newline="") as f:
                csv.writer(f, lineterminator="\n").writerows(table)
            continue
        print(f"{coll} ({run}): model / SMPI\n")
        print("| " + " | ".join(table[0]) + " |")
        print("|---" * len(table[0]) + "|")
        for line in table[1:]:
            print("| " + " | ".join(line) + " |")
        print()

if __name__ == "__main__":
    main()
