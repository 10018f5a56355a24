#!/usr/bin/env bash
# `ingot run --precision bf16` runs the workload whose dense layers multiply bf16 and prints each output's error
# against the fp32 interpreter where the CPU has AVX-512 BF16, and refuses it, naming why, where it has not; AVX2 code
# is refused everywhere; an unknown precision is a usage error.
# Usage: run_precision_bf16.sh PATH/TO/ingot
set -euo pipefail
ingot="$1"
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

if grep -qw avx512_bf16 /proc/cpuinfo && grep -qw avx512f /proc/cpuinfo; then
  "$ingot" run --workload mlp --size small --precision bf16 --schedule strategy:global --min-repeat-ms 1 \
    > "$dir/bf16.txt" 2>&1 || fail "run --precision bf16: $(cat "$dir/bf16.txt")"
  grep -q "^program mlp@bf16 " "$dir/bf16.txt" || fail "not the bf16 program: $(cat "$dir/bf16.txt")"
  grep -q "^bf16 against the fp32 interpreter, Y: max |error| " "$dir/bf16.txt" ||
    fail "no error against fp32: $(cat "$dir/bf16.txt")"
  grep -q "^strategy:global .*correct" "$dir/bf16.txt" || fail "not correct: $(cat "$dir/bf16.txt")"
else
  if "$ingot" run --workload mlp --size small --precision bf16 > "$dir/refused.txt" 2>&1; then
    fail "bf16 ran on a CPU without AVX-512 BF16"
  fi
  grep -q "bf16 needs AVX-512 BF16 (or AMX)" "$dir/refused.txt" || fail "refused without the reason: $(cat "$dir/refused.txt")"
fi
if "$ingot" run --workload mlp --size small --precision bf16 --isa avx2 > "$dir/avx2.txt" 2>&1; then
  fail "bf16 ran as AVX2 code"
fi
grep -q -- "--precision bf16: bf16" "$dir/avx2.txt" || fail "AVX2 refused without the reason: $(cat "$dir/avx2.txt")"
if "$ingot" run --workload mlp --precision fp16 > "$dir/fp16.txt" 2>&1; then fail "fp16 was accepted"; fi
grep -q "precision" "$dir/fp16.txt" || fail "fp16 refused without naming --precision: $(cat "$dir/fp16.txt")"
echo "ok"
