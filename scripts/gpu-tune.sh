#!/usr/bin/env bash
# Issue 43's measurements on the GPU machine, in one device call of at most ~9 minutes (GPU_TUNE_SECONDS,
# default 530): every part bounded in time, and a part that fails or runs out of time does not stop
# the rest. Here, after `cmake --build build`:
#   scripts/stage-gpu-bin.sh && scripts/stage-gpu-python.sh      # gpu-pack/{gpu-bin,kiln-prefix}.tar.xz
# There (the device tool carrying gpu-pack):
#   scripts/gpu-tune.sh
# The parts, in order:
#   1. kiln_gpu_tests --gtest_filter='TunerSpace*': one config of each kind the tuner's space holds,
#      against the fp64 reference and cuBLAS (the screen launches every candidate);
#   2. kiln_tune_bench over 30 random BF16 shapes (seed chosen now, recorded) against cuBLAS: tuned,
#      heuristic pick and exhaustive winners, search seconds cold and warm, and the bucketing rule's
#      cost at 4 shapes' bucket neighbours;
#   3. the same for FP8 against cuBLASLt at BENCH.md's FP8 shapes and two random ones;
#   4. the Python extension built against gpu-pack/kiln-prefix (scripts/stage-gpu-python.sh --device);
#   5. bench/fused_torch.py: the fused GEMM programs and two memory-bound examples against torch eager
#      and torch.compile max-autotune;
#   6. bench/triton_autotune.py: Triton's autotune time on the BF16 run's first shapes;
#   7. bench/tune_summary.py: summary.md and summary.json.
# $OUT (default ./out) receives 7 files: summary.md, summary.json, tune_bf16.json, tune_fp8.json,
# fused.json, triton.json, log.txt.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-out}
mkdir -p "$OUT"
LOG="$OUT/log.txt"
: > "$LOG"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
START=$(date +%s)
DEADLINE=$((START + ${GPU_TUNE_SECONDS:-530}))
SEED=${SEED:-$(( $(date +%s%N) % 1000000007 ))}
WORK=$(mktemp -d)

say() { echo "== $* ($(( $(date +%s) - START )) s)" | tee -a "$LOG"; }
# The seconds part may take: at most $1, leaving $2 for the parts after it (0 when none are left).
limit() {
  local left=$(( DEADLINE - $(date +%s) - $2 ))
  (( left > $1 )) && left=$1
  (( left < 10 )) && left=0
  echo $left
}
# Runs "$@" for at most $1 seconds (said in the log when it is cut short or fails).
bounded() {
  local t=$1; shift
  if (( t == 0 )); then echo "skipped: no time left" | tee -a "$LOG"; return 0; fi
  timeout --kill-after=10 "$t" "$@" >> "$LOG" 2>&1
  local rc=$?
  (( rc == 124 || rc == 137 )) && echo "cut short after $t s" | tee -a "$LOG"
  (( rc != 0 && rc != 124 && rc != 137 )) && echo "exit $rc" | tee -a "$LOG"
  return 0
}

say "setup: seed $SEED"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem --format=csv >> "$LOG" 2>&1
rm -rf gpu-bin && mkdir -p gpu-bin && tar -C gpu-bin -xJf gpu-pack/gpu-bin.tar.xz >> "$LOG" 2>&1
BIN=gpu-bin
echo "binaries of commit $(cat $BIN/COMMIT 2>/dev/null)" >> "$LOG"

say "1. the tuner space's kinds on the GPU"
bounded "$(limit 45 420)" "$BIN/kiln_gpu_tests" --gtest_brief=1 --gtest_filter='TunerSpace*'
tail -3 "$LOG"

say "2. kiln tune on 30 random BF16 shapes against cuBLAS"
T=$(limit 230 190)
bounded "$T" env KILN_CACHE_DIR="$WORK/cache-bf16" "$BIN/kiln_tune_bench" --program bf16 --random 30 --seed "$SEED" \
  --max-seconds $(( T > 70 ? T - 70 : 1 )) --bucket-shapes 4 --bucket-neighbours 2 --tune-dir "$WORK/tune-bf16" \
  --json "$OUT/tune_bf16.json"

say "3. kiln tune on FP8 shapes against cuBLASLt"
T=$(limit 70 140)
bounded "$T" env KILN_CACHE_DIR="$WORK/cache-fp8" "$BIN/kiln_tune_bench" --program fp8 \
  --shapes "4096x7168x2048;128x7168x2048;4096x14336x4096;8192x8192x8192" --random 2 --seed "$SEED" \
  --cold-shapes 1 --warm-shapes 1 --max-seconds $(( T > 35 ? T - 35 : 1 )) --tune-dir "$WORK/tune-fp8" \
  --json "$OUT/tune_fp8.json"

say "4. the Python extension"
bounded "$(limit 100 95)" scripts/stage-gpu-python.sh --device
export PYTHONPATH=$PWD/build-gpu-py

say "5. fused programs against torch eager and torch.compile max-autotune"
T=$(limit 110 45)
bounded "$T" env KILN_CACHE_DIR="$WORK/cache-fused" KILN_TUNE_DIR="$WORK/tune-fused" python3 bench/fused_torch.py \
  --kiln-tool "$BIN/kiln" --max-seconds $(( T > 60 ? T - 60 : 1 )) --json "$OUT/fused.json"

say "6. Triton's autotune on the BF16 shapes"
T=$(limit 60 8)
bounded "$T" python3 bench/triton_autotune.py --shapes-from "$OUT/tune_bf16.json" --limit 6 \
  --max-seconds $(( T > 30 ? T - 30 : 1 )) --json "$OUT/triton.json"

say "7. summary"
python3 bench/tune_summary.py "$OUT" > /dev/null 2>> "$LOG"
rm -rf "$WORK"
say "done"
cat "$OUT/summary.md"
