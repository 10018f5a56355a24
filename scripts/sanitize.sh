#!/usr/bin/env bash
# Builds ingot with AddressSanitizer and UndefinedBehaviorSanitizer (INGOT_SANITIZE) into build-sanitize/ (or
# $INGOT_SANITIZE_BUILD_DIR) and runs the whole test suite there. CI runs it after the README's test command.
# Generated kernels are compiled without sanitizers, as always; they share the kernel cache of build/ so that a
# run after scripts/test.sh does not compile them again.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${INGOT_SANITIZE_BUILD_DIR:-$root/build-sanitize}"
"$root/scripts/setup.sh"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DINGOT_SANITIZE=ON >/dev/null
cmake --build "$build" -j "$(nproc)"
export INGOT_CACHE_DIR="${INGOT_CACHE_DIR:-${INGOT_BUILD_DIR:-$root/build}/kernel_cache}"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:strict_string_checks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
cd "$build"
ctest --output-on-failure -j "$(nproc)" --timeout 900
