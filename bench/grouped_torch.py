#!/usr/bin/env python3
"""torch._grouped_mm at kiln_grouped_bench's ragged shape, and the same total work as one dense mm.

Run it in the same device call as the Kiln benchmark (shared/BENCH.md: ratios from one run only):

  build/bench/kiln_grouped_bench --layout ragged --json kiln.json
  python3 bench/grouped_torch.py --kiln kiln.json --json torch.json

The groups are kiln_grouped_bench's: 8 experts of 512..2048 rows (multiples of 16, drawn with
splitmix64 from seed 41, as bench/grouped_ragged.cpp draws them), N = 4096, K = 7168, BF16 in and
out, A [rows, K] row-major, B [G, K, N] K-major (the transposed view of a contiguous [G, N, K], as
torch._grouped_mm's CUTLASS kernel reads it), offsets int32 cumulative ends. The timed output is
checked against a loop of torch.mm per group first (relative Frobenius error under 1e-2); times are
the median of --reps CUDA-event timings with L2 flushed (a 256 MB write) before each. With --kiln,
Kiln's best correct ragged kernel against torch._grouped_mm. Writes JSON; exits 3 without a GPU or
torch.

--layout kgrouped: groups along K, the weight gradient (torch._grouped_mm's 2D x 2D case,
kiln_grouped_bench --layout kgrouped): dW_g = X_g^T dY_g with the same tokens per expert, X [T, M]
(M = --k, 7168) and dY [T, N] row-major, torch._grouped_mm(X.t(), dY, offs=offs) -> [G, M, N]
(out_dtype float32 where torch takes it, else its default, recorded), checked against a loop of
torch.mm per group in float32; and the same work as one dense X.t() @ dY.

--layout kgrouped --fp8: the FP8 blockwise weight gradient (kiln_grouped_bench --layout kgrouped's
FP8 row): each expert's tokens rounded up to a multiple of 128 (bench/grouped_kgrouped_fp8.cpp's
kgroupedFp8Tokens), e4m3 a [M, T] row-major and b [T, N] column-major. torch has no blockwise
grouped FP8 GEMM: torch._scaled_grouped_mm (where this torch has it) takes rowwise scales only
(scale_a [G * M], scale_b [G * N]), so it is timed in that cheaper mode, for orientation, and the
row says so; the same work as one dense torch._scaled_mm with 1x128 x 1x128 scales (cuBLASLt's
VEC128_32F, where this torch takes them) is the same-mode baseline.
"""
import argparse
import json
import sys

MASK = (1 << 64) - 1


