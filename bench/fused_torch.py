#!/usr/bin/env python3
"""Fused programs against what a torch user would otherwise run, in one process on the GPU:
Kiln's kernel (kiln.autotune's winner at the shape, then kiln.compile) against torch eager (cuBLAS
plus the elementwise kernels) and torch.compile(mode="max-autotune"), at shared/BENCH.md's large
shapes:

  * gemm_bias_gelu (examples/gemm_bias_gelu.cpp): C = gelu_tanh(A·B + bias)
  * gemm_bias_silu_residual (examples/gemm_bias_silu_residual.cpp): C = silu(A·B + bias) + R
  * the memory-bound examples silu_and_mul and add_rms_norm (examples/*.cpp, the rowwise strategy)

A, B, R and X are BF16 random normal; bias (f32 in Kiln's programs, BF16 in torch's: what a torch
user keeps) random normal. Each program's text comes from `kiln examples --print NAME` (--kiln-tool),
so it is the C++ example's. Every timed output is checked against torch eager's (relative
Frobenius error under 2e-2: eager rounds its intermediates to BF16, Kiln keeps them in f32) before
its time is kept; times are the median of --reps CUDA-event timings with L2 flushed (a 256 MB write)
before each, the three in alternation. torch.compile's autotuning time and Kiln's search time are
reported beside. Cases start in order until --max-seconds have passed; JSON is written after every
case. A benchmark, not a test: it never fails on time. Exits 3 without a GPU or torch.

  PYTHONPATH=build-gpu-py python3 bench/fused_torch.py --kiln-tool gpu-bin/kiln --json fused.json
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time

# (program, shapes): the GEMMs at BENCH.md's large shapes (M, N, K), the memory-bound ones at
# kiln_rowwise_bench's large ones (M, N).
CASES = [("gemm_bias_gelu", (4096, 4096, 4096)), ("gemm_bias_silu_residual", (4096, 4096, 4096)),
         ("gemm_bias_gelu", (8192, 8192, 8192)), ("gemm_bias_silu_residual", (8192, 8192, 8192)),
         ("gemm_bias_gelu", (4096, 14336, 4096)), ("gemm_bias_silu_residual", (4096, 14336, 4096)),
         ("silu_and_mul", (16384, 14336)), ("add_rms_norm", (32768, 8192)),
         ("gemm_bias_gelu", (8192, 1024, 4096)), ("gemm_bias_silu_residual", (8192, 1024, 4096))]
EPS = 1e-6


def torch_programs(torch, F):
    """name -> (inputs(shape) -> (kiln args in the program's order, torch args), eager fn, dims)."""
    bf = torch.bfloat16

    def randn(*shape, dtype=bf):
        return torch.randn(*shape, device="cuda", dtype=dtype)

    def gemm_inputs(shape, residual):
        m, n, k = shape
        a, b, bias = randn(m, k), randn(k, n), randn(n, dtype=torch.float32)
        kiln_args, torch_args = [a, b, bias], [a, b, bias.to(bf)]
        if residual:
            r = randn(m, n)
            kiln_args.append(r)
            torch_args.append(r)
        kiln_args.append(torch.empty(m, n, device="cuda", dtype=bf))
        return kiln_args, torch_args

    def gelu(a, b, bias):
        return F.gelu(a @ b + bias, approximate="tanh")

    def silu_residual(a, b, bias, r):
        return F.silu(a @ b + bias) + r

    def silu_and_mul_inputs(shape):
        g, u = randn(*shape), randn(*shape)
        return [g, u, torch.empty_like(g)], [g, u]

    def silu_and_mul(g, u):
        return F.silu(g) * u

    def add_rms_norm_inputs(shape):
        x, r, w = randn(*shape), randn(*shape), randn(shape[1])
        return [x, r, w, torch.empty_like(x), torch.empty_like(x)], [x, r, w]

    def add_rms_norm(x, r, w):
        h = x + r
        return h, F.rms_norm(h, (h.shape[-1],), w, EPS)

    mnk = lambda s: dict(M=s[0], N=s[1], K=s[2])
    mn = lambda s: dict(M=s[0], N=s[1])
    return {
        "gemm_bias_gelu": (lambda s: gemm_inputs(s, False), gelu, mnk),
        "gemm_bias_silu_residual": (lambda s: gemm_inputs(s, True), silu_residual, mnk),
        "silu_and_mul": (silu_and_mul_inputs, silu_and_mul, mn),
        "add_rms_norm": (add_rms_norm_inputs, add_rms_norm, mn),
    }


def timed(torch, fns, reps, flush):
    """Median ms of each fn, in alternation (the order rotated every repetition), L2 flushed before
    each run, the GPU spinning past the host's work before the start event (python_overhead.py)."""
    times = [[] for _ in fns]
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for rep in range(reps):
        for j in range(len(fns)):
            i = (j + rep) % len(fns)
            flush.fill_(rep & 0xFF)
            torch.cuda._sleep(200_000)
            start.record()
            fns[i]()
            end.record()
            end.synchronize()
            times[i].append(start.elapsed_time(end))
    return [statistics.median(t) for t in times]


def rel_err(torch, out, ref):
    out, ref = out.float(), ref.float()
    return (torch.linalg.vector_norm(out - ref) / torch.linalg.vector_norm(ref)).item()


def example_text(tool, name):
    return subprocess.run([tool, "examples", "--print", name], check=True, capture_output=True, text=True).stdout


def run_case(torch, F, kiln, name, shape, args, results_row):
    make, eager, dims_of = torch_programs(torch, F)[name]
    program = kiln.parse(example_text(args.kiln_tool, name), name)
    dims = dims_of(shape)
    t0 = time.perf_counter()
    tuned = kiln.autotune(program, dims, budget_s=args.budget_s, use_cache=False)
    results_row["kiln_search_s"] = time.perf_counter() - t0
    results_row["kiln_config"] = tuned["config"]
    kernel = kiln.compile(program, dims=dims)
    torch.manual_seed(0)
    kiln_args, torch_args = make(shape)
    outs = [a for a in kiln_args[len(kiln_args) - (2 if name == "add_rms_norm" else 1):]]
    run_kiln = lambda: kernel(*kiln_args)
    run_eager = lambda: eager(*torch_args)
    t0 = time.perf_counter()
    compiled = torch.compile(eager, mode="max-autotune", fullgraph=True, dynamic=False)
    ref = run_eager()
    got = compiled(*torch_args)  # compiles and autotunes at this shape
    torch.cuda.synchronize()
    results_row["compile_autotune_s"] = time.perf_counter() - t0
    run_compiled = lambda: compiled(*torch_args)
    run_kiln()
    torch.cuda.synchronize()
    refs = ref if isinstance(ref, tuple) else (ref,)
    gots = got if isinstance(got, tuple) else (got,)
    results_row["kiln_rel_err"] = max(rel_err(torch, o, r) for o, r in zip(outs, refs))
    results_row["compile_rel_err"] = max(rel_err(torch, o, r) for o, r in zip(gots, refs))
    if results_row["kiln_rel_err"] > 2e-2 or results_row["compile_rel_err"] > 2e-2:
        results_row["error"] = "an output differs from torch eager's by more than 2e-2: not timed"
        return
    flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    kiln_ms, eager_ms, compile_ms = timed(torch, [run_kiln, run_eager, run_compiled], args.reps, flush)
    results_row.update(kiln_ms=kiln_ms, eager_ms=eager_ms, compile_ms=compile_ms, vs_eager=eager_ms / kiln_ms,
                       vs_compile=compile_ms / kiln_ms)
    if len(shape) == 3:
        results_row["kiln_tflops"] = 2.0 * shape[0] * shape[1] * shape[2] / kiln_ms / 1e9


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kiln-tool", default="build/tools/kiln", help="the kiln tool (prints the example programs)")
    ap.add_argument("--json", default="fused.json")
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--budget-s", type=float, default=0.0, help="kiln.autotune's budget_s per case")
    ap.add_argument("--max-seconds", type=float, default=0.0, help="start no case after this many seconds (0: none)")
    ap.add_argument("--cases", default="", help="comma-separated program names to run (default: all)")
    args = ap.parse_args()
    try:
        import torch
        import torch.nn.functional as F
    except ImportError as e:
        print(f"fused_torch: needs torch: {e}", file=sys.stderr)
        return 3
    if not torch.cuda.is_available():
        print("fused_torch: needs a GPU; torch sees none", file=sys.stderr)
        return 3
    import kiln
    wanted = set(filter(None, args.cases.split(",")))
    out = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "kiln": kiln.__version__,
           "reps": args.reps, "results": []}
    started = time.perf_counter()
    for name, shape in CASES:
        if wanted and name not in wanted:
            continue
        if args.max_seconds and time.perf_counter() - started > args.max_seconds:
            out.setdefault("skipped_for_time", []).append(f"{name} {shape}")
            continue
        row = {"program": name, "shape": list(shape)}
        try:
            run_case(torch, F, kiln, name, shape, args, row)
        except Exception as e:  # one case failing does not stop the others
            row["error"] = f"{type(e).__name__}: {e}"
        print(json.dumps(row), flush=True)
        out["results"].append(row)
        ok = [r for r in out["results"] if "kiln_ms" in r]
        gm = lambda key: math.exp(sum(math.log(r[key]) for r in ok) / len(ok)) if ok else 0.0
        fused = [r for r in ok if r["program"].startswith("gemm_")]
        gmf = lambda key: math.exp(sum(math.log(r[key]) for r in fused) / len(fused)) if fused else 0.0
        out["summary"] = {"cases": len(ok), "geomean_vs_eager": gm("vs_eager"), "geomean_vs_compile": gm("vs_compile"),
                          "fused_gemm_cases": len(fused), "fused_gemm_geomean_vs_eager": gmf("vs_eager"),
                          "fused_gemm_geomean_vs_compile": gmf("vs_compile")}
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)
    print("| program | shape | Kiln us | eager us | compile us | vs eager | vs compile | Kiln search s | compile s |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in out["results"]:
        if "kiln_ms" in r:
            print(f"| {r['program']} | {'x'.join(map(str, r['shape']))} | {r['kiln_ms'] * 1e3:.1f} | "
                  f"{r['eager_ms'] * 1e3:.1f} | {r['compile_ms'] * 1e3:.1f} | {r['vs_eager']:.2f}x | "
                  f"{r['vs_compile']:.2f}x | {r['kiln_search_s']:.1f} | {r['compile_autotune_s']:.1f} |")
        else:
            print(f"| {r['program']} | {'x'.join(map(str, r['shape']))} | {r.get('error', '?')} |")
    print(json.dumps(out.get("summary", {}), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
