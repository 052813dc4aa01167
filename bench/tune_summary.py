#!/usr/bin/env python3
"""One page of issue 43's figures from scripts/gpu-tune.sh's JSON files: the tuner space's GPU
tests (tests.json), kiln_tune_bench (BF16 against cuBLAS, FP8 against cuBLASLt),
bench/fused_torch.py and bench/triton_autotune.py, each against the issue's goals. Writes summary.md (the tables) and summary.json (the headline figures);
a missing or damaged file is named, and the rest summed up.

  python3 bench/tune_summary.py OUT_DIR
"""
import json
import math
import os
import sys


def load(path, problems):
    try:
        with open(path) as f:
            return json.load(f)
    except FileNotFoundError:
        problems.append(f"{os.path.basename(path)}: missing")
    except (OSError, ValueError) as e:
        problems.append(f"{os.path.basename(path)}: unreadable ({e})")
    return None


def geomean(xs):
    xs = [x for x in xs if x and x > 0]
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else None


def f(x, spec="{:.3f}"):
    return "-" if x is None else spec.format(x)


def tune_section(name, d, goal):
    """Markdown lines and headline figures of one kiln_tune_bench run."""
    s = d.get("summary", {})
    rows = d.get("results", [])
    base = rows[0].get("baseline", "baseline") if rows else "baseline"
    head = {"seed": d.get("seed"), "gpu": d.get("gpu"), "commit": d.get("commit"), "shapes": s.get("shapes"),
            "skipped_for_time": s.get("shapes_skipped_for_time"), "baseline": base,
            "pick_vs_baseline": s.get("geomean_pick_vs_baseline"),
            "tuned_vs_baseline": s.get("geomean_tuned_vs_baseline"),
            "exhaustive_vs_baseline": s.get("geomean_exhaustive_vs_baseline"),
            "tuned_vs_exhaustive": s.get("geomean_tuned_vs_exhaustive"), "tune_s_median": s.get("tune_s_median"),
            "tune_s_max": s.get("tune_s_max"), "tune_s_over_10": s.get("tune_s_over_10"),
            "cold_tune_s": s.get("cold_tune_s"), "warm_new_shape_tune_s_median": s.get("warm_new_shape_tune_s_median"),
            "warm_same_shape_tune_s": s.get("warm_same_shape_tune_s"), "bucketing": s.get("bucketing")}
    cold = s.get("cold_tune_s") or []
    exhaustive = sum(1 for r in rows if r.get("tuned_vs_exhaustive"))
    head["exhaustive_shapes"] = exhaustive
    # The exhaustive search may run at the first shapes only (kiln_tune_bench --exhaustive-shapes).
    over = f" (the first {exhaustive} shapes)" if exhaustive < len(rows) else ""
    warm = [r["tuned"]["seconds"] for r in rows if r.get("compile_cache", "").startswith("warm")]
    warm += s.get("warm_same_shape_tune_s") or []
    lines = [f"## {name}: kiln tune against {base}", "",
             f"{d.get('gpu')}, commit {d.get('commit')}, seed {d.get('seed')}: {s.get('shapes')} shapes"
             f" ({s.get('shapes_skipped_for_time') or 0} not started for time).", "",
             "| | geomean |", "|---|---:|",
             f"| heuristic pick / {base} | {f(head['pick_vs_baseline'])} |",
             f"| tuned / {base} (goal >= {goal}) | {f(head['tuned_vs_baseline'])} |",
             f"| exhaustive / {base}{over} | {f(head['exhaustive_vs_baseline'])} |",
             f"| tuned / exhaustive (goal >= 0.99){over} | {f(head['tuned_vs_exhaustive'])} |", "",
             f"Search seconds: median {f(s.get('tune_s_median'), '{:.1f}')}, max {f(s.get('tune_s_max'), '{:.1f}')}, "
             f"{s.get('tune_s_over_10')} over 10 s; cold compile cache {', '.join(f'{x:.1f}' for x in cold) or '-'} s "
             f"(goal <= 30: {sum(x <= 30 for x in cold)} of {len(cold)}); warm {sum(x <= 10 for x in warm)} of "
             f"{len(warm)} within 10 s (new shapes median {f(s.get('warm_new_shape_tune_s_median'), '{:.1f}')} s, "
             f"same shape again {', '.join(f'{x:.1f}' for x in s.get('warm_same_shape_tune_s') or []) or '-'} s)."]
    rowwise = [r["cublaslt_rowwise_ms"] / r["tuned"]["ms"] for r in rows
               if r.get("cublaslt_rowwise_ms") and r.get("tuned", {}).get("ms")]
    if rowwise:
        head["tuned_vs_cublaslt_rowwise"] = geomean(rowwise)
        lines += ["", f"Against cuBLASLt with Kiln's own outer-vector (rowwise) scales, where it runs them: tuned "
                      f"{geomean(rowwise):.3f} over {len(rowwise)} shapes."]
    b = s.get("bucketing")
    if b:
        lines += ["", f"Bucketing: at {b['neighbours']} other shapes of tuned shapes' buckets, their own search's "
                      f"winner / the reused one: geomean {b['geomean_own_search_vs_reused']:.3f}, worst "
                      f"{b['worst_own_search_vs_reused']:.3f} (1.0: reusing costs nothing)."]
    lines += ["", f"| M×N×K | {base} us | pick | tuned | exhaustive | tuned / exh. | search s | cache | phases s "
                  "(compile, inputs, screen, timing, check) |", "|---|---:|---:|---:|---:|---:|---:|---|---|"]
    for r in rows:
        p = r.get("tuned", {}).get("phases", {})
        ph = ", ".join(f"{p.get(k, 0):.1f}" for k in ("compile", "inputs", "screen", "timing", "check"))
        vs = lambda k: f(r.get(k, {}).get("vs_baseline"), "{:.2f}")
        lines.append(f"| {r['M']}×{r['N']}×{r['K']} | {f(r.get('baseline_ms') and r['baseline_ms'] * 1e3, '{:.1f}')} | "
                     f"{vs('pick')} | {vs('tuned')} | {vs('exhaustive')} | {f(r.get('tuned_vs_exhaustive'))} | "
                     f"{f(r.get('tuned', {}).get('seconds'), '{:.1f}')} | {r.get('compile_cache', '-')} | {ph} |")
    return lines, head


