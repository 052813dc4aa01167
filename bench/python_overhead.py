#!/usr/bin/env python3
"""kiln.ops.gemm and kiln.ops.scaled_mm called from torch at BENCH.md's shapes: their kernel time
(CUDA events, median, L2 flushed) beside cuBLAS's (torch.mm / torch._scaled_mm, timed in
alternation) and, given the C++ benchmark's JSON (kiln_gemm_bench / kiln_fp8_bench --json), the
C++ family pick's time at the same shape, and the same kernel launched through the binding alone
("bare": no Python checks, no allocation) in the same harness; then the host time of one warm call
(no recompile).
Writes JSON (one object per op and shape) and prints a table. A benchmark, not a test: it never
fails on time.

  PYTHONPATH=build-gpu-py python3 bench/python_overhead.py --json out.json \\
      [--cpp-bf16 bf16.json] [--cpp-fp8 fp8.json]
"""
import argparse
import json
import statistics
import time

import torch

import kiln
import kiln.ops

BF16_SHAPES = [(8192, 8192, 8192), (4096, 4096, 4096), (2048, 2048, 2048), (8192, 1024, 4096), (8192, 64, 4096),
               (64, 5120, 5120), (128, 8192, 8192), (4096, 14336, 4096), (4096, 4096, 14336), (16384, 1024, 1024)]
FP8_SHAPES = [(64, 5120, 5120), (128, 7168, 2048), (4096, 7168, 2048), (8192, 8192, 8192), (4096, 14336, 4096),
              (4096, 4096, 14336)]


def timed(fns, reps, flush):
    """Median ms of each fn, run in alternation, L2 flushed before each run. The GPU spins (about
    100 us at the H200's clock) between the flush and the start event, longer than any call's
    host work (host_us: 20-60 us), so the launch is queued before the start is reached and the
    events time the kernel alone, as the C++ benchmark's do; host_us times the host. (A 25 us
    spin, shorter than a warm kiln call, let the events count the tail of its host work.)"""
    times = [[] for _ in fns]
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for rep in range(reps):
        for i, fn in enumerate(fns):
            flush.fill_(rep & 0xFF)  # as the C++ benchmark's flush: a 256 MB write of the repetition's byte
            torch.cuda._sleep(200_000)
            start.record()
            fn()
            end.record()
            end.synchronize()
            times[i].append(start.elapsed_time(end))
    return [statistics.median(t) for t in times]


def host_us(fn, calls=500):
    """Host time of one call, warm: the loop's wall time per call, with no synchronisation inside
    (the launch queue holds the calls' kernels, so the loop measures the host alone)."""
    fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    t1 = time.perf_counter()
    torch.cuda.synchronize()
    return (t1 - t0) / calls * 1e6


def cpp_times(path):
    if not path:
        return {}
    return {(r["M"], r["N"], r["K"]): r["family_pick"]["ms"] for r in json.load(open(path))["results"]
            if r.get("family_pick")}


def check(out, ref, what):
    err = ((out.float() - ref.float()).abs().max() / ref.float().abs().max()).item()
    if err > 2e-2:
        raise SystemExit(f"{what}: kiln's result differs from torch's by {err:.3g}: not timing a wrong kernel")
    return err


