#!/usr/bin/env bash
# Issue 41's measurements and GPU checks on the GPU machine, in one device call of about 5.5 minutes
# (GPU_FP8_SECONDS, default 340): every part bounded in time, and a part that fails or runs out of
# time does not stop the rest. Here, after `cmake --build build`:
#   scripts/stage-gpu-bin.sh                      # gpu-pack/gpu-bin.tar.xz
#   scripts/stage-gpu-python.sh                   # optional: torch._grouped_mm's comparison
# There (the device tool carrying gpu-pack):
#   scripts/gpu-fp8.sh
# The parts, in order:
#   1. GPU tests of every FP8 scaling mode and both ragged layouts, and the gemm_fp8 family's
#      variants (Fp8ModesGroupedGpu.*, GemmFp8Gpu.*), against the tile-IR interpreter;
#   2. compute-sanitizer memcheck over the ragged groups' test (bounds read on the device, rows
#      past a group's end never stored) and racecheck over one blockwise scaled case;
#   3. kiln_grouped_bench --layout ragged and masked: 8 experts of 512..2048 rows, N = 4096,
#      K = 7168, BF16 and FP8 blockwise, against cuBLAS / cuBLASLt and one dense GEMM of the same work;
#   4. kiln_fp8_bench: every mode against cuBLASLt in the same mode (BENCH.md's FP8 shapes and the
#      issue's: 4096x7168x16384 blockwise TFLOP/s, M = 64 against the copy bandwidth; its JSON is
#      written after every shape, so a cut-short run still reports the shapes it finished);
#   5. bench/grouped_torch.py (when torch is there): torch._grouped_mm at the same groups;
#   6. bench/fp8_summary.py: summary.md and summary.json.
# $OUT (default ./out) receives: summary.md, summary.json, fp8_bench.json, grouped_bench.json,
# grouped_masked.json,
# grouped_torch.json (with torch), gpu_tests.log, sanitizer.log, log.txt.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-out}
mkdir -p "$OUT"
LOG="$OUT/log.txt"
: > "$LOG"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
START=$(date +%s)
DEADLINE=$((START + ${GPU_FP8_SECONDS:-340}))

. scripts/gpu-time-bound.sh

say "setup"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem --format=csv >> "$LOG" 2>&1
if [ ! -x gpu-bin/kiln_gpu_tests ]; then
  rm -rf gpu-bin && mkdir -p gpu-bin && tar -C gpu-bin -xJf gpu-pack/gpu-bin.tar.xz >> "$LOG" 2>&1
fi
BIN=gpu-bin
echo "binaries of commit $(cat $BIN/COMMIT 2>/dev/null)" | tee -a "$LOG"

say "1. GPU tests: every FP8 scaling mode, ragged groups, the gemm_fp8 variants"
T=$(limit 60 275)
timeout --kill-after=10 "$T" "$BIN/kiln_gpu_tests" --gtest_brief=1 \
  --gtest_filter='Fp8ModesGroupedGpu.*:GemmFp8Gpu.*' > "$OUT/gpu_tests.log" 2>&1
echo "gpu tests exit $?" | tee -a "$OUT/gpu_tests.log" "$LOG"
grep -E "^\[  (PASSED|FAILED|SKIPPED) " "$OUT/gpu_tests.log" | tail -12 | tee -a "$LOG"

say "2. compute-sanitizer"
{
  timeout --kill-after=10 "$(limit 35 240)" compute-sanitizer --tool memcheck --error-exitcode 9 \
    "$BIN/kiln_gpu_tests" --gtest_brief=1 --gtest_filter='Fp8ModesGroupedGpu.RaggedGroupsMatchTheInterpreter'
  echo "memcheck exit $?"
  timeout --kill-after=10 "$(limit 25 220)" compute-sanitizer --tool racecheck --error-exitcode 9 \
    "$BIN/kiln_gpu_tests" --gtest_brief=1 --gtest_filter='Fp8ModesGroupedGpu.MoeOfEightExperts'
  echo "racecheck exit $?"
} > "$OUT/sanitizer.log" 2>&1
grep -E "ERROR SUMMARY|exit" "$OUT/sanitizer.log" | tee -a "$LOG"

say "3. kiln_grouped_bench: ragged and masked, BF16 and FP8 blockwise"
bounded "$(limit 45 185)" "$BIN/kiln_grouped_bench" --layout ragged --reps 15 --warmup 3 --json "$OUT/grouped_bench.json"
bounded "$(limit 30 160)" "$BIN/kiln_grouped_bench" --layout masked --reps 15 --warmup 3 --json "$OUT/grouped_masked.json"

say "4. kiln_fp8_bench: every mode against cuBLASLt in the same mode"
bounded "$(limit 140 20)" "$BIN/kiln_fp8_bench" --reps 15 --warmup 3 --json "$OUT/fp8_bench.json"
grep -E "geomean" "$LOG" | tail -8

say "5. torch._grouped_mm"
if python3 -c "import torch; assert torch.cuda.is_available()" 2>/dev/null; then
  bounded "$(limit 30 5)" python3 bench/grouped_torch.py --kiln "$OUT/grouped_bench.json" --json "$OUT/grouped_torch.json"
else
  echo "no torch with CUDA here: torch._grouped_mm not measured" | tee -a "$LOG"
fi

say "6. summary"
python3 bench/fp8_summary.py "$OUT" > /dev/null 2>> "$LOG"
say "done"
cat "$OUT/summary.md"
