#!/usr/bin/env python3
"""Renders README.md's results table from the latest recorded H200 summary.

The latest summary is the newest run folder under bench/results/ (folder names start with the
date) that holds a headline.json naming its headline files:

    {"bf16": {"file": "...json", "commit": "..."},          kiln_gemm_bench --family sm90
     "fp8_promoted": {...}, "fp8_fast": {...}}               kiln_fp8_bench, and with --fast-accum

Each row is the family's pick at one of shared/BENCH.md's shapes against the baseline timed in
alternation with it (cuBLAS for BF16, cuBLASLt in the same accumulation for FP8).

Usage:
  scripts/render-results.py           print the table
  scripts/render-results.py --write   put it into README.md between the results markers
  scripts/render-results.py --check   exit 1 if README.md's table differs from the rendered one
"""
import difflib
import json
import math
import os
import sys
import textwrap

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
RESULTS = os.path.join(ROOT, 'bench', 'results')
README = os.path.join(ROOT, 'README.md')
BEGIN, END = '<!-- results:begin -->', '<!-- results:end -->'
# (key in headline.json, operands, baseline, the pick's ratio field, the baseline's time field)
KINDS = [
    ('bf16', 'BF16', 'cuBLAS', 'vs_cublas', 'cublas_ms'),
    ('fp8_promoted', 'FP8', 'cuBLASLt', 'vs_cublaslt', 'cublaslt_ms'),
    ('fp8_fast', 'FP8, fast accum.', 'cuBLASLt FAST_ACCUM', 'vs_cublaslt', 'cublaslt_ms'),
]


class Error(Exception):
    pass


def latest_run():
    runs = sorted(d for d in os.listdir(RESULTS) if os.path.isfile(os.path.join(RESULTS, d, 'headline.json')))
    if not runs:
        raise Error(f'no run folder under {RESULTS} has a headline.json naming its headline files')
    return runs[-1]


def load(run, entry):
    path = os.path.join(RESULTS, run, entry['file'])
    with open(path) as f:
        data = json.load(f)
    recorded = data.get('commit')
    if recorded and recorded != entry['commit']:
        raise Error(f'{path} says commit {recorded}, {run}/headline.json says {entry["commit"]}')
    return data


def pick_row(result, ratio_key, base_key, where):
    """The family's pick at one shape: (its ms, the baseline's ms beside it, the ratio, its name)."""
    pick = result['family_pick']
    name = pick.get('name', pick['config'])
    for kernel in result['kiln']:
        if name in (kernel.get('name'), kernel.get('config')):
            return pick['ms'], kernel[base_key], pick[ratio_key], name
    raise Error(f'{where}: the family pick {name} at {result["M"]}x{result["N"]}x{result["K"]} is not among its kernels')


def tflops(m, n, k, ms):
    return 2.0 * m * n * k / (ms * 1e-3) / 1e12


def shape(m, n, k):
    return f'{m}³' if m == n == k else f'{m}×{n}×{k}'


def geomean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values))


def render():
    run = latest_run()
    with open(os.path.join(RESULTS, run, 'headline.json')) as f:
        headline = json.load(f)
    rows, means, commits, gpus = [], [], [], set()
    for key, operands, baseline, ratio_key, base_key in KINDS:
        if key not in headline:
            raise Error(f'{run}/headline.json has no "{key}" entry')
        data = load(run, headline[key])
        gpus.add(data['gpu'])
        commits.append(headline[key]['commit'])
        ratios = {'large': [], 'small': [], 'all': []}
        for r in data['results']:
            m, n, k = r['M'], r['N'], r['K']
            ms, base_ms, ratio, name = pick_row(r, ratio_key, base_key, f'{run}/{headline[key]["file"]}')
            short = name.replace('bf16_gemm_sm90_', '').replace('fp8_gemm_sm90_', '')
            rows.append(f'| {shape(m, n, k)} | {operands} | {baseline} | {tflops(m, n, k, base_ms):.0f} | '
                        f'{tflops(m, n, k, ms):.0f} | {ratio:.2f} | `{short}` |')
            ratios['all'].append(ratio)
            ratios['large' if min(m, n) >= 1024 else 'small'].append(ratio)
        if key == 'bf16':
            means.append(f'BF16 {geomean(ratios["large"]):.3f}x cuBLAS at M, N ≥ 1024 and '
                         f'{geomean(ratios["small"]):.3f}x at the small shapes')
        else:
            means.append(f'{operands} {geomean(ratios["all"]):.3f}x {baseline}')
    wrap = lambda text: textwrap.fill(text, 100, break_on_hyphens=False)
    commit_text = ' and '.join(dict.fromkeys(commits))
    lines = [
        f'<!-- rendered by scripts/render-results.py from bench/results/{run}/headline.json; edit there, not here -->',
        wrap(f'H200 run of {run[:10]} (bench/results/{run}/), at {commit_text}; GPU: {"; ".join(sorted(gpus))}. '
             'Each row is the family\'s pick against the baseline timed in alternation with it (median of '
             '30, L2 flushed, every output checked first). FP8 is e4m3 into BF16, Kiln scaling per row of A '
             'and column of B, cuBLASLt with tensor-wide scales; the FP8 rows add each K step\'s sums in '
             'f32 as cuBLASLt\'s default does, the fast-accumulation rows sum inside the tensor cores as '
             'its FAST_ACCUM does. TFLOP/s = 2·M·N·K / time.'),
        '',
        '| M×N×K | operands | baseline | baseline TFLOP/s | Kiln TFLOP/s | Kiln / baseline | Kiln\'s pick |',
        '|---|---|---|---:|---:|---:|---|',
    ] + rows + ['', wrap('Geometric means: ' + '; '.join(means) + '.')]
    return '\n'.join(lines) + '\n'


def readme_parts():
    with open(README) as f:
        text = f.read()
    if text.count(BEGIN) != 1 or text.count(END) != 1 or text.index(BEGIN) > text.index(END):
        raise Error(f'{README} must hold the lines {BEGIN} and {END} once each, in that order')
    head, rest = text.split(BEGIN + '\n', 1)
    table, tail = rest.split(END, 1)
    return head, table, tail


def main(argv):
    mode = argv[1] if len(argv) > 1 else None
    if mode not in (None, '--write', '--check') or len(argv) > 2:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        table = render()
        if mode is None:
            sys.stdout.write(table)
            return 0
        head, current, tail = readme_parts()
        if mode == '--write':
            with open(README, 'w') as f:
                f.write(head + BEGIN + '\n' + table + END + tail)
            return 0
        if current != table:
            sys.stderr.writelines(difflib.unified_diff(current.splitlines(True), table.splitlines(True),
                                                       'README.md', 'rendered'))
            print('render-results: README.md\'s results table is not what the latest summary renders; '
                  'run scripts/render-results.py --write', file=sys.stderr)
            return 1
        return 0
    except (Error, OSError, KeyError, ValueError) as e:
        print(f'render-results: {e}', file=sys.stderr)
        return 1


if __name__ == '__main__':
    sys.exit(main(sys.argv))
