#!/usr/bin/env python3
"""Where a lab's grading time goes (issue 29): sums the "seconds" of the test records in the
folders given (one per lab: a graders process's --convlab-results), by grader kind and phase,
and prints a markdown table, the process's wall time beside it (its start-up, outside the tests).

    phase_seconds.py --wall 41.2 lab05=build/results/phases/lab05 ...
    (--wall: one per folder, in order: that process's wall time in seconds)
"""
import argparse
import collections
import glob
import json
import os
import sys

PHASES = ["startup", "host", "memory", "copies", "calls", "counting", "timed_baseline", "timed_student",
          "timed_overhead"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--wall", type=float, action="append", default=[], help="the process's wall time, per folder")
    ap.add_argument("folders", nargs="+", help="LABEL=FOLDER of test records")
    a = ap.parse_intermixed_args()
    if a.wall and len(a.wall) != len(a.folders):
        sys.exit("phase_seconds.py: give one --wall per folder")
    print("| lab | kind | tests | " + " | ".join(PHASES) + " | total |")
    print("|---|---|---:|" + "---:|" * (len(PHASES) + 1))
    for i, arg in enumerate(a.folders):
        label, _, folder = arg.partition("=")
        if not os.path.isdir(folder):
            sys.exit(f"phase_seconds.py: no folder {folder}")
        by_kind = collections.defaultdict(collections.Counter)
        tests = collections.Counter()
        for path in sorted(glob.glob(os.path.join(folder, "*.json"))):
            with open(path) as f:
                record = json.load(f)
            seconds = record.get("seconds")
            if not seconds:
                continue
            kind = record["test"].split(".")[1]
            by_kind[kind].update(seconds)
            tests[kind] += 1
        lab_total = 0.0
        for kind in sorted(by_kind):
            s = by_kind[kind]
            lab_total += s["total"]
            print(f"| {label} | {kind} | {tests[kind]} | " + " | ".join(f"{s[p]:.2f}" for p in PHASES) +
                  f" | {s['total']:.2f} |")
        if a.wall:
            print(f"| {label} | outside the tests | | | | | | | | | | | {a.wall[i] - lab_total:.2f} |")


if __name__ == "__main__":
    main()
