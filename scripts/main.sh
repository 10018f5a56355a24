#!/usr/bin/env bash
# The main job: builds ingot, then compiles, verifies against the reference interpreter and times built-in
# example programs on the CPU with the naive lowering, the hand schedule and random schedules.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${INGOT_BUILD_DIR:-$root/build}"
"$root/scripts/build.sh"
for example in matmul_bias_relu two_gemm softmax; do
  "$build/ingot" run --example "$example" --schedule naive hand random:1 random:2 random:3
done
