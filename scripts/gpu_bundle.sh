#!/usr/bin/env bash
# Packs a build for a machine with a GPU that lacks ingot's libraries (a lent device machine): the binaries that
# scripts/gpu_check.sh runs, stripped, and the shared libraries they need that are not glibc's or the CUDA toolkit's.
# Usage: scripts/gpu_bundle.sh [BUILD_DIR] [BUNDLE_DIR]; then, there:
#   LD_LIBRARY_PATH=BUNDLE_DIR/lib scripts/gpu_check.sh BUNDLE_DIR/build OUT_DIR
set -euo pipefail
build="${1:-build}"
bundle="${2:-.gpu}"
mkdir -p "$bundle/build" "$bundle/lib"
for binary in ingot runtime_tests space_tests tuner_tests; do
  strip -o "$bundle/build/$binary" "$build/$binary"
done
ldd "$build"/ingot "$build"/runtime_tests "$build"/space_tests "$build"/tuner_tests | awk '$3 ~ /^\// {print $3}' | sort -u |
  grep -v -E '/(libc|libm|libdl|librt|libpthread|libstdc\+\+|libgcc_s|ld-linux.*|libnvrtc.*|libcuda)\.so' |
  while read -r library; do cp -L "$library" "$bundle/lib/"; done
du -sh "$bundle"
