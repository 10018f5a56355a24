#!/usr/bin/env bash
# Builds ingot and runs the whole test suite with CTest.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${INGOT_BUILD_DIR:-$root/build}"
"$root/scripts/build.sh"
cd "$build"
ctest --output-on-failure -j "$(nproc)" --timeout 900
