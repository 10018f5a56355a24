#!/usr/bin/env bash
# Installs what is missing, configures and builds ingot into build/ (or $INGOT_BUILD_DIR). The compiler's output goes
# to build/build.log: on success one line (and any warnings), on failure the log's end.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${INGOT_BUILD_DIR:-$root/build}"
"$root/scripts/setup.sh"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE="${INGOT_BUILD_TYPE:-RelWithDebInfo}" ${INGOT_CMAKE_ARGS:-} >/dev/null
log="$build/build.log"
echo "building ingot in $build ..."
if ! cmake --build "$build" -j "$(nproc)" >"$log" 2>&1; then
  tail -n 60 "$log" >&2
  echo "build failed; the whole log: $log" >&2
  exit 1
fi
if grep -q "warning:" "$log"; then
  grep -B2 -A4 "warning:" "$log" >&2
  echo "the build has warnings (ingot keeps them at zero); the whole log: $log" >&2
fi
echo "built (log: $log)"
