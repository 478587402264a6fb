#!/usr/bin/env python3
"""Checks that every code block a document marks with `<!-- snippet: PATH -->` (the line before its fence) is the
file PATH of the source tree, byte for byte, so that the code the docs show is code that CI compiles.
Usage: check_doc_snippets.py DOC...   Exit 0 when all match, 1 on a difference, 2 on a malformed document."""
import difflib
import pathlib
import re
import sys

SOURCE = pathlib.Path(__file__).resolve().parent.parent
MARKER = re.compile(r"^<!-- snippet: (\S+) -->\n```[a-z]*\n(.*?)^```$", re.M | re.S)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    failed = 0
    for doc in map(pathlib.Path, sys.argv[1:]):
        text = doc.read_text()
        found = MARKER.findall(text)
        if text.count("<!-- snippet:") != len(found) or not found:
            print(f"{doc}: a snippet marker is not followed by a fenced code block (or there is none)")
            sys.exit(2)
        for path, block in found:
            wanted = (SOURCE / path).read_text()
            if block == wanted:
                print(f"{doc}: {path}: identical")
                continue
            failed += 1
            print(f"{doc}: the snippet of {path} differs from the file (copy the file into the doc):")
            sys.stdout.writelines(difflib.unified_diff(wanted.splitlines(True), block.splitlines(True),
                                                       path, f"{doc.name} snippet", n=1))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
