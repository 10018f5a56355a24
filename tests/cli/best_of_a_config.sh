#!/usr/bin/env bash
# `ingot best --config` finds exactly a config's workload when two sizes of one workload share a name in the
# database (as scripts/main.sh needs after `ingot tune configs/mlp.yaml`), where `--workload NAME` must refuse;
# and the tune summary compares the best with the fixed and the naive schedules.
# Usage: best_of_a_config.sh PATH/TO/ingot
set -euo pipefail
ingot="$1"
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
for size in 8 16; do
  cat > "$dir/mlp_$size.yaml" <<CONFIG
workload: {name: mlp, params: {batch: 4, in: $size, hidden: 16, out: 8}}
target: {threads: 1}
budget: {trials: 2}
database: $dir/both.db
measure: {warmup_runs: 0, min_repeat_ms: 1, min_repeats: 1, build_workers: 2}
CONFIG
  "$ingot" tune "$dir/mlp_$size.yaml" > "$dir/tune_$size.txt"
done
# The summary says how the best compares with the fixed and the naive schedule (issue 20, item 10).
grep -q "^best: .* the fixed schedule's .* the naive schedule's .* ms) in $dir/both.db" "$dir/tune_16.txt" || {
  echo "FAIL: no speed-ups over the fixed and naive schedules in the summary"
  cat "$dir/tune_16.txt"
  exit 1
}
grep -q "^  naive schedule .* ms  timed once, after the rounds" "$dir/tune_16.txt" || {
  echo "FAIL: the naive schedule is missing from the side-by-side table"
  exit 1
}
if "$ingot" best --workload mlp --db "$dir/both.db" 2> "$dir/error.txt"; then
  echo "FAIL: best --workload mlp chose one of two workloads named mlp"
  exit 1
fi
grep -q "2 workloads are named 'mlp'.*ingot best --config CONFIG" "$dir/error.txt" || {
  echo "FAIL: unexpected error: $(cat "$dir/error.txt")"
  exit 1
}
for size in 8 16; do
  hash="$("$ingot" best --config "$dir/mlp_$size.yaml" --json | sed -n 's/.*"workload_hash": "\([0-9a-f]*\)".*/\1/p')"
  [ -n "$hash" ] || { echo "FAIL: best --config mlp_$size.yaml found nothing"; exit 1; }
  echo "mlp_$size: $hash"
done
[ "$("$ingot" best --config "$dir/mlp_8.yaml" --json | grep -c workload_hash)" = 1 ]
a="$("$ingot" best --config "$dir/mlp_8.yaml" --json | grep workload_hash)"
b="$("$ingot" best --config "$dir/mlp_16.yaml" --json | grep workload_hash)"
[ "$a" != "$b" ] || { echo "FAIL: both configs found the same workload"; exit 1; }
echo "PASS"
