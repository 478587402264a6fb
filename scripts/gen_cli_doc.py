#!/usr/bin/env python3
"""Refreshes the option lists in docs/cli.md from the CLI's own --help output.

Usage: scripts/gen_cli_doc.py path/to/roofplan [docs/cli.md]

Each block between `<!-- help: SUBCOMMAND -->` and `<!-- /help -->` (an empty SUBCOMMAND: the top level) is
replaced by the output of `roofplan SUBCOMMAND --help` in a text fence, so the reference never lists an option
that does not exist.  A subcommand the binary does not know is an error.
"""
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def help_text(binary, sub):
    args = [binary] + ([sub] if sub else []) + ["--help"]
    out = subprocess.run(args, capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed ({out.returncode}): {out.stderr.strip()}")
    text = out.stdout.replace(binary, "roofplan").rstrip() + "\n"
    # CLI11 answers an unknown subcommand's --help with the top-level help: refuse it rather than document it.
    if sub and not re.search(rf"^Usage: roofplan {re.escape(sub)}\b", text, re.M):
        raise SystemExit(f"'{sub}' is not a subcommand of {binary}")
    return text


def main():
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    binary = sys.argv[1]
    doc = Path(sys.argv[2]) if len(sys.argv) > 2 else ROOT / "docs" / "cli.md"
    text = doc.read_text()
    pattern = re.compile(r"(<!-- help: ?([a-z-]*) -->\n).*?(<!-- /help -->)", re.S)
    count = 0

    def replace(m):
        nonlocal count
        count += 1
        return m.group(1) + "```text\n" + help_text(binary, m.group(2)) + "```\n" + m.group(3)

    doc.write_text(pattern.sub(replace, text))
    print(f"{doc}: {count} option lists refreshed")


if __name__ == "__main__":
    main()
