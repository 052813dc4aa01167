#!/usr/bin/env bash
# On the GPU machine, in one call (4 to 6 minutes; each step has its own time limit): issue 40's
# measurement and checks. The layouts' GPU tests (every layout and shape class against an fp64
# reference and cuBLAS, bad strides refused naming the argument), compute-sanitizer memcheck on
# their subset, and kiln_layouts_bench: all four layouts at BENCH.md's large shapes (each against
# the NN kernel), strided operands (--ld 8), the odd-shape set and the GEMV set, against cuBLAS in
# the same layout (the GEMV set: M = 1, 2, 4, 8, 16, the family's gemv pick up to M = 2 on sm_90a,
# against the read ceiling too). Logs, JSON and summary.md land in $OUT (default ./out).
# Usage: scripts/gpu-layouts.sh BIN_DIR   where BIN_DIR holds kiln_gpu_tests and kiln_layouts_bench
# (scripts/stage-gpu-bin.sh packs them into gpu-pack/; untar into gpu-bin/).
set -uo pipefail
BIN=${1:-gpu-bin}
OUT=${OUT:-out}
mkdir -p "$OUT"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.draw --format=csv > "$OUT/gpu.txt" 2>&1
echo "commit $(cat "$BIN/COMMIT" 2>/dev/null)" >> "$OUT/gpu.txt"
cat "$OUT/gpu.txt"

echo "== GPU tests: layouts"
timeout 180 "$BIN/kiln_gpu_tests" --gtest_brief=1 --gtest_filter='GemmLayoutsGpu.*' > "$OUT/gpu_tests.log" 2>&1
echo "gpu tests exit $?" | tee -a "$OUT/gpu_tests.log"
tail -5 "$OUT/gpu_tests.log"

echo "== compute-sanitizer memcheck on the layouts' subset"
timeout 60 compute-sanitizer --tool memcheck --error-exitcode 9 "$BIN/kiln_gpu_tests" --gtest_brief=1 \
    --gtest_filter='GemmLayoutsGpu.SanitizedSubset' > "$OUT/sanitizer.log" 2>&1
echo "memcheck exit $?" | tee -a "$OUT/sanitizer.log"
grep -E "ERROR SUMMARY" "$OUT/sanitizer.log"

echo "== kiln_layouts_bench"
B="$BIN/kiln_layouts_bench --reps 15 --warmup 3"
timeout 75 $B --set large --layout all --ld 0 --json "$OUT/layouts_large.json" --summary "$OUT/layouts_large.md" > "$OUT/layouts_large.log" 2>&1
echo "large exit $?"
timeout 35 $B --set large --layout NN,NT --ld 8 --json "$OUT/layouts_ld.json" --summary "$OUT/layouts_ld.md" > "$OUT/layouts_ld.log" 2>&1
echo "ld exit $?"
timeout 75 $B --set odd --layout all --ld 0 --json "$OUT/layouts_odd.json" --summary "$OUT/layouts_odd.md" > "$OUT/layouts_odd.log" 2>&1
echo "odd exit $?"
timeout 60 $B --set gemv --layout all --ld 0 --json "$OUT/layouts_gemv.json" --summary "$OUT/layouts_gemv.md" > "$OUT/layouts_gemv.log" 2>&1
echo "gemv exit $?"
cat "$OUT"/layouts_*.md > "$OUT/summary.md" 2>/dev/null
grep -A40 "geomean over" "$OUT/summary.md"
