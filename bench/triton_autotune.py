#!/usr/bin/env python3
"""Triton's autotune on kiln_tune_bench's shapes, its tuning time beside Kiln's (issue 43's goal:
report both on the same shapes).

The Triton kernel is the standard tiled BF16 matmul a Triton user writes (grouped raster, f32
accumulator, the tutorial's shape), autotuned over --configs of the usual 16 configs (block sizes
64-256, 3-5 stages, 4 or 8 warps), keyed on M, N and K. For each shape (from --shapes-from, a
kiln_tune_bench JSON, whose Kiln search seconds and tuned / cuBLAS ratios are copied beside; or
--shapes MxNxK;...): the autotuning time is the wall time of the first call, which compiles every
config not compiled yet and benchmarks each (Triton's own do_bench). The run starts with an empty
Triton cache (TRITON_CACHE_DIR, a fresh folder, set before Triton is imported), so the first shape
is cold, as Kiln's cold figure is, and the rest find warm what earlier shapes compiled. Then the winner is checked against
torch.mm (cuBLAS) and both are timed in alternation, L2 flushed before each run (median of
--reps). Writes JSON; prints a table. A benchmark, not a test. Exits 3 without a GPU, torch or
Triton.

  python3 bench/triton_autotune.py --shapes-from tune_bf16.json --json triton.json
"""
import argparse
import json
import os
import sys
import tempfile
import time

from fused_torch import timed  # the same alternating, L2-flushed timing


def configs(triton, n):
    """The usual matmul autotune list (Triton's tutorial and its common extensions), first n."""
    c = triton.Config
    base = [(128, 256, 64, 3, 8), (256, 128, 64, 3, 8), (128, 128, 64, 4, 8), (128, 128, 64, 4, 4),
            (64, 256, 64, 4, 4), (256, 64, 64, 4, 4), (128, 64, 64, 4, 4), (64, 128, 64, 4, 4),
            (128, 128, 32, 4, 4), (64, 64, 64, 5, 4), (128, 256, 64, 4, 8), (256, 128, 64, 4, 8),
            (64, 128, 32, 4, 4), (128, 64, 32, 4, 4), (64, 64, 32, 5, 2), (128, 128, 64, 3, 8)]
    return [c({"BLOCK_M": m, "BLOCK_N": nn, "BLOCK_K": k, "GROUP_M": 8}, num_stages=s, num_warps=w)
            for m, nn, k, s, w in base[:n]]


