#!/usr/bin/env bash
# Copies the Release GPU binaries into gpu-bin/ (git-ignored) so the device tool can carry them.
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf gpu-bin && mkdir -p gpu-bin
cp build-gpu/tests/kiln_gpu_tests build-gpu/bench/kiln_gemm_bench build-gpu/bench/kiln_residual_bench build-gpu/tools/kiln gpu-bin/
strip gpu-bin/*
git rev-parse HEAD > gpu-bin/COMMIT
du -sh gpu-bin
