#!/usr/bin/env python3
"""torch eager and torch.compile on the memory-bound examples of kiln_rowwise_bench, same shapes.

Run it in the same device call as the Kiln benchmark (shared/BENCH.md: ratios from one run only):

  build/bench/kiln_rowwise_bench --json kiln.json
  python3 bench/rowwise_torch.py --kiln kiln.json --json torch.json

Each program is the one examples/<name>.cpp writes, in the torch a user would write for it (BF16
in and out, torch's own fused op where it has one). Inputs are random normal (labels uniform in the vocabulary, eps = 1e-6); every timed
output is checked against torch eager's first (relative Frobenius error under 1e-2); times are the median of --reps CUDA-event
timings with L2 flushed (a 256 MB write) before each. Reports GB/s of the bytes that must move
(inputs read once, outputs written once, as Kiln's benchmark counts them), and with --kiln the
Kiln / torch ratios and their geometric means. Writes JSON. Exits 3 without a GPU or torch.
"""
import argparse
import json
import math
import sys


def programs(torch, F):
    """name -> (make_inputs(rows, cols) -> dict, fn(**inputs) -> tuple of outputs)."""
    bf = torch.bfloat16

    def x(r, c):
        return torch.randn(r, c, device="cuda", dtype=bf)

    def vec(c):
        return torch.randn(c, device="cuda", dtype=bf)

    eps = 1e-6

    # What a user of torch writes for each (the baseline they would otherwise run): the library's
    # own BF16 ops where torch has one (softmax, log_softmax, rms_norm, layer_norm, cross_entropy
    # compute in f32 inside one kernel), composed ops where it has none.
    def softmax(X):
        return (torch.softmax(X, -1),)

    def log_softmax(X):
        return (torch.log_softmax(X, -1),)

    def rms_norm(X, W):
        return (F.rms_norm(X, (X.shape[-1],), W, eps),)

    def layer_norm(X, W, B):
        return (F.layer_norm(X, (X.shape[-1],), W, B, eps),)

    def add_rms_norm(X, R, W):
        h = X + R
        return h, F.rms_norm(h, (h.shape[-1],), W, eps)

    def silu_and_mul(G, U):
        return (F.silu(G) * U,)

    def cross_entropy(X, labels):
        return (F.cross_entropy(X, labels, reduction="none"),)

    def fp8_quant(X):
        s = X.abs().amax(-1, keepdim=True).float().clamp(min=1e-12) / 448.0
        return (X.float() / s).to(torch.float8_e4m3fn), s.squeeze(-1)

    return {
        "softmax": (lambda r, c: {"X": x(r, c)}, softmax),
        "log_softmax": (lambda r, c: {"X": x(r, c)}, log_softmax),
        "rms_norm": (lambda r, c: {"X": x(r, c), "W": vec(c)}, rms_norm),
        "layer_norm": (lambda r, c: {"X": x(r, c), "W": vec(c), "B": vec(c)}, layer_norm),
        "add_rms_norm": (lambda r, c: {"X": x(r, c), "R": x(r, c), "W": vec(c)}, add_rms_norm),
        "silu_and_mul": (lambda r, c: {"G": x(r, c), "U": x(r, c)}, silu_and_mul),
        "cross_entropy": (lambda r, c: {"X": x(r, c), "labels": torch.randint(0, c, (r,), device="cuda")},
                          cross_entropy),
        "fp8_quant": (lambda r, c: {"X": x(r, c)}, fp8_quant),
    }


DEFAULT_CASES = ("softmax:4096x4096;softmax:32768x8192;softmax:8192x128256;log_softmax:4096x4096;"
                 "log_softmax:32768x8192;rms_norm:4096x4096;rms_norm:32768x8192;layer_norm:4096x4096;"
                 "layer_norm:32768x8192;add_rms_norm:4096x4096;add_rms_norm:32768x8192;silu_and_mul:16384x14336;"
                 "cross_entropy:8192x128256;cross_entropy:4096x32000;fp8_quant:4096x4096;fp8_quant:32768x8192")


