#!/usr/bin/env bash
# Kiln's main job on its built-in default: build, compile every variant of the default kernel
# family (gemm_bf16) for the H200's target and print its report (registers, stack, spills, shared
# memory, instruction mix). On a machine with a GPU, also check and benchmark the family against
# cuBLAS (`kiln bench`).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
# Configured as scripts/test.sh configures the same folder: the two commands share one build.
export CCACHE_BASEDIR=$PWD
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DKILN_BUILD_PYTHON=ON \
  -DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache >/dev/null
cmake --build build -j "$(nproc)"
./build/tools/kiln inspect --family gemm_bf16 --target sm_90a
if ./build/tools/kiln bench --shapes "4096x4096x4096;8192x1024x4096;64x5120x5120"; then :; else
  status=$?
  if [ "$status" -eq 3 ]; then echo "(no GPU here: the benchmark runs on a machine with one)"; else exit "$status"; fi
fi
