#!/usr/bin/env python3
"""Fails when bench/results/ grows past what small summaries need.

Each run folder under bench/results/ keeps its JSON summaries and a README.md table (date, GPU,
commit, what was measured, which file is what); raw logs, ncu reports and sample dumps stay out of
the tree (git history keeps them). This check holds every folder to FOLDER_LIMIT bytes and the whole
directory to TOTAL_LIMIT bytes, so a run's raw output cannot slip in unnoticed.

Usage: scripts/check-results-size.py [RESULTS_DIR]   (default: bench/results beside this script)
"""
import os
import sys

FOLDER_LIMIT = 1_000_000
TOTAL_LIMIT = 10_000_000


def tree_bytes(path):
    return sum(os.path.getsize(os.path.join(root, name)) for root, _, names in os.walk(path) for name in names)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    results = os.path.normpath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, '..', 'bench', 'results'))
    if not os.path.isdir(results):
        print(f'check-results-size: {results} is not a directory', file=sys.stderr)
        return 2
    problems = []
    for name in sorted(os.listdir(results)):
        path = os.path.join(results, name)
        if os.path.isdir(path) and tree_bytes(path) > FOLDER_LIMIT:
            problems.append(f'{path}: {tree_bytes(path):,} bytes, over the {FOLDER_LIMIT:,} allowed per run folder')
    total = tree_bytes(results)
    if total > TOTAL_LIMIT:
        problems.append(f'{results}: {total:,} bytes in all, over the {TOTAL_LIMIT:,} allowed')
    for p in problems:
        print(f'check-results-size: {p}. Keep only the JSON summaries and the README table in the tree; '
              'leave raw logs and ncu reports out (git history keeps those already committed).', file=sys.stderr)
    if not problems:
        print(f'check-results-size: {results}: {total:,} bytes, every run folder under {FOLDER_LIMIT:,}')
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
