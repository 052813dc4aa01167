#!/usr/bin/env bash
# Copies the Release GPU binaries into gpu-bin/ (git-ignored) so the device tool can carry them.
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf gpu-bin && mkdir -p gpu-bin
BUILD=${1:-build-gpu}
cp "$BUILD/tests/kiln_gpu_tests" "$BUILD/bench/kiln_gemm_bench" "$BUILD/tools/kiln" gpu-bin/
strip gpu-bin/*
git rev-parse --short HEAD > gpu-bin/COMMIT
du -sh gpu-bin
