#!/usr/bin/env bash
# Kiln's main job on its built-in default: build, then print the default programs and (as the
# backend lands) compile the default kernel family and print its resource report; on a machine with
# a GPU, run and benchmark it.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j "$(nproc)"
exec ./build/tools/kiln examples --print
