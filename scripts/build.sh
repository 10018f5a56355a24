#!/usr/bin/env bash
# Installs what is missing, configures and builds ingot into build/ (or $INGOT_BUILD_DIR).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${INGOT_BUILD_DIR:-$root/build}"
"$root/scripts/setup.sh"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE="${INGOT_BUILD_TYPE:-RelWithDebInfo}" ${INGOT_CMAKE_ARGS:-} >/dev/null
cmake --build "$build" -j "$(nproc)"
