#!/usr/bin/env python3
"""Render the tables of docs/*.md from their compact CSVs in results/.

A table in a doc stands between two marker lines:

    <!-- table results/NAME.csv -->
    | ... |
    <!-- end table -->

and is the CSV rendered as markdown: its header row, then one row per
record, cells verbatim.  The generators (parity_tables.py, sim_table.py,
model_vs_sim.py, ...) write these CSVs from raw runs kept outside git;
this tool only renders them, so every table in docs/ regenerates from the
repository alone.

usage: tables.py [--check] [DOC ...]     (default: every docs/*.md)
  --check   change nothing; list the tables that differ from their CSV
            and exit 1 if any does (the docs.tables test)
"""
import argparse
import csv
import glob
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BEGIN = re.compile(r"^<!-- table (\S+\.csv) -->$")
END = "<!-- end table -->"


def render(path):
    with open(os.path.join(ROOT, path), newline="") as f:
        rows = list(csv.reader(f))
    if not rows:
        raise SystemExit(f"{path}: empty")
    cell = lambda s: s.replace("|", "\\|")
    lines = ["| " + " | ".join(cell(c) for c in rows[0]) + " |",
             "|" + "---|" * len(rows[0])]
    lines += ["| " + " | ".join(cell(c) for c in r) + " |" for r in rows[1:]]
    return lines


def update(doc):
    """The doc's text with every marked table re-rendered, and the names of those that changed."""
    out, changed, lines = [], [], open(doc).read().split("\n")
    i = 0
    while i < len(lines):
        m = BEGIN.match(lines[i])
        out.append(lines[i])
        i += 1
        if not m:
            continue
        j = i
        while j < len(lines) and lines[j] != END:
            j += 1
        if j == len(lines):
            raise SystemExit(f"{doc}: {m.group(1)} has no '{END}'")
        table = render(m.group(1))
        if lines[i:j] != table:
            changed.append(m.group(1))
        out += table
        i = j
    return "\n".join(out), changed


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true")
    ap.add_argument("docs", nargs="*")
    args = ap.parse_args()
    docs = args.docs or sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")))
    stale = 0
    for doc in docs:
        text, changed = update(doc)
        for name in changed:
            print(f"{os.path.relpath(doc, ROOT)}: {name} differs from its table")
        stale += len(changed)
        if changed and not args.check:
            open(doc, "w").write(text)
    if args.check and stale:
        print(f"{stale} table(s) out of date: python3 tools/tables.py")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
