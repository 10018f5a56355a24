#!/usr/bin/env bash
# `ingot run` without --schedule runs any workload (naive, the hand schedule where one exists, the fixed `global`
# schedule) instead of failing on a missing hand schedule, and `ingot lower` and `ingot run` default to one size.
# Usage: run_and_lower_defaults.sh PATH/TO/ingot
set -euo pipefail
ingot="$1"
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$ingot" run --workload mlp --size small --min-repeat-ms 1 > "$dir/mlp.txt" 2>&1 || fail "run --workload mlp: $(cat "$dir/mlp.txt")"
grep -q "^naive .*correct" "$dir/mlp.txt" || fail "no naive run: $(cat "$dir/mlp.txt")"
grep -q "^strategy:global .*correct" "$dir/mlp.txt" || fail "no strategy:global run: $(cat "$dir/mlp.txt")"
if grep -q "^hand" "$dir/mlp.txt"; then fail "mlp has no hand schedule, yet one ran"; fi

"$ingot" run --workload matmul --size small --min-repeat-ms 1 > "$dir/matmul.txt" 2>&1 || fail "run --workload matmul"
grep -q "^hand .*correct" "$dir/matmul.txt" || fail "matmul's hand schedule did not run: $(cat "$dir/matmul.txt")"

"$ingot" lower --workload mlp > "$dir/lower_plain.txt"
"$ingot" lower --workload mlp --size default > "$dir/lower_default.txt"
cmp -s "$dir/lower_plain.txt" "$dir/lower_default.txt" || fail "lower's default size is not run's (default)"
grep -q "^program mlp (default)" <("$ingot" run --workload mlp --schedule naive --min-repeat-ms 1 2>&1) ||
  fail "run's default size is not 'default'"
echo "ok"
