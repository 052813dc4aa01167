#!/usr/bin/env bash
# Installs what Kiln's build and tests need on a fresh Debian 12 machine (run as root, or with sudo
# available). The CUDA 13.0 toolkit (nvcc, ptxas, nvJitLink, cuBLAS) must already be installed under
# /usr/local/cuda: it is not a Debian package. Safe to run again: it skips what is there.
set -euo pipefail

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

APT_PACKAGES=(cmake ninja-build g++ clang libclang-rt-14-dev llvm-14-tools libgtest-dev libfmt-dev
              nlohmann-json3-dev libcli11-dev python3-pip python3-venv ccache)
missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "kiln: installing Debian packages: ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# Python tools, pinned: lit runs the text-IR tests; nvdisasm (NVIDIA's wheel) gives SASS statistics;
# the PTX compiler library (NVIDIA's wheel, the toolkit's exact version) assembles sm_90a in-process
# with setmaxnreg honoured (src/backend/ptx_compiler.h), linked statically into Kiln. nanobind and
# scikit-build-core build the Python package (python/, pyproject.toml); numpy and pytest test it.
PY=python3
PIP_PINS=(lit==18.1.8 nvidia-cuda-nvdisasm==13.4.92 nvidia-nvptxcompiler==13.0.88 nanobind==3.1.0
          scikit-build-core==1.1.2 numpy==2.4.6 pytest==9.2.0)
if ! $PY -m pip install -q --disable-pip-version-check "${PIP_PINS[@]}" 2>/dev/null; then
  # Debian's own python refuses system-wide installs (PEP 668) unless told otherwise.
  $PY -m pip install -q --disable-pip-version-check --break-system-packages "${PIP_PINS[@]}"
fi

if [ ! -x /usr/local/cuda/bin/ptxas ] && ! command -v ptxas >/dev/null; then
  echo "kiln: the CUDA 13.0 toolkit was not found (no ptxas under /usr/local/cuda/bin or on PATH)." >&2
  echo "      Install it from NVIDIA's repository; Kiln needs its headers, nvJitLink and cuBLAS." >&2
  exit 1
fi
