#!/usr/bin/env bash
# Packs the GPU binaries (GPU tests, benchmarks, the kiln tool) into gpu-pack/gpu-bin.tar.xz
# (git-ignored) for the device tool to carry. The sm_90a PTX compiler is linked statically into each,
# so they are large; one xz stream with a big dictionary stores the shared part once.
# On the GPU machine: mkdir gpu-bin && tar -C gpu-bin -xJf gpu-pack/gpu-bin.tar.xz
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
rm -rf gpu-bin gpu-pack && mkdir -p gpu-bin gpu-pack
cp "$BUILD/tests/kiln_gpu_tests" "$BUILD"/bench/kiln_*_bench "$BUILD/tools/kiln" gpu-bin/
strip gpu-bin/*
git rev-parse --short HEAD > gpu-bin/COMMIT
tar -C gpu-bin -cf - . | xz -T1 -9 --lzma2=dict=192MiB > gpu-pack/gpu-bin.tar.xz
du -sh gpu-pack/gpu-bin.tar.xz
