#!/usr/bin/env bash
# Builds Kiln and runs every test: GoogleTest unit tests, lit + FileCheck tests of the text IR and
# the tool, the install and out-of-tree consumer test, the Python package's tests (pytest, on the
# module this build makes), GPU tests (skipped, each saying why, on a machine without a GPU), the
# fuzzers (parser, compiler, interpreter) for KILN_FUZZ_SECONDS each (default 60) plus their
# regression inputs, and last the wheel `pip install .` builds, installed into a fresh virtual
# environment and tested there.
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

# The fuzzers need clang's libFuzzer; they build the layers they reach with ASan and UBSan
# (tests/fuzz/CMakeLists.txt): the parser, the compiler (a config and a program to PTX text) and the
# interpreter. Each replays its regression inputs and seed corpus (ctest -L fuzz), then fuzzes for
# KILN_FUZZ_SECONDS (default and minimum 60) from its corpus, with the IR and config tokens of
# tests/fuzz/kiln.dict.
FUZZ_TARGETS="parser compile interp"
CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DKILN_BUILD_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache >/dev/null
cmake --build build-fuzz -j "$JOBS" --target $(for t in $FUZZ_TARGETS; do echo "kiln_${t}_fuzz"; done)
ctest --test-dir build-fuzz -L fuzz --output-on-failure
fuzz_seconds=${KILN_FUZZ_SECONDS:-60}
if [ "$fuzz_seconds" -lt 60 ]; then fuzz_seconds=60; fi
for t in $FUZZ_TARGETS; do
  work=$(mktemp -d)
  mkdir "$work/corpus"
  cp tests/fuzz/corpus/"$t"/* "$work/corpus"/
  echo "kiln: fuzzing the $t target for $fuzz_seconds s"
  # -timeout: an input that runs 20 s is a hang; -rss_limit_mb: one that needs 2 GB is a leak or an
  # unchecked size (the harnesses keep their own runs far below both).
  if ! ./build-fuzz/tests/fuzz/kiln_"$t"_fuzz -max_total_time="$fuzz_seconds" -max_len=8192 -timeout=20 \
        -dict=tests/fuzz/kiln.dict -rss_limit_mb=2048 -artifact_prefix="$work/crash-" "$work/corpus" \
        > "$work/fuzz.log" 2>&1; then
    tail -40 "$work/fuzz.log"
    echo "kiln: the $t fuzzer found a crash, a hang or a leak (the input: $work/crash-*); add it under" \
         "tests/fuzz/regressions/$t/ and fix it" >&2
    exit 1
  fi
  grep -E "^Done [0-9]+ runs" "$work/fuzz.log"
  rm -rf "$work"
done

scripts/test-wheel.sh
