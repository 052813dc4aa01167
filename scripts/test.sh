#!/usr/bin/env bash
# Builds Kiln and runs every test: GoogleTest unit tests, lit + FileCheck tests of the text IR and
# the tool, the install and out-of-tree consumer test, the Python package's tests (pytest, on the
# module this build makes), GPU tests (skipped, each saying why, on a machine without a GPU), the
# parser fuzzer for KILN_FUZZ_SECONDS (default 60) plus its regression inputs, and last the wheel
# `pip install .` builds, installed into a fresh virtual environment and tested there.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh

JOBS=$(nproc)
# ccache: the wheel's build (scripts/test-wheel.sh) compiles the same sources in build-wheel/, a
# folder as deep as build/, so with the paths made relative to here most of it is cache hits.
export CCACHE_BASEDIR=$PWD
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DKILN_BUILD_PYTHON=ON \
  -DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache
cmake --build build -j "$JOBS"
ctest --test-dir build --output-on-failure -j "$JOBS"

# The fuzzer needs clang's libFuzzer; it builds the parser and verifier with ASan and UBSan.
CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DKILN_BUILD_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build-fuzz -j "$JOBS" --target kiln_parser_fuzz
ctest --test-dir build-fuzz -L fuzz --output-on-failure
work=$(mktemp -d)
cp tests/fuzz/corpus/* "$work"/
echo "kiln: fuzzing the parser for ${KILN_FUZZ_SECONDS:-60} s"
if ! ./build-fuzz/tests/fuzz/kiln_parser_fuzz -max_total_time="${KILN_FUZZ_SECONDS:-60}" -max_len=4096 \
      -artifact_prefix="$work/crash-" "$work" > "$work/fuzz.log" 2>&1; then
  tail -40 "$work/fuzz.log"
  echo "kiln: the parser fuzzer found a crash; add the input under tests/fuzz/regressions/ and fix it" >&2
  exit 1
fi
grep -E "^Done [0-9]+ runs" "$work/fuzz.log" || true
rm -rf "$work"

scripts/test-wheel.sh
