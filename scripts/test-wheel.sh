#!/usr/bin/env bash
# Builds the wheel `pip install .` builds (pyproject.toml: scikit-build-core, in its own isolated
# build environment), installs it into a fresh virtual environment and runs the Python package's
# tests there, from outside the repository, so they import the installed package.
# The wheel lands in dist/; its CMake build in build-wheel/ (ccache makes it mostly cache hits after
# scripts/test.sh's build; CCACHE_BASEDIR must be the repository, as there).
set -euo pipefail
cd "$(dirname "$0")/.."
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD}
export CMAKE_C_COMPILER_LAUNCHER=ccache CMAKE_CXX_COMPILER_LAUNCHER=ccache
start=$(date +%s)
rm -rf dist
# The compilers build/ was configured with: ccache keys on the compiler's name too, so the wheel's
# build (given g++ where build/ found c++) would miss every entry.
compilers=()
if [ -f build/CMakeCache.txt ]; then
  for lang in C CXX; do
    c=$(sed -n "s/^CMAKE_${lang}_COMPILER:[A-Z]*=//p" build/CMakeCache.txt)
    if [ -n "$c" ]; then compilers+=("-Ccmake.define.CMAKE_${lang}_COMPILER=$c"); fi
  done
fi
python3 -m pip wheel -q --disable-pip-version-check . -w dist -Cbuild-dir=build-wheel "${compilers[@]}"
echo "kiln: built $(ls dist/kiln-*.whl) in $(( $(date +%s) - start )) s"
venv=$(mktemp -d)
trap 'rm -rf "$venv"' EXIT
python3 -m venv "$venv"
"$venv/bin/pip" install -q --disable-pip-version-check dist/kiln-*.whl pytest
cd "$venv"
"$venv/bin/python" -c "import kiln, os; assert not kiln.__file__.startswith(os.environ['OLDPWD']), kiln.__file__"
"$venv/bin/python" -m pytest -q -rs -p no:cacheprovider "$OLDPWD/tests/python"
