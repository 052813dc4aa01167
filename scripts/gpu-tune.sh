#!/usr/bin/env bash
# Issue 43's measurements on the GPU machine, in one device call of at most ~9 minutes (GPU_TUNE_SECONDS,
# default 540): every part bounded in time, and a part that fails or runs out of time does not stop
# the rest. The split (seconds at most; measured on an H100 at f2c07c9, a part ends early when done):
# setup 5, GPU tests 60, BF16 250, FP8 60, Python 15, fused 85, pdl 25, Triton 40, summary 2. Here, after `cmake --build build`:
#   scripts/stage-gpu-bin.sh && scripts/stage-gpu-python.sh      # gpu-pack/{gpu-bin,kiln-prefix}.tar.xz
# There (the device tool carrying gpu-pack):
#   scripts/gpu-tune.sh
# The parts, in order:
#   1. kiln_gpu_tests --gtest_filter='TunerSpace*:TwoPerSm*': one config of each kind the tuner's
#      space holds, against the fp64 reference and cuBLAS (the screen launches every candidate), in 8
#      shards at once (compiling and the host reference are the time, not the GPU); tests.json says
#      how many passed and which failed;
#   2. kiln_tune_bench over 30 random BF16 shapes (seed chosen now, recorded) against cuBLAS: tuned
#      and heuristic pick for all, the exhaustive search's winner for the first 8, search seconds
#      cold and warm, and the bucketing rule's cost at 4 shapes' bucket neighbours;
#   3. the same for FP8 against cuBLASLt at BENCH.md's FP8 shapes and two random ones;
#   4. the Python extension built against gpu-pack/kiln-prefix (scripts/stage-gpu-python.sh --device);
#   5. bench/fused_torch.py: the fused GEMM programs and two memory-bound examples against torch eager
#      and torch.compile max-autotune;
#   6. kiln_pdl_bench: the family's picks with pdl off and on in chains of back-to-back launches at
#      issue 43's mid-size shapes, cuBLAS's chain beside them (its table in log.txt);
#   7. bench/triton_autotune.py: Triton's autotune time on the BF16 run's first shapes;
#   8. bench/tune_summary.py: summary.md and summary.json.
# $OUT (default ./out) receives 9 files: summary.md, summary.json, tests.json, tune_bf16.json,
# tune_fp8.json, fused.json, pdl.json, triton.json, log.txt.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-out}
mkdir -p "$OUT"
LOG="$OUT/log.txt"
: > "$LOG"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
START=$(date +%s)
DEADLINE=$((START + ${GPU_TUNE_SECONDS:-540}))
SEED=${SEED:-$(( $(date +%s%N) % 1000000007 ))}
WORK=$(mktemp -d)

. scripts/gpu-time-bound.sh

say "setup: seed $SEED"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem --format=csv >> "$LOG" 2>&1
rm -rf gpu-bin && mkdir -p gpu-bin && tar -C gpu-bin -xJf gpu-pack/gpu-bin.tar.xz >> "$LOG" 2>&1
BIN=gpu-bin
echo "binaries of commit $(cat $BIN/COMMIT 2>/dev/null)" >> "$LOG"

say "1. the tuner space's kinds on the GPU"
# Shards run at once, each writing its own log; a test that started and neither passed nor failed
# was cut short by the time bound.
T=$(limit 60 460)
if (( T > 0 )); then
  for i in 0 1 2 3 4 5 6 7; do
    GTEST_TOTAL_SHARDS=8 GTEST_SHARD_INDEX=$i timeout --kill-after=5 "$T" "$BIN/kiln_gpu_tests" \
      --gtest_filter='TunerSpace*:TwoPerSm*' > "$WORK/tests-$i.log" 2>&1 &
  done
  wait
fi
cat "$WORK"/tests-*.log 2>/dev/null | grep -E '^\[ +(FAILED|OK) +\]|^\[ +RUN +\]' > "$WORK/tests.txt"
python3 - "$WORK/tests.txt" "$OUT/tests.json" "$T" <<'PY' | tee -a "$LOG"
import json, re, sys
lines = open(sys.argv[1]).read().splitlines()
name = lambda l: re.sub(r"^\[[^]]*\] ", "", l).split(", where")[0].split(" (")[0]
run = [name(l) for l in lines if "RUN" in l]
ok = {name(l) for l in lines if "OK" in l}
failed = sorted({name(l) for l in lines if "FAILED" in l and not re.search(r"\d+ tests?, listed below", l)})
cut = [t for t in run if t not in ok and t not in failed]
json.dump({"passed": len(ok), "failed": failed, "cut_short": cut, "seconds": int(sys.argv[3])}, open(sys.argv[2], "w"), indent=1)
print(f"GPU tests: {len(ok)} passed, {len(failed)} failed{': ' + ', '.join(failed) if failed else ''}, "
      f"{len(cut)} cut short by the {sys.argv[3]} s bound")
PY

say "2. kiln tune on 30 random BF16 shapes against cuBLAS"
# About 6 s a shape (the search 1-8 s, the checked comparison 1-2 s), the exhaustive search 1-6 s at
# the first 8, the bucketing neighbours about 5 s each; the last shape started may take 30 s.
T=$(limit 250 225)
bounded "$T" env KILN_CACHE_DIR="$WORK/cache-bf16" "$BIN/kiln_tune_bench" --program bf16 --random 30 --seed "$SEED" \
  --max-seconds $(( T > 40 ? T - 40 : 1 )) --exhaustive-shapes 8 --bucket-shapes 4 --bucket-neighbours 2 \
  --tune-dir "$WORK/tune-bf16" --json "$OUT/tune_bf16.json"

say "3. kiln tune on FP8 shapes against cuBLASLt"
T=$(limit 60 165)
bounded "$T" env KILN_CACHE_DIR="$WORK/cache-fp8" "$BIN/kiln_tune_bench" --program fp8 \
  --shapes "4096x7168x2048;128x7168x2048;4096x14336x4096;8192x8192x8192" --random 2 --seed "$SEED" \
  --cold-shapes 1 --warm-shapes 1 --max-seconds $(( T > 25 ? T - 25 : 1 )) --tune-dir "$WORK/tune-fp8" \
  --json "$OUT/tune_fp8.json"

say "4. the Python extension"
bounded "$(limit 60 150)" scripts/stage-gpu-python.sh --device
export PYTHONPATH=$PWD/build-gpu-py

say "5. fused programs against torch eager and torch.compile max-autotune"
T=$(limit 85 65)
bounded "$T" env KILN_CACHE_DIR="$WORK/cache-fused" KILN_TUNE_DIR="$WORK/tune-fused" python3 bench/fused_torch.py \
  --kiln-tool "$BIN/kiln" --max-seconds $(( T > 50 ? T - 50 : 1 )) --json "$OUT/fused.json"

say "6. programmatic dependent launch: chains of short kernels, pdl off and on"
bounded "$(limit 25 43)" env KILN_CACHE_DIR="$WORK/cache-pdl" "$BIN/kiln_pdl_bench" --rounds 3 --reps 20 \
  --json "$OUT/pdl.json"

say "7. Triton's autotune on the BF16 shapes"
T=$(limit 40 3)
bounded "$T" python3 bench/triton_autotune.py --shapes-from "$OUT/tune_bf16.json" --limit 6 \
  --max-seconds $(( T > 22 ? T - 22 : 1 )) --json "$OUT/triton.json"

say "8. summary"
python3 bench/tune_summary.py "$OUT" > /dev/null 2>> "$LOG"
rm -rf "$WORK"
say "done"
cat "$OUT/summary.md"
