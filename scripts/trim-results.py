#!/usr/bin/env python3
"""Drops per-kernel fields no test or script reads from bench/results' JSON summaries.

The benchmarks write every kernel's relative and sampled errors, registers and spills (and an
empty `error`); the recorded summaries keep what the tests and tables read: names, configs,
correctness and times. Compact files stay compact, indented ones take one space an indent. A file
is rewritten only where that makes it smaller. Keeps bench/results/ under check-results-size.py's
limit.

Usage: scripts/trim-results.py [--write] [folder ...]   (default: every folder of bench/results)
"""
import json
import os
import sys

DROP = {"rel_err", "sample_err", "registers", "spill_bytes"}


def trim(x):
    if isinstance(x, dict):
        for k in list(x):
            if k in DROP or (k == "error" and x[k] in ("", None)):
                del x[k]
            else:
                trim(x[k])
    elif isinstance(x, list):
        for v in x:
            trim(v)


def main(argv):
    write = "--write" in argv
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench", "results")
    folders = [a for a in argv if a != "--write"] or [root]
    before = after = 0
    for folder in folders:
        for dirpath, _, files in os.walk(folder):
            for name in sorted(files):
                if not name.endswith(".json"):
                    continue
                path = os.path.join(dirpath, name)
                with open(path) as f:
                    text = f.read()
                data = json.loads(text)
                trim(data)
                indented = "\n " in text
                out = (json.dumps(data, indent=1, ensure_ascii=False) if indented
                       else json.dumps(data, ensure_ascii=False, separators=(",", ":"))) + "\n"
                before += len(text.encode())
                smaller = len(out.encode()) < len(text.encode())
                after += len(out.encode()) if smaller else len(text.encode())
                if smaller and write:
                    with open(path, "w") as f:
                        f.write(out)
    print(f"trim-results: {before:,} -> {after:,} bytes{'' if write else ' (dry run: --write to rewrite)'}")


if __name__ == "__main__":
    main(sys.argv[1:])
