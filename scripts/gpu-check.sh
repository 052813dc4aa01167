#!/usr/bin/env bash
# On the GPU machine, in one call: GPU tests, compute-sanitizer (memcheck, racecheck) over a subset,
# and the benchmark against cuBLAS; logs and JSON land in $OUT (default ./out).
# Usage: scripts/gpu-check.sh BIN_DIR   where BIN_DIR holds kiln_gpu_tests and kiln_gemm_bench
# (built with -DCMAKE_BUILD_TYPE=Release; scripts/stage-gpu-bin.sh copies them into gpu-bin/).
set -uo pipefail
BIN=${1:-gpu-bin}
OUT=${OUT:-out}
mkdir -p "$OUT"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.draw --format=csv > "$OUT/gpu.txt" 2>&1
echo "commit $(cat "$BIN/COMMIT" 2>/dev/null)" >> "$OUT/gpu.txt"
cat "$OUT/gpu.txt"

echo "== GPU tests"
"$BIN/kiln_gpu_tests" --gtest_brief=1 > "$OUT/gpu_tests.log" 2>&1
echo "gpu tests exit $?" | tee -a "$OUT/gpu_tests.log"
tail -5 "$OUT/gpu_tests.log"

echo "== compute-sanitizer (memcheck, racecheck) on a subset"
{
  compute-sanitizer --tool memcheck --error-exitcode 9 "$BIN/kiln_gpu_tests" --gtest_brief=1 \
      --gtest_filter='*bm_128_bn_128_bk_32_stages_3*:*bm_32_bn_64_bk_32_stages_2*:GemmGpuLaunch*:GemmFamilyGpu.RaggedEdgesEveryShape'
  echo "memcheck exit $?"
  compute-sanitizer --tool racecheck --error-exitcode 9 "$BIN/kiln_gpu_tests" --gtest_brief=1 \
      --gtest_filter='*bm_64_bn_128_bk_32_stages_4*'
  echo "racecheck exit $?"
} > "$OUT/sanitizer.log" 2>&1
grep -E "ERROR SUMMARY|exit" "$OUT/sanitizer.log"

echo "== kiln run on the GPU (checked against the interpreter)"
if [ -x "$BIN/kiln" ]; then
  for ex in gemm_bf16 gemm_bias_gelu gemm_kmajor_b batched_gemm; do
    dims=M=300,N=264,K=200
    [ "$ex" = batched_gemm ] && dims=$dims,B=3
    "$BIN/kiln" run --example $ex --dims $dims --seed 5
    echo "kiln run $ex exit $?"
  done > "$OUT/kiln_run.log" 2>&1
  cat "$OUT/kiln_run.log"
fi

echo "== benchmark"
[ -n "${KILN_SKIP_BENCH:-}" ] || "$BIN/kiln_gemm_bench" --json "$OUT/gemm_bench.json" ${KILN_BENCH_ARGS:-} > "$OUT/gemm_bench.log" 2>&1
echo "bench exit $?"
tail -14 "$OUT/gemm_bench.log"
[ -f "$OUT/gemm_bench.json" ] && python3 bench/plot_gemm.py "$OUT/gemm_bench.json" "$OUT/gemm_bench.png"