def fused_section(d):
    s = d.get("summary", {})
    lines = ["## Fused programs against torch", "", f"{d.get('gpu')}, torch {d.get('torch')}.", "",
             f"Fused GEMMs: {f(s.get('fused_gemm_geomean_vs_eager'))}x torch eager (goal >= 1.2), "
             f"{f(s.get('fused_gemm_geomean_vs_compile'))}x torch.compile max-autotune (goal >= 1.0) over "
             f"{s.get('fused_gemm_cases')} cases; all cases {f(s.get('geomean_vs_eager'))}x eager, "
             f"{f(s.get('geomean_vs_compile'))}x compile.", "",
             "| program | shape | Kiln us | eager us | compile us | vs eager | vs compile | Kiln search s | compile s |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in d.get("results", []):
        shape = "x".join(map(str, r["shape"]))
        if "kiln_ms" not in r:
            lines.append(f"| {r['program']} | {shape} | {r.get('error', '?')} |")
            continue
        lines.append(f"| {r['program']} | {shape} | {r['kiln_ms'] * 1e3:.1f} | {r['eager_ms'] * 1e3:.1f} | "
                     f"{r['compile_ms'] * 1e3:.1f} | {r['vs_eager']:.2f} | {r['vs_compile']:.2f} | "
                     f"{r['kiln_search_s']:.1f} | {r['compile_autotune_s']:.1f} |")
    return lines, s


def triton_section(d):
    lines = ["## Triton's autotune beside kiln tune", "",
             f"{d.get('gpu')}, Triton {d.get('triton')}, {d.get('configs')} configs.", "",
             "| M×N×K | Triton autotune s | Triton cache | Triton / cuBLAS | Kiln search s | Kiln cache | Kiln / cuBLAS |",
             "|---|---:|---|---:|---:|---|---:|"]
    for r in d.get("results", []):
        lines.append(f"| {r['M']}×{r['N']}×{r['K']} | {f(r.get('triton_autotune_s'), '{:.1f}')} | {r.get('triton_cache')} | "
                     f"{f(r.get('triton_vs_cublas'), '{:.2f}')} | {f(r.get('kiln_search_s'), '{:.1f}')} | "
                     f"{r.get('kiln_compile_cache', '-')} | {f(r.get('kiln_tuned_vs_cublas'), '{:.2f}')} |"
                     + (f" {r['error']}" if r.get("error") else ""))
    t = [r["triton_autotune_s"] for r in d.get("results", []) if r.get("triton_autotune_s")]
    head = {"shapes": len(t), "triton_autotune_s_median": sorted(t)[len(t) // 2] if t else None,
            "triton_vs_cublas": geomean([r.get("triton_vs_cublas") for r in d.get("results", [])])}
    return lines, head


def main():
    if len(sys.argv) != 2:
        print(__doc__.split("\n\n")[-1].strip(), file=sys.stderr)
        return 2
    out = sys.argv[1]
    problems, md, heads = [], ["# Issue 43 on the GPU: kiln tune", ""], {}
    t = load(os.path.join(out, "tests.json"), problems)
    if t:
        heads["gpu_tests"] = t
        failed, cut = t.get("failed", []), t.get("cut_short", [])
        md += [f"GPU tests of the tuner's space (TunerSpace*, TwoPerSm*): {t.get('passed')} passed, "
               f"{len(failed)} failed, {len(cut)} cut short by the {t.get('seconds')} s bound."]
        md += [f"- failed: `{x}`" for x in failed] + [""]
    for name, file, goal in (("BF16", "tune_bf16.json", "1.0"), ("FP8", "tune_fp8.json", "1.0")):
        d = load(os.path.join(out, file), problems)
        if d:
            lines, heads[name.lower()] = tune_section(name, d, goal)
            md += lines + [""]
    d = load(os.path.join(out, "fused.json"), problems)
    if d:
        lines, heads["fused"] = fused_section(d)
        md += lines + [""]
    d = load(os.path.join(out, "triton.json"), problems)
    if d:
        lines, heads["triton"] = triton_section(d)
        md += lines + [""]
    if problems:
        md += ["## Missing", ""] + [f"- {p}" for p in problems]
    heads["problems"] = problems
    with open(os.path.join(out, "summary.md"), "w") as fh:
        fh.write("\n".join(md) + "\n")
    with open(os.path.join(out, "summary.json"), "w") as fh:
        json.dump(heads, fh, indent=1)
    print("\n".join(md))
    return 0


if __name__ == "__main__":
    sys.exit(main())
