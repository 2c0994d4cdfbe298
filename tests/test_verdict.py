#!/usr/bin/python3
"""tools/verdict.py on small synthetic `a2a bench` CSVs: the noise floor is
the 90th percentile of |a2a/native - 1| over a group's sizes; auto loses only
beyond 1 + max(floor, tolerance); a re-measured cell is judged on its
re-measured ratio (ctest: tools.verdict)."""
import csv
import importlib.util
import io
import os
import tempfile
import unittest
from contextlib import redirect_stdout

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("verdict", os.path.join(HERE, "..", "tools", "verdict.py"))
verdict = importlib.util.module_from_spec(spec)
spec.loader.exec_module(verdict)

SIZES = [16 << i for i in range(10)]  # 16 B .. 8 KiB
NATIVE_DEV = [0.01, -0.02, 0.03, -0.04, 0.05, 0.06, -0.07, 0.08, 0.09, -0.30]  # floor: 0.09 (9th of 10)


def write_csv(path, cells, P=2, collective="alltoall", workload=""):
    """cells: {bytes: {row: (paired ratio, resolved)}}; the library's row is added at 10 us."""
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["collective", "workload", "procs", "bytes", "algorithm", "resolved", "median_us",
                    "paired_to_native"])
        for b, rows in cells.items():
            w.writerow([collective, workload, P, b, "native", "MPI_Alltoall", 10.0, 1.0])
            for alg, (r, resolved) in rows.items():
                w.writerow([collective, workload, P, b, alg, resolved, 10.0 * r, r])


def sweep(auto):
    """A sweep whose a2a/native deviates by NATIVE_DEV and auto (shm) by auto[bytes] (else 1.0)."""
    return {b: {"auto": (auto.get(b, 1.0), "shm"), "shm": (auto.get(b, 1.0), "shm"),
                "a2a/native": (1 + d, "native")} for b, d in zip(SIZES, NATIVE_DEV)}


class Verdict(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.dir.cleanup()

    def path(self, name):
        return os.path.join(self.dir.name, name)

    def read(self, name):
        with open(self.path(name)) as f:
            return f.read()

    def run_verdict(self, *args):
        out = io.StringIO()
        with redirect_stdout(out):
            verdict.main(list(args))
        return out.getvalue()

    def test_floor_is_the_90th_percentile(self):
        write_csv(self.path("a.csv"), sweep({}))
        self.assertAlmostEqual(verdict.Group(self.path("a.csv")).floor(), 0.09)

    def test_within_the_floor_is_no_loss(self):
        write_csv(self.path("a.csv"), sweep({1024: 1.08}))  # beyond 5 %, within the 9 % floor
        text = self.run_verdict(self.path("a.csv"), "--losses", self.path("losses.tsv"))
        self.assertIn("| 2 | alltoall | 9.0 % |", text)
        self.assertIn("auto never lost beyond it in 10 cases", text)
        self.assertEqual(self.read("losses.tsv"), "")

    def test_a_loss_beyond_the_floor_is_reported(self):
        write_csv(self.path("a.csv"), sweep({1024: 1.30, 64: 1.08}))
        text = self.run_verdict(self.path("a.csv"), "--losses", self.path("losses.tsv"))
        verdict_line = text.splitlines()[-1]
        self.assertIn("auto lost beyond it in 1 of 10 cases: P=2 alltoall 1 KiB 1.300", verdict_line)
        self.assertIn("21.0 points beyond 1.090", verdict_line)
        self.assertNotIn("64 B", verdict_line)
        rows = [line.split("\t") for line in self.read("losses.tsv").splitlines()]
        self.assertEqual([r[:4] + r[7:] for r in rows], [["2", "alltoall", "-", "1024", "shm"]])

    def test_the_tolerance_is_a_minimum(self):
        quiet = {b: {"auto": (1.06 if b == 1024 else 1.0, "shm"), "a2a/native": (1.001, "native")} for b in SIZES}
        write_csv(self.path("a.csv"), quiet)
        self.assertIn("lost beyond it in 1 of 10", self.run_verdict(self.path("a.csv")))
        self.assertIn("never lost", self.run_verdict(self.path("a.csv"), "--tolerance", "0.07"))

    def test_remeasured_within_the_floor_clears_the_cell(self):
        write_csv(self.path("a.csv"), sweep({1024: 1.30}))
        write_csv(self.path("again.csv"), {1024: {"auto": (1.02, "shm"), "a2a/native": (1.01, "native")}})
        text = self.run_verdict(self.path("a.csv"), "--remeasured", self.path("again.csv"))
        self.assertIn("| P=2 alltoall 1 KiB | 1.300 (shm) | 1.020 | 1.020 (shm) | 1.010 | 1.090 | within |", text)
        self.assertIn("auto never lost beyond it", text.splitlines()[-1])
        self.assertIn("1 re-measured (at most 12, worst first), 1 of those within the floor", text)

    def test_remeasured_loss_stays_a_loss(self):
        write_csv(self.path("a.csv"), sweep({1024: 1.30}))
        write_csv(self.path("again.csv"), {1024: {"auto": (1.25, "shm"), "a2a/native": (0.98, "native")}})
        line = self.run_verdict(self.path("a.csv"), "--remeasured", self.path("again.csv")).splitlines()[-1]
        self.assertIn("P=2 alltoall 1 KiB 1.250 (re-measured, first 1.300; 16.0 points beyond 1.090)", line)

    def test_remeasured_floor_of_its_own(self):
        # The re-measurement's a2a/native is 1.30 off: its own floor covers auto's 1.25.
        write_csv(self.path("a.csv"), sweep({1024: 1.30}))
        write_csv(self.path("again.csv"), {1024: {"auto": (1.25, "shm"), "a2a/native": (1.30, "native")}})
        self.assertIn("never lost", self.run_verdict(self.path("a.csv"), "--remeasured", self.path("again.csv")))

    def test_remeasured_first_pick_counts_where_auto_alone_chose_otherwise(self):
        write_csv(self.path("a.csv"), sweep({1024: 1.30}))
        write_csv(self.path("again.csv"), {1024: {"auto": (1.0, "native"), "a2a/native": (1.0, "native"),
                                                  "shm": (1.40, "shm")}})
        line = self.run_verdict(self.path("a.csv"), "--remeasured", self.path("again.csv")).splitlines()[-1]
        self.assertIn("P=2 alltoall 1 KiB 1.400 (re-measured", line)

    def test_no_floor_row_keeps_the_tolerance(self):
        write_csv(self.path("a.csv"), {b: {"auto": (1.06 if b == 64 else 1.0, "shm")} for b in SIZES})
        text = self.run_verdict(self.path("a.csv"))
        self.assertIn("no noise floor", text)
        self.assertIn("P=2 alltoall 64 B 1.060", text)


if __name__ == "__main__":
    unittest.main(verbosity=2)
