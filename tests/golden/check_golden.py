#!/usr/bin/env python3
"""Runs the commands of tests/golden/cases.txt and compares what each prints with tests/golden/expected/<name>.txt.

A refactor must print the same figures before and after; a change that means to change a figure regenerates the
files with --update and says why in its commit.  Usage:
    check_golden.py --build BUILD_DIR [--update] [--only NAME ...]
Numbers are compared as numbers: two outputs are the same when their text outside numbers is identical and each
pair of numbers agrees to 1e-9 relative (full-precision JSON doubles may move in their last bits when a formula's
operations are reordered; a printed figure never does).  Exit 0 when every output matches (or was updated), 1 on a
difference (a unified diff of the first lines is shown), 2 on a usage error or a command that could not run."""
import argparse
import difflib
import os
import pathlib
import re
import shlex
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
SOURCE = HERE.parent.parent


def read_cases(path):
    cases = []
    for number, line in enumerate(path.read_text().splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        parts = shlex.split(line)
        if len(parts) < 2:
            sys.exit(f"{path}:{number}: expected '<name> <tool> [arguments]', got '{line}'")
        cases.append((parts[0], parts[1], [a.replace("{src}", str(SOURCE)) for a in parts[2:]]))
    names = [c[0] for c in cases]
    duplicate = {n for n in names if names.count(n) > 1}
    if duplicate:
        sys.exit(f"{path}: duplicate case names: {', '.join(sorted(duplicate))}")
    return cases


def command_of(build, tool, args):
    binary = build / "tools" / "roofplan" if tool == "cli" else build / "examples" / f"roofplan-example-{tool}"
    if not binary.exists():
        sys.exit(f"check_golden: {binary} is not built")
    return [str(binary), *args]


def run(command, workdir):
    result = subprocess.run(command, cwd=workdir, capture_output=True, text=True, timeout=300)
    # Both streams and the exit status are part of the output; paths of the source tree are written as {src}.
    text = result.stdout + (f"--- stderr ---\n{result.stderr}" if result.stderr else "")
    text += f"--- exit {result.returncode} ---\n"
    return text.replace(str(SOURCE), "{src}")


NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")


def same(want, got, tolerance=1e-9):
    """Equal text outside numbers, and numbers equal to a relative tolerance."""
    if want == got:
        return True
    if NUMBER.sub("#", want) != NUMBER.sub("#", got):
        return False
    for a, b in zip(NUMBER.findall(want), NUMBER.findall(got)):
        if a != b and abs(float(a) - float(b)) > tolerance * max(abs(float(a)), abs(float(b))):
            return False
    return True


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", required=True, type=pathlib.Path, help="the CMake build directory")
    parser.add_argument("--update", action="store_true", help="rewrite the expected outputs")
    parser.add_argument("--only", nargs="*", default=None, help="case names to run (default: all)")
    options = parser.parse_args()
    expected_dir = HERE / "expected"
    expected_dir.mkdir(exist_ok=True)
    cases = read_cases(HERE / "cases.txt")
    if options.only:
        unknown = set(options.only) - {c[0] for c in cases}
        if unknown:
            sys.exit(f"check_golden: unknown case(s) {', '.join(sorted(unknown))}")
        cases = [c for c in cases if c[0] in options.only]
    failed = []
    with tempfile.TemporaryDirectory() as workdir:  # examples write their SVG charts into the working directory
        for name, tool, args in cases:
            output = run(command_of(options.build.resolve(), tool, args), workdir)
            path = expected_dir / f"{name}.txt"
            if options.update:
                path.write_text(output)
                continue
            if not path.exists():
                print(f"MISSING {name}: no {path.relative_to(SOURCE)} (run with --update)")
                failed.append(name)
                continue
            want = path.read_text()
            if not same(want, output):
                failed.append(name)
                diff = list(difflib.unified_diff(want.splitlines(), output.splitlines(), "expected", "now",
                                                 lineterm="", n=1))
                print(f"DIFFERS {name}:")
                print("\n".join(diff[:40]) + ("\n..." if len(diff) > 40 else ""))
    if options.update:
        print(f"check_golden: wrote {len(cases)} expected outputs")
        return 0
    print(f"check_golden: {len(cases) - len(failed)} of {len(cases)} outputs identical"
          + (f"; differ: {', '.join(failed)}" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