def make_kernel(triton, tl, cfgs):
    @triton.autotune(configs=cfgs, key=["M", "N", "K"])
    @triton.jit
    def matmul(a, b, c, M, N, K, sam, sak, sbk, sbn, scm, scn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
               BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
        pid = tl.program_id(0)
        grid_m, grid_n = tl.cdiv(M, BLOCK_M), tl.cdiv(N, BLOCK_N)
        width = GROUP_M * grid_n
        group = pid // width
        first_m = group * GROUP_M
        size_m = min(grid_m - first_m, GROUP_M)
        pid_m = first_m + (pid % size_m)
        pid_n = (pid % width) // size_m
        rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        rk = tl.arange(0, BLOCK_K)
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k0 in range(0, tl.cdiv(K, BLOCK_K)):
            kk = k0 * BLOCK_K + rk
            x = tl.load(a + rm[:, None] * sam + kk[None, :] * sak, mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)
            y = tl.load(b + kk[:, None] * sbk + rn[None, :] * sbn, mask=(kk[:, None] < K) & (rn[None, :] < N), other=0.0)
            acc = tl.dot(x, y, acc)
        tl.store(c + rm[:, None] * scm + rn[None, :] * scn, acc.to(tl.bfloat16), mask=(rm[:, None] < M) & (rn[None, :] < N))

    return matmul


def shapes_of(args):
    """[(M, N, K, kiln row or None)]."""
    if args.shapes:
        return [tuple(map(int, s.split("x"))) + (None,) for s in args.shapes.split(";") if s]
    rows = json.load(open(args.shapes_from))["results"]
    return [(r["M"], r["N"], r["K"], r) for r in rows][: args.limit]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shapes-from", help="a kiln_tune_bench JSON: its shapes, and Kiln's figures beside")
    ap.add_argument("--shapes", help="MxNxK;MxNxK instead")
    ap.add_argument("--limit", type=int, default=8, help="shapes taken from --shapes-from at most")
    ap.add_argument("--configs", type=int, default=16, help="autotune configs (of the 16 usual ones)")
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--max-seconds", type=float, default=0.0, help="start no shape after this many seconds")
    ap.add_argument("--json", default="triton.json")
    args = ap.parse_args()
    if not args.shapes and not args.shapes_from:
        ap.error("give --shapes-from or --shapes")
    os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix="triton-cache-")
    try:
        import torch
        import triton
        import triton.language as tl
    except ImportError as e:
        print(f"triton_autotune: needs torch and triton: {e}", file=sys.stderr)
        return 3
    if not torch.cuda.is_available():
        print("triton_autotune: needs a GPU; torch sees none", file=sys.stderr)
        return 3
    out = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "triton": triton.__version__,
           "configs": args.configs, "results": []}
    flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    started = time.perf_counter()
    for i, (m, n, k, kiln_row) in enumerate(shapes_of(args)):
        if args.max_seconds and time.perf_counter() - started > args.max_seconds:
            out.setdefault("skipped_for_time", []).append(f"{m}x{n}x{k}")
            continue
        row = {"M": m, "N": n, "K": k, "triton_cache": "cold" if i == 0 else "warm (new shape)"}
        try:
            kernel = make_kernel(triton, tl, configs(triton, args.configs))  # a fresh autotuner, no memo
            a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
            b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
            c = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
            grid = lambda meta: (triton.cdiv(m, meta["BLOCK_M"]) * triton.cdiv(n, meta["BLOCK_N"]),)
            run = lambda: kernel[grid](a, b, c, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                                       c.stride(0), c.stride(1))
            t0 = time.perf_counter()
            run()
            torch.cuda.synchronize()
            row["triton_autotune_s"] = time.perf_counter() - t0
            row["triton_config"] = str(kernel.best_config)
            ref = a @ b
            err = (torch.linalg.vector_norm(c.float() - ref.float()) / torch.linalg.vector_norm(ref.float())).item()
            row["triton_rel_err"] = err
            if err > 1e-2:
                row["error"] = f"Triton's result differs from cuBLAS's by {err:.3g}: not timed"
            else:
                tri_ms, cub_ms = timed(torch, [run, lambda: torch.mm(a, b, out=ref)], args.reps, flush)
                row.update(triton_ms=tri_ms, cublas_ms=cub_ms, triton_vs_cublas=cub_ms / tri_ms)
        except Exception as e:  # one shape failing does not stop the others
            row["error"] = f"{type(e).__name__}: {e}"
        if kiln_row:
            row["kiln_search_s"] = kiln_row["tuned"]["seconds"]
            row["kiln_compile_cache"] = kiln_row.get("compile_cache")
            row["kiln_tuned_vs_cublas"] = kiln_row.get("tuned", {}).get("vs_baseline")
        print(json.dumps(row), flush=True)
        out["results"].append(row)
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)
    print("| M×N×K | Triton autotune s | Triton cache | Triton / cuBLAS | Kiln search s | Kiln cache | Kiln / cuBLAS |")
    print("|---|---:|---|---:|---:|---|---:|")
    for r in out["results"]:
        fmt = lambda key, f="{:.2f}": f.format(r[key]) if r.get(key) is not None else "-"
        print(f"| {r['M']}×{r['N']}×{r['K']} | {fmt('triton_autotune_s', '{:.1f}')} | {r['triton_cache']} | "
              f"{fmt('triton_vs_cublas')} | {fmt('kiln_search_s', '{:.1f}')} | {r.get('kiln_compile_cache', '-')} | "
              f"{fmt('kiln_tuned_vs_cublas')} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
