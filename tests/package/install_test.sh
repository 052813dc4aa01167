#!/usr/bin/env bash
# Installs Kiln from a build folder into a temporary prefix, then configures, builds and runs the
# out-of-tree consumer (tests/package/consumer/) against it, as a user would. No GPU needed.
# Usage: install_test.sh BUILD_DIR [CMAKE]
set -euo pipefail
build=$1
cmake=${2:-cmake}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$cmake" --install "$build" --prefix "$work/prefix" --component devel >/dev/null
# Nothing of src/ is installed: the public headers stand on their own.
if find "$work/prefix/include" -type f | xargs grep -lE '#include "(ir|dialects|target|frontend|interp|transforms|schedule|codegen|backend|runtime|api|ops|driver)/' ; then
  echo "install_test: an installed header includes an internal one (above)" >&2
  exit 1
fi
launcher=()
if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
"$cmake" -S "$here/consumer" -B "$work/consumer" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$work/prefix" "${launcher[@]}" >/dev/null
"$cmake" --build "$work/consumer" >/dev/null
"$work/consumer/kiln_consumer"
