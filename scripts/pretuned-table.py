#!/usr/bin/env python3
"""Gathers tuning-cache entries (the <64 hex>.json files `kiln tune` writes) into Kiln's pretuned
table, src/ops/data/pretuned.json (src/ops/pretuned.h), marking each `pretuned`. Entries already in
the table are kept unless a new one has the same key (driver version aside); the table is written
sorted, so a diff shows what a run changed.

    scripts/pretuned-table.py bench/results/2026-12-04-h200-tune/entries
"""
import argparse
import json
import pathlib
import re
import sys

TABLE = pathlib.Path(__file__).resolve().parent.parent / "src/ops/data/pretuned.json"


def key_id(key: dict) -> str:
    k = json.loads(json.dumps(key))
    k["device"].pop("driverVersion", None)  # not compared by a pretuned lookup
    return json.dumps(k, sort_keys=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dirs", nargs="+", type=pathlib.Path, help="folders of tuning-cache entries")
    ap.add_argument("-o", "--output", type=pathlib.Path, default=TABLE)
    args = ap.parse_args()
    table = json.loads(args.output.read_text()) if args.output.exists() else {"entries": []}
    entries = {key_id(e["key"]): e for e in table["entries"]}
    added = 0
    for d in args.dirs:
        for f in sorted(d.iterdir()):
            if not re.fullmatch(r"[0-9a-f]{64}\.json", f.name):
                continue
            e = json.loads(f.read_text())
            if e.get("format") != "kiln tuning entry" or e.get("version") != 1:
                print(f"skipping {f}: not a kiln tuning entry of version 1", file=sys.stderr)
                continue
            e["entry"]["source"] = "pretuned"
            entries[key_id(e["key"])] = {"key": e["key"], "entry": e["entry"]}
            added += 1
    out = {"format": "kiln pretuned table", "version": 1,
           "entries": [entries[k] for k in sorted(entries)]}
    args.output.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")
    print(f"{args.output}: {len(out['entries'])} entries ({added} read)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
