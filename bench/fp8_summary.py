#!/usr/bin/env python3
"""Issue 41's GPU run in one page: reads what scripts/gpu-fp8.sh left in OUT (fp8_bench.json,
grouped_bench.json, grouped_torch.json, gpu_tests.log, sanitizer.log) and writes OUT/summary.md and
OUT/summary.json (grouped_masked.json too): per scaling mode the geometric mean of Kiln's family pick and best kernel against
cuBLASLt in the same mode, 4096x24576x1536, 4096x7168x16384 blockwise TFLOP/s (goal 1450), M = 64
against the copy bandwidth (goal 80%), the ragged MoE against torch._grouped_mm (goal 1.0x) and one
dense GEMM of the same work (goal 0.95x), DeepGEMM's published H800 figures beside; and the GPU
tests' and sanitizer's verdicts. Missing inputs are said, not guessed.

Usage: python3 bench/fp8_summary.py OUT
"""
import json
import math
import os
import re
import sys


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def geomean(xs):
    xs = [x for x in xs if x and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def fmt(x, spec=".3f"):
    return "n/a" if x is None else format(x, spec)


def fp8_part(run, s, md):
    md.append("## FP8 GEMM against cuBLASLt in the same mode (kiln_fp8_bench)\n")
    if not run:
        md.append("no fp8_bench.json (the benchmark did not run or was cut short)\n")
        return
    md.append(f"GPU {run.get('gpu')}, cuBLASLt {run.get('cublaslt_version')}, commit {run.get('commit')}\n")
    md.append("| mode | shapes | pick / cuBLASLt | best / cuBLASLt | 4096x24576x1536 pick |")
    md.append("|---|---|---|---|---|")
    modes = {}
    for r in run.get("results", []):
        modes.setdefault(r["scaling"], []).append(r)
    s["fp8"] = {}
    for mode, rows in modes.items():
        pick = [r["family_pick"]["vs_cublaslt"] for r in rows if r.get("family_pick")]
        best = [max([k["vs_cublaslt"] for k in r["kiln"] if k.get("correct")] or [0]) for r in rows]
        big = [r["family_pick"]["vs_cublaslt"] for r in rows
               if (r["M"], r["N"], r["K"]) == (4096, 24576, 1536) and r.get("family_pick")]
        s["fp8"][mode] = {"shapes": len(rows), "pick_geomean": geomean(pick), "best_geomean": geomean(best),
                          "4096x24576x1536": big[0] if big else None}
        md.append(f"| {mode} | {len(rows)} | {fmt(geomean(pick))} | {fmt(geomean(best))} | "
                  f"{fmt(big[0] if big else None)} |")
    md.append("")
    for r in run.get("results", []):
        if r["scaling"] != "block_1x128_128x128":
            continue
        pick = r.get("family_pick") or {}
        k = next((k for k in r["kiln"] if k.get("config") == pick.get("config")), {})
        dg = r.get("deepgemm_h800_published", {})
        key = f"{r['M']}x{r['N']}x{r['K']}"
        line = (f"- blockwise {key}: Kiln {fmt(k.get('tflops'), '.0f')} TFLOP/s ({pick.get('name')}), cuBLASLt "
                f"{fmt(r.get('cublaslt_tflops'), '.0f')}")
        if key == "4096x7168x16384":
            line += " (goal: Kiln >= 1450)"
            s["blockwise_4096x7168x16384_tflops"] = k.get("tflops")
        if r.get("copy_gbps"):
            frac = k.get("gbps", 0) / r["copy_gbps"] if k.get("gbps") else None
            line += f"; {fmt(k.get('gbps'), '.0f')} GB/s = {fmt(frac, '.0%')} of the copy's {r['copy_gbps']:.0f} GB/s"
            if r["M"] == 64:
                s.setdefault("blockwise_m64_copy_fraction", {})[key] = frac
                line += " (goal >= 80%)"
        if dg:
            line += f"; DeepGEMM H800 published {dg.get('tflops')} TFLOP/s, {dg.get('gbps')} GB/s"
        md.append(line)
    md.append("")


def grouped_part(run, torch_run, s, md):
    md.append("## Ragged grouped GEMM (kiln_grouped_bench, bench/grouped_torch.py)\n")
    if not run:
        md.append("no grouped_bench.json\n")
        return
    s["grouped"] = []
    for r in run.get("ragged", []):
        ok = [k for k in r.get("kiln", []) if k.get("correct") and k.get("ms")]
        best = min(ok, key=lambda k: k["ms"]) if ok else None
        pick = r["kiln"][0] if r.get("kiln") else {}
        dense = r.get("cublas_dense_same_work_ms") or r.get("cublaslt_dense_same_work_ms")
        entry = {"layout": r["layout"], "fp8": r["fp8"], "rows": r["rows"],
                 "pick": pick.get("config"), "pick_ok": pick.get("correct"), "pick_ms": pick.get("ms"),
                 "best_ms": best["ms"] if best else None, "best_tflops": best.get("tflops") if best else None,
                 "vs_dense_same_work": dense / best["ms"] if best and dense else None,
                 "pick_vs_dense_same_work": dense / pick["ms"] if pick.get("ms") and dense else None,
                 "pick_one_group_ms": pick.get("one_group_ms"), "pick_vs_one_group": pick.get("vs_one_group"),
                 "bad": [k["config"] for k in r.get("kiln", []) if not k.get("correct")]}
        s["grouped"].append(entry)
        md.append(f"- {r['layout']} {'FP8 blockwise' if r['fp8'] else 'BF16'} rows {r['rows']}: Kiln best "
                  f"{fmt(entry['best_ms'], '.4f')} ms {fmt(entry['best_tflops'], '.0f')} TFLOP/s, "
                  f"{fmt(entry['vs_dense_same_work'])}x one dense GEMM of the same work (goal 0.95); pick "
                  f"{'ok' if entry['pick_ok'] else 'NOT OK'} {fmt(entry['pick_vs_dense_same_work'])}x dense"
                  + (f", {fmt(entry['pick_vs_one_group'])}x itself on one group of all rows"
                     if entry["pick_vs_one_group"] else "")
                  + f"; kernels not correct/not built: {len(entry['bad'])}")
    if torch_run:
        for e in torch_run.get("results", []):
            s["vs_torch_grouped_mm"] = e.get("kiln_vs_grouped_mm")
            md.append(f"- torch._grouped_mm (torch {e.get('torch')}): "
                      f"{fmt(e.get('grouped_mm', {}).get('ms'), '.4f')} ms; Kiln's best BF16 ragged kernel "
                      f"{fmt(e.get('kiln_vs_grouped_mm'))}x it (goal 1.0)")
    else:
        md.append("- torch._grouped_mm: not measured (no grouped_torch.json)")
    md.append("")


def checks_part(out, s, md):
    md.append("## GPU tests and compute-sanitizer\n")
    for name in ("gpu_tests.log", "sanitizer.log"):
        try:
            text = open(os.path.join(out, name)).read()
        except OSError:
            md.append(f"- {name}: missing")
            continue
        lines = [ln for ln in text.splitlines()
                 if re.search(r"exit \d+|ERROR SUMMARY|^\[  (PASSED|FAILED) |FAILED TEST", ln)]
        s[name] = lines[-12:]
        md.extend(f"- {ln}" for ln in lines[-12:])
    md.append("")


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "out"
    s, md = {}, ["# Issue 41 GPU run\n"]
    fp8_part(load(os.path.join(out, "fp8_bench.json")), s, md)
    grouped = load(os.path.join(out, "grouped_bench.json"))
    masked = load(os.path.join(out, "grouped_masked.json"))
    if grouped and masked:
        grouped["ragged"] = grouped.get("ragged", []) + masked.get("ragged", [])
    grouped_part(grouped or masked, load(os.path.join(out, "grouped_torch.json")), s, md)
    checks_part(out, s, md)
    with open(os.path.join(out, "summary.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    with open(os.path.join(out, "summary.json"), "w") as f:
        json.dump(s, f, indent=2)
    print("\n".join(md))
    return 0


if __name__ == "__main__":
    sys.exit(main())
