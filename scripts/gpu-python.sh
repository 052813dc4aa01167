#!/usr/bin/env bash
# On the GPU machine, in one call, after scripts/stage-gpu-python.sh packed gpu-pack/kiln-prefix.tar.xz
# here: builds the extension against that machine's Python (stage-gpu-python.sh --device), runs the
# Python package's tests with torch and the GPU, times the C++ benchmarks' family picks at
# BENCH.md's shapes, then bench/python_overhead.py beside them. Logs and JSON land in $OUT
# (default ./out). A benchmark never fails the run; a failed test is reported in pytest.log.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-out}
mkdir -p "$OUT"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem --format=csv > "$OUT/gpu.txt" 2>&1
cat "$OUT/gpu.txt"

echo "== building the extension"
scripts/stage-gpu-python.sh --device 2>&1 | tee "$OUT/build.log" | tail -3
export PYTHONPATH=$PWD/build-gpu-py
BIN=gpu-pack/kiln-prefix/bin

echo "== pytest (torch, GPU)"
timeout 300 python3 -X faulthandler -m pytest -q -rs -p no:cacheprovider tests/python --junitxml="$OUT/pytest.xml" \
  > "$OUT/pytest.log" 2>&1
rc=$?
echo "pytest exit $rc"
# A test that kills the interpreter (a signal: exit > 128) takes the tests after it along: name it
# from faulthandler's trace and run the rest without it, so one crash hides nothing else.
if [ "$rc" -gt 128 ]; then
  crashed=$(grep -oE 'tests/python/test_[a-z_]+\.py", line [0-9]+ in test_[A-Za-z0-9_]+' "$OUT/pytest.log" | head -1 |
            sed -E 's/", line [0-9]+ in /::/')
  echo "pytest: $crashed crashed the interpreter; the other tests again without it"
  timeout 240 python3 -X faulthandler -m pytest -q -rs -p no:cacheprovider tests/python --deselect "$crashed" \
    --junitxml="$OUT/pytest-rest.xml" > "$OUT/pytest-rest.log" 2>&1
  echo "pytest (without $crashed) exit $?"
  tail -4 "$OUT/pytest-rest.log"
fi
tail -4 "$OUT/pytest.log"

echo "== the C++ benchmarks: the families' picks at BENCH.md's shapes"
# kiln.select names the picks (the benchmarks time a pick only when it is among their configs).
picks=$(PYTHONPATH=$PYTHONPATH:bench python3 -X faulthandler - 2>"$OUT/picks.log" <<'EOF'
import kiln
from kiln import programs
from python_overhead import FP8_SHAPES
bf16 = programs.gemm_program(kiln.bf16, kiln.bf16, kiln.bf16)
fp8 = programs.scaled_mm_program(kiln.bf16)
print(kiln.select(bf16, "sm_90a", dict(M=4096, N=4096, K=4096))["variant"])
for line in sorted({kiln.select(fp8, "sm_90a", dict(M=m, N=n, K=k))["config"] for m, n, k in FP8_SHAPES}):
    print(line)
EOF
)
# The benchmarks at python_overhead.py's shapes only, as --shapes lines (MxNxK;...).
shapes=$(python3 - <<'EOF'
import ast, re
text = open("bench/python_overhead.py").read()
for name in ("BF16_SHAPES", "FP8_SHAPES"):
    shapes = ast.literal_eval(re.search(name + r" = (\[.*?\])\n", text, re.S).group(1))
    print(";".join(f"{m}x{n}x{k}" for m, n, k in shapes))
EOF
)
bf16_variant=$(echo "$picks" | head -1)
if [ -z "$bf16_variant" ]; then
  echo "kiln.select named no picks (picks.log):"; cat "$OUT/picks.log"; exit 1
fi
fp8_configs=()
while IFS= read -r line; do fp8_configs+=(--config "$line"); done < <(echo "$picks" | tail -n +2)
timeout 200 "$BIN/kiln_gemm_bench" --variants "$bf16_variant" --shapes "$(echo "$shapes" | head -1)" --json "$OUT/cpp_bf16.json" > "$OUT/cpp_bf16.log" 2>&1
echo "kiln_gemm_bench exit $?"
timeout 200 "$BIN/kiln_fp8_bench" "${fp8_configs[@]}" --shapes "$(echo "$shapes" | tail -1)" --json "$OUT/cpp_fp8.json" > "$OUT/cpp_fp8.log" 2>&1
echo "kiln_fp8_bench exit $?"

echo "== kiln.ops from torch against the C++ picks, and the host time of a warm call"
timeout 300 python3 bench/python_overhead.py --json "$OUT/python_overhead.json" --cpp-bf16 "$OUT/cpp_bf16.json" \
  --cpp-fp8 "$OUT/cpp_fp8.json" 2>&1 | tee "$OUT/python_overhead.log"