def bare_launch(inputs, m, n):
    """The kernel the last kiln.ops call used, launched through the binding alone (no Python
    checks, no output allocation): the same harness's time for what the C++ benchmark times."""
    kernel, dims, shape, dtype = list(kiln.ops._WARM.values())[-1]
    out = torch.empty(shape, dtype=dtype, device="cuda")
    ptrs = [x.data_ptr() for x in inputs] + [out.data_ptr()]
    stream = torch.cuda.current_stream().cuda_stream
    return lambda: kernel._k.launch(ptrs, [], dims, stream)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", required=True)
    ap.add_argument("--cpp-bf16", help="kiln_gemm_bench --json output at the same shapes")
    ap.add_argument("--cpp-fp8", help="kiln_fp8_bench --json output at the same shapes")
    ap.add_argument("--reps", type=int, default=50)
    args = ap.parse_args()
    props = torch.cuda.get_device_properties(0)
    print(f"{props.name}, {props.multi_processor_count} SMs, torch {torch.__version__}, CUDA {torch.version.cuda}")
    flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")  # 256 MB, as the C++ benchmark's, > the L2
    rows = []
    cpp = {"gemm": cpp_times(args.cpp_bf16), "scaled_mm": cpp_times(args.cpp_fp8)}
    for m, n, k in BF16_SHAPES:
        a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
        err = check(kiln.ops.gemm(a, b), a.float() @ b.float(), f"gemm {m}x{n}x{k}")
        bare = bare_launch([a, b], m, n)
        rows.append(("gemm", m, n, k, err,
                     *timed([lambda: kiln.ops.gemm(a, b), bare, lambda: torch.mm(a, b)], args.reps, flush),
                     host_us(lambda: kiln.ops.gemm(a, b)), host_us(bare), host_us(lambda: torch.mm(a, b))))
    for m, n, k in FP8_SHAPES:
        a = (torch.randn(m, k, device="cuda") / 4).to(torch.float8_e4m3fn)
        b = (torch.randn(n, k, device="cuda") / 4).to(torch.float8_e4m3fn).t()
        sa, sb = torch.rand(m, 1, device="cuda") + 0.5, torch.rand(1, n, device="cuda") + 0.5
        ours = lambda: kiln.ops.scaled_mm(a, b, sa, sb, out_dtype=torch.bfloat16)  # noqa: E731
        theirs = lambda: torch._scaled_mm(a, b, sa, sb, out_dtype=torch.bfloat16)  # noqa: E731
        err = check(ours(), theirs(), f"scaled_mm {m}x{n}x{k}")
        bare = bare_launch([a, b, sa.reshape(m), sb.reshape(n)], m, n)
        rows.append(("scaled_mm", m, n, k, err, *timed([ours, bare, theirs], args.reps, flush), host_us(ours),
                     host_us(bare), host_us(theirs)))
    results = []
    print(f"{'op':10} {'M x N x K':>20} {'kiln ms':>9} {'bare ms':>9} {'torch ms':>9} {'C++ ms':>8} {'py/C++':>7} "
          f"{'py/bare':>7} {'kiln host us':>12} {'bare host us':>12} {'torch host us':>13}")
    for op, m, n, k, err, ms, bare_ms, torch_ms, host, bare_host, torch_host in rows:
        cpp_ms = cpp[op].get((m, n, k))
        results.append({"op": op, "M": m, "N": n, "K": k, "rel_err": err, "kiln_ms": ms, "bare_ms": bare_ms,
                        "torch_ms": torch_ms, "cpp_family_pick_ms": cpp_ms, "vs_cpp": ms / cpp_ms if cpp_ms else None,
                        "vs_bare": ms / bare_ms, "tflops": 2 * m * n * k / ms / 1e9, "kiln_host_us": host,
                        "bare_host_us": bare_host, "torch_host_us": torch_host})
        ratio = f"{ms / cpp_ms:7.3f}" if cpp_ms else "      -"
        cpp_s = f"{cpp_ms:8.4f}" if cpp_ms else "       -"
        print(f"{op:10} {f'{m}x{n}x{k}':>20} {ms:9.4f} {bare_ms:9.4f} {torch_ms:9.4f} {cpp_s} {ratio} {ms / bare_ms:7.3f} "
              f"{host:12.1f} {bare_host:12.1f} {torch_host:13.1f}")
    json.dump({"gpu": props.name, "torch": torch.__version__, "kiln": kiln.__version__, "results": results},
              open(args.json, "w"), indent=1)


if __name__ == "__main__":
    main()
