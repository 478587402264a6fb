#!/usr/bin/env python3
"""Runs a roofplan command that prints CSV and checks it the way a spreadsheet or pandas would read it.

usage: check_csv.py ROOFPLAN [--columns A,B] [--numeric A,B] [--where COL=VAL] [--expect COL=VAL]... [--min-rows N]
                    -- ARGS...
Checks: RFC 4180 parse; every row has the header's number of fields; the named columns exist; numeric columns
hold plain numbers (no thousands separators, no SI suffixes) or nothing; the row selected by --where has the
expected values (numbers compared to 1e-9 relative).
"""
import argparse
import csv
import io
import math
import subprocess
import sys


def number(text):
    try:
        v = float(text)
    except ValueError:
        return None
    return v if math.isfinite(v) else None


def main():
    argv = sys.argv[1:]
    if "--" not in argv:
        sys.exit("check_csv.py: give the roofplan arguments after --")
    split = argv.index("--")
    p = argparse.ArgumentParser()
    p.add_argument("roofplan")
    p.add_argument("--columns", default="")
    p.add_argument("--numeric", default="")
    p.add_argument("--where", default="")
    p.add_argument("--expect", action="append", default=[])
    p.add_argument("--min-rows", type=int, default=1)
    o = p.parse_args(argv[:split])
    run = subprocess.run([o.roofplan] + argv[split + 1:], capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"roofplan exited {run.returncode}: {run.stderr}")
    rows = list(csv.reader(io.StringIO(run.stdout, newline="")))
    if not rows:
        sys.exit("no CSV output")
    header, body = rows[0], rows[1:]
    if len(body) < o.min_rows:
        sys.exit(f"{len(body)} rows, expected at least {o.min_rows}")
    for i, row in enumerate(body, start=2):
        if len(row) != len(header):
            sys.exit(f"line {i} has {len(row)} fields, the header {len(header)}: {row}")
    for col in filter(None, o.columns.split(",")):
        if col not in header:
            sys.exit(f"no column '{col}' in {header}")
    for col in filter(None, o.numeric.split(",")):
        k = header.index(col)
        for row in body:
            if row[k] != "" and number(row[k]) is None:
                sys.exit(f"column '{col}' holds '{row[k]}', not a plain number")
    if o.where:
        col, val = o.where.split("=", 1)
        hits = [r for r in body if r[header.index(col)] == val]
        if len(hits) != 1:
            sys.exit(f"{len(hits)} rows with {col}={val}")
        for e in o.expect:
            ecol, want = e.split("=", 1)
            got = hits[0][header.index(ecol)]
            a, b = number(got), number(want)
            ok = (a is not None and b is not None and abs(a - b) <= 1e-9 * max(abs(a), abs(b), 1e-300)) or got == want
            if not ok:
                sys.exit(f"{ecol} of {col}={val} is '{got}', expected '{want}'")
    print(f"CSV ok: {len(body)} rows x {len(header)} columns")


if __name__ == "__main__":
    main()
