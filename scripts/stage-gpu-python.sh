#!/usr/bin/env bash
# The Python package on the GPU machine, which has Python, torch, nanobind, cmake, ninja and the
# CUDA toolkit but not fmt, nlohmann_json or CLI11, and no network.
#
# Here (after `cmake --build build`): installs Kiln's C++ package (headers, static layer libraries
# built here, kilnConfig.cmake, its copy of the PTX compiler library), adds the two GEMM benchmarks
# bench/python_overhead.py compares with (bin/), and packs it into gpu-pack/kiln-prefix.tar.xz
# (git-ignored) for the device tool to carry (run it after stage-gpu-bin.sh, which empties gpu-pack/):
#   scripts/stage-gpu-python.sh
# There: unpacks it and builds only the extension, against the installed package and that
# machine's Python (python/CMakeLists.txt on its own: find_package(kiln)), into build-gpu-py/,
# which is then a package folder for PYTHONPATH:
#   scripts/stage-gpu-python.sh --device
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" != "--device" ]; then
  BUILD=${BUILD:-build}
  rm -rf gpu-pack/kiln-prefix gpu-pack/kiln-prefix.tar.xz && mkdir -p gpu-pack
  cmake --install "$BUILD" --prefix gpu-pack/kiln-prefix --component devel >/dev/null
  find gpu-pack/kiln-prefix -name '*.a' -exec strip --strip-debug {} +
  mkdir gpu-pack/kiln-prefix/bin
  cp "$BUILD/bench/kiln_gemm_bench" "$BUILD/bench/kiln_fp8_bench" gpu-pack/kiln-prefix/bin/
  strip gpu-pack/kiln-prefix/bin/*
  # One stream with a big dictionary: the benchmarks and the PTX compiler library share most bytes.
  tar -C gpu-pack -cf - kiln-prefix | xz -T1 -9 --lzma2=dict=192MiB > gpu-pack/kiln-prefix.tar.xz
  rm -rf gpu-pack/kiln-prefix
  du -sh gpu-pack/kiln-prefix.tar.xz
  exit 0
fi
start=$(date +%s)
rm -rf gpu-pack/kiln-prefix build-gpu-py
tar -C gpu-pack -xJf gpu-pack/kiln-prefix.tar.xz
cmake -S python -B build-gpu-py -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$PWD/gpu-pack/kiln-prefix" \
  -DPython_EXECUTABLE="$(command -v python3)" >/dev/null
cmake --build build-gpu-py -j "$(nproc)" >/dev/null
PYTHONPATH=build-gpu-py python3 -c "import kiln; print('kiln', kiln.__version__, 'built in', $(date +%s) - $start, 's')"