def moe_rows(groups, lo, hi, seed):
    """bench/grouped_ragged.cpp's moeRows: splitmix64 draws, multiples of 16 in [lo, hi]."""
    rows = []
    for _ in range(groups):
        seed = (seed + 0x9E3779B97F4A7C15) & MASK
        z = seed
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        z ^= z >> 31
        rows.append((lo // 16 + z % (hi // 16 - lo // 16 + 1)) * 16)
    return rows


def median_ms(torch, fn, reps, warmup, flush):
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(reps):
        flush.zero_()
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    times.sort()
    return times[len(times) // 2]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", help="each expert's rows, comma-separated (default: kiln_grouped_bench's draw)")
    ap.add_argument("--n", type=int, default=4096)
    ap.add_argument("--k", type=int, default=7168)
    ap.add_argument("--kiln", help="kiln_grouped_bench's JSON, to print the ratio")
    ap.add_argument("--json", default="grouped_torch.json")
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--layout", choices=["ragged", "kgrouped"], default="ragged")
    ap.add_argument("--fp8", action="store_true", help="kgrouped: the FP8 blockwise weight gradient")
    args = ap.parse_args()
    try:
        import torch
    except ImportError as e:
        print(f"grouped_torch.py: needs torch: {e}", file=sys.stderr)
        return 3
    if not torch.cuda.is_available():
        print("grouped_torch.py: needs a GPU: torch.cuda.is_available() is false", file=sys.stderr)
        return 3
    rows = [int(r) for r in args.rows.split(",")] if args.rows else moe_rows(8, 512, 2048, 41)
    if args.layout == "kgrouped":
        return kgrouped_fp8(torch, args, rows) if args.fp8 else kgrouped(torch, args, rows)
    G, N, K, total = len(rows), args.n, args.k, sum(rows)
    torch.manual_seed(0)
    a = torch.randn(total, K, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(G, N, K, device="cuda", dtype=torch.bfloat16).transpose(-2, -1)  # [G, K, N], K-major
    offs = torch.cumsum(torch.tensor(rows, device="cuda", dtype=torch.int32), 0, dtype=torch.int32)
    flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    want, start = [], 0
    for g, r in enumerate(rows):
        want.append(a[start:start + r] @ b[g])
        start += r
    want = torch.cat(want).double()
    flops = 2.0 * total * N * K
    entry = {"rows": rows, "N": N, "K": K, "total_rows": total, "torch": torch.__version__}
    try:
        got = torch._grouped_mm(a, b, offs=offs).double()
        err = float((got - want).norm() / want.norm())
        ok = err < 1e-2
        ms = median_ms(torch, lambda: torch._grouped_mm(a, b, offs=offs), args.reps, args.warmup, flush) if ok else 0.0
        entry["grouped_mm"] = {"ms": ms, "tflops": flops / ms / 1e9 if ms else 0.0, "rel_err": err, "correct": ok}
    except Exception as e:  # an older torch, or a layout its kernel refuses
        entry["grouped_mm"] = {"error": str(e), "correct": False}
    dense_b = b[0]
    ms = median_ms(torch, lambda: a @ dense_b, args.reps, args.warmup, flush)
    entry["dense_same_work"] = {"ms": ms, "tflops": flops / ms / 1e9}
    print(f"GPU: {torch.cuda.get_device_name()}, torch {torch.__version__}; rows {rows} ({total}), N={N}, K={K}")
    gm = entry["grouped_mm"]
    print("torch._grouped_mm: " + (f"{gm['ms']:.4f} ms {gm['tflops']:.0f} TFLOP/s (rel err {gm['rel_err']:.1e})"
                                   if gm.get("correct") else f"BAD or unavailable: {gm.get('error', gm)}"))
    print(f"torch.mm of the same work: {ms:.4f} ms {flops / ms / 1e9:.0f} TFLOP/s")
    if args.kiln and gm.get("correct"):
        for r in json.load(open(args.kiln)).get("ragged", []):
            if r["layout"] == "ragged" and not r["fp8"] and r["rows"] == rows:
                best = [k["ms"] for k in r["kiln"] if k.get("correct") and k.get("ms")]
                if best:
                    entry["kiln_vs_grouped_mm"] = gm["ms"] / min(best)
                    print(f"Kiln's best ragged kernel: {entry['kiln_vs_grouped_mm']:.2f}x torch._grouped_mm")
                else:
                    print("Kiln: no correct ragged kernel in " + args.kiln)
    json.dump({"gpu": torch.cuda.get_device_name(), "results": [entry]}, open(args.json, "w"), indent=2)
    return 0


def kgrouped(torch, args, rows):
    """Groups along K: torch._grouped_mm(X.t(), dY, offs) against a per-group loop and one dense mm."""
    G, M, N, T = len(rows), args.k, args.n, sum(rows)
    torch.manual_seed(0)
    x = torch.randn(T, M, device="cuda", dtype=torch.bfloat16)
    dy = torch.randn(T, N, device="cuda", dtype=torch.bfloat16)
    offs = torch.cumsum(torch.tensor(rows, device="cuda", dtype=torch.int32), 0, dtype=torch.int32)
    flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    want, start = [], 0
    for r in rows:
        want.append(x[start:start + r].float().t() @ dy[start:start + r].float())
        start += r
    want = torch.stack(want).double()
    flops = 2.0 * M * N * T
    entry = {"layout": "kgrouped", "rows": rows, "M": M, "N": N, "total_tokens": T, "torch": torch.__version__}
    xt = x.t()
    call, out_dtype = None, None
    for kwargs in ({"out_dtype": torch.float32}, {}):
        try:
            got = torch._grouped_mm(xt, dy, offs=offs, **kwargs)
            call, out_dtype = (lambda kw=kwargs: torch._grouped_mm(xt, dy, offs=offs, **kw)), got.dtype
            break
        except Exception as e:  # an older torch, or an out_dtype it refuses
            entry["grouped_mm"] = {"error": str(e), "correct": False}
    if call:
        err = float((got.double() - want).norm() / want.norm())
        ok = err < 1e-2
        ms = median_ms(torch, call, args.reps, args.warmup, flush) if ok else 0.0
        entry["grouped_mm"] = {"ms": ms, "tflops": flops / ms / 1e9 if ms else 0.0, "rel_err": err, "correct": ok,
                               "out_dtype": str(out_dtype)}
    ms = median_ms(torch, lambda: xt @ dy, args.reps, args.warmup, flush)
    entry["dense_same_work"] = {"ms": ms, "tflops": flops / ms / 1e9}
    print(f"GPU: {torch.cuda.get_device_name()}, torch {torch.__version__}; kgrouped tokens {rows} ({T}), M={M}, N={N}")
    gm = entry["grouped_mm"]
    print("torch._grouped_mm 2D x 2D: " + (f"{gm['ms']:.4f} ms {gm['tflops']:.0f} TFLOP/s ({gm['out_dtype']}, rel err "
                                           f"{gm['rel_err']:.1e})" if gm.get("correct") else f"BAD or unavailable: {gm}"))
    print(f"torch.mm of the same work (bf16 out): {ms:.4f} ms {flops / ms / 1e9:.0f} TFLOP/s")
    if args.kiln and gm.get("correct"):
        for r in json.load(open(args.kiln)).get("ragged", []):
            if r["layout"] == "kgrouped" and not r.get("fp8") and r["rows"] == rows:
                best = [k["ms"] for k in r["kiln"] if k.get("correct") and k.get("ms")]
                if best:
                    entry["kiln_vs_grouped_mm"] = gm["ms"] / min(best)
                    print(f"Kiln's best kgrouped kernel: {entry['kiln_vs_grouped_mm']:.2f}x torch._grouped_mm")
                else:
                    print("Kiln: no correct kgrouped kernel in " + args.kiln)
    json.dump({"gpu": torch.cuda.get_device_name(), "results": [entry]}, open(args.json, "w"), indent=2)
    return 0


def kgrouped_fp8(torch, args, rows):
    """FP8 groups along K: torch._scaled_grouped_mm (rowwise scales) and one dense blockwise
    torch._scaled_mm of the same work, each checked against float64 sums of its own scales."""
    tokens = [(r + 127) // 128 * 128 for r in rows]
    G, M, N, T = len(tokens), args.k, args.n, sum(tokens)
    kb = T // 128
    torch.manual_seed(0)
    f8 = torch.float8_e4m3fn
    a = torch.randn(M, T, device="cuda").to(f8)            # [M, T] row-major (tokens contiguous)
    b = torch.randn(N, T, device="cuda").to(f8).t()        # [T, N] column-major
    offs = torch.cumsum(torch.tensor(tokens, device="cuda", dtype=torch.int32), 0, dtype=torch.int32)
    flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    flops = 2.0 * M * N * T
    entry = {"layout": "kgrouped", "fp8": True, "rows": rows, "tokens": tokens, "M": M, "N": N, "total_tokens": T,
             "torch": torch.__version__}
    af, bf = a.double(), b.double()

    def timed(name, call, want):
        try:
            got = call()
            err = float((got.double() - want).norm() / want.norm())
            ok = err < 1e-2
            ms = median_ms(torch, call, args.reps, args.warmup, flush) if ok else 0.0
            entry[name] = {"ms": ms, "tflops": flops / ms / 1e9 if ms else 0.0, "rel_err": err, "correct": ok,
                           "out_dtype": str(got.dtype)}
        except Exception as e:  # an older torch, or a mode its kernels refuse
            entry[name] = {"error": str(e).splitlines()[0], "correct": False}

    if hasattr(torch, "_scaled_grouped_mm"):
        sa = torch.rand(G * M, device="cuda") + 0.5
        sb = torch.rand(G * N, device="cuda") + 0.5
        want, lo = [], 0
        for g, t in enumerate(tokens):
            w = af[:, lo:lo + t] @ bf[lo:lo + t]
            want.append(w * sa[g * M:(g + 1) * M, None].double() * sb[None, g * N:(g + 1) * N].double())
            lo += t
        timed("scaled_grouped_mm_rowwise", lambda: torch._scaled_grouped_mm(a, b, sa, sb, offs=offs,
                                                                            out_dtype=torch.bfloat16),
              torch.stack(want))
    else:
        entry["scaled_grouped_mm_rowwise"] = {"error": "this torch has no torch._scaled_grouped_mm", "correct": False}
    # The same work as one dense blockwise GEMM: scale_a [M, kb] and scale_b [N, kb], M- and N-major.
    sa = (torch.rand(kb, M, device="cuda") + 0.5).t()
    sb = (torch.rand(kb, N, device="cuda") + 0.5).t()
    want = sum((af[:, k * 128:(k + 1) * 128] @ bf[k * 128:(k + 1) * 128]) * sa[:, k, None].double()
               * sb[None, :, k].double() for k in range(kb))
    timed("dense_same_work_blockwise", lambda: torch._scaled_mm(a, b, sa, sb, out_dtype=torch.float32), want)
    if not entry["dense_same_work_blockwise"]["correct"]:
        # torch 2.11 refuses an f32 output in the blockwise modes ("Invalid scaling configuration"): bf16.
        timed("dense_same_work_blockwise", lambda: torch._scaled_mm(a, b, sa, sb, out_dtype=torch.bfloat16), want)
    print(f"GPU: {torch.cuda.get_device_name()}, torch {torch.__version__}; kgrouped FP8 tokens {tokens} ({T}), "
          f"M={M}, N={N}")
    for name, what in (("scaled_grouped_mm_rowwise", "torch._scaled_grouped_mm 2D x 2D (rowwise scales, not the "
                                                     "blockwise mode)"),
                       ("dense_same_work_blockwise", "torch._scaled_mm 1x128 x 1x128 of the same work")):
        r = entry[name]
        print(f"{what}: " + (f"{r['ms']:.4f} ms {r['tflops']:.0f} TFLOP/s ({r['out_dtype']}, rel err "
                             f"{r['rel_err']:.1e})" if r.get("correct") else f"BAD or unavailable: {r}"))
    if args.kiln:
        for r in json.load(open(args.kiln)).get("ragged", []):
            if r["layout"] == "kgrouped" and r.get("fp8") and r["rows"] == rows:
                best = [k["ms"] for k in r["kiln"] if k.get("correct") and k.get("ms")]
                for name in ("scaled_grouped_mm_rowwise", "dense_same_work_blockwise"):
                    if best and entry[name].get("correct"):
                        entry[f"kiln_vs_{name}"] = entry[name]["ms"] / min(best)
                        print(f"Kiln's best FP8 kgrouped kernel: {entry[f'kiln_vs_{name}']:.2f}x {name}")
                if not best:
                    print("Kiln: no correct FP8 kgrouped kernel in " + args.kiln)
    json.dump({"gpu": torch.cuda.get_device_name(), "results": [entry]}, open(args.json, "w"), indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