def median_ms(torch, fn, inputs, reps, warmup, flush):
    for _ in range(warmup):
        fn(**inputs)
    times = []
    for _ in range(reps):
        flush.zero_()  # L2 out: a write larger than it
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn(**inputs)
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    times.sort()
    return times[len(times) // 2]


def close(torch, got, want):
    for g, w in zip(got, want):
        g, w = g.double(), w.double()
        ok = torch.isfinite(w)
        if not torch.isfinite(g[ok]).all():
            return False
        num, den = (g[ok] - w[ok]).norm(), w[ok].norm()
        if not (num / max(float(den), 1e-300) < 1e-2):
            return False
    return True


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", default=DEFAULT_CASES, help="example:RxC;... (default: kiln_rowwise_bench's)")
    ap.add_argument("--kiln", help="kiln_rowwise_bench's JSON, to print the ratios")
    ap.add_argument("--json", default="rowwise_torch.json")
    ap.add_argument("--reps", type=int, default=50)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--modes", default="eager,compile,max-autotune",
                    help="which of eager, compile (torch.compile default) and max-autotune to time")
    args = ap.parse_args()
    try:
        import torch
        import torch.nn.functional as F
    except ImportError as e:
        print(f"rowwise_torch.py: needs torch: {e}", file=sys.stderr)
        return 3
    if not torch.cuda.is_available():
        print("rowwise_torch.py: needs a GPU: torch.cuda.is_available() is false", file=sys.stderr)
        return 3
    torch.manual_seed(0)
    progs = programs(torch, F)
    modes = args.modes.split(",")
    flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    kiln = {}
    if args.kiln:
        for r in json.load(open(args.kiln))["results"]:
            pick = [k for k in r["kiln"] if k["label"] == "pick" and k["correct"]]
            if pick:
                kiln[(r["example"], r["rows"], r["cols"])] = pick[0]["ms"]
    results, logs = [], {m: [] for m in modes}
    print(f"GPU: {torch.cuda.get_device_name()}, torch {torch.__version__}")
    for case in args.cases.split(";"):
        name, shape = case.split(":")
        rows, cols = (int(v) for v in shape.split("x"))
        make, fn = progs[name]
        inputs = make(rows, cols)
        out = fn(**inputs)  # eager: what the compiled forms are checked against
        want = tuple(w.double() for w in out)
        nbytes = sum(t.numel() * t.element_size() for t in inputs.values()) + \
            sum(t.numel() * t.element_size() for t in out)
        entry = {"example": name, "rows": rows, "cols": cols, "bytes": nbytes}
        line = f"[{name} {rows}x{cols}] {nbytes / 1e6:.1f} MB"
        for mode in modes:
            f = fn if mode == "eager" else torch.compile(fn, mode="max-autotune" if mode == "max-autotune" else None)
            got = f(**inputs)
            ok = close(torch, got, want)
            ms = median_ms(torch, f, inputs, args.reps, args.warmup, flush) if ok else 0.0
            entry[mode] = {"ms": ms, "gbps": nbytes / ms / 1e6 if ok else 0.0, "correct": ok}
            line += f"; {mode} {ms:.4f} ms {nbytes / ms / 1e6 if ok else 0:.0f} GB/s{'' if ok else ' BAD'}"
            kms = kiln.get((name, rows, cols))
            if ok and kms:
                entry[mode]["kiln_speedup"] = ms / kms
                logs[mode].append(math.log(ms / kms))
        print(line, flush=True)
        results.append(entry)
        json.dump({"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "results": results},
                  open(args.json, "w"), indent=2)
    if kiln:
        print("\n| example | shape | " + " | ".join(f"Kiln vs {m}" for m in modes) + " |")
        print("|---|---|" + "---:|" * len(modes))
        for e in results:
            cells = [f'{e[m]["kiln_speedup"]:.2f}x' if "kiln_speedup" in e[m] else "-" for m in modes]
            print(f'| {e["example"]} | {e["rows"]}x{e["cols"]} | ' + " | ".join(cells) + " |")
        for m in modes:
            if logs[m]:
                print(f"geomean Kiln speedup over {m}: {math.exp(sum(logs[m]) / len(logs[m])):.3f} ({len(logs[m])} cases)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
