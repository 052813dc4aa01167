#!/usr/bin/env python3
"""Draws Kiln against cuBLAS per shape from kiln_gemm_bench's JSON: plot_gemm.py IN.json OUT.png"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

data = json.load(open(sys.argv[1]))
rows = data["results"]
labels = [f'{r["M"]}x{r["N"]}x{r["K"]}' for r in rows]
cublas = [r["cublas_tflops"] for r in rows]
best = [2 * r["M"] * r["N"] * r["K"] / r["best_ms"] / 1e9 if r.get("best_ms", 0) < 1e29 else 0 for r in rows]
pick = [2 * r["M"] * r["N"] * r["K"] / r["family_pick_ms"] / 1e9 if r.get("family_pick_ms") else 0 for r in rows]
x = range(len(rows))
w = 0.28
fig, ax = plt.subplots(figsize=(12, 5))
ax.bar([i - w for i in x], cublas, w, label="cuBLAS")
ax.bar(list(x), best, w, label="Kiln, best variant")
ax.bar([i + w for i in x], pick, w, label="Kiln, family pick")
ax.set_xticks(list(x))
ax.set_xticklabels(labels, rotation=30, ha="right")
ax.set_ylabel("TFLOP/s (BF16)")
ax.set_title(f'BF16 GEMM, {data["gpu"].split(",")[0]}, commit {data.get("commit", "?")}')
ax.legend()
fig.tight_layout()
fig.savefig(sys.argv[2], dpi=110)
