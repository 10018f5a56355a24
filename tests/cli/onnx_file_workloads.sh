#!/usr/bin/env bash
# An ONNX model file is a workload wherever a workload is named: `run` (every strategy, verified with the model's
# weights), `plan`, `lower`, `costmodel features`; after `tune`, `best`, `history` and `export` find its results by
# the file as by its stem. --size is refused for a file, whose shapes are its own.
# Usage: onnx_file_workloads.sh PATH/TO/ingot PATH/TO/tiny_mlp.onnx
set -euo pipefail
ingot="$1"
model="$(realpath "$2")"
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
fail() {
  echo "FAIL: $*"
  exit 1
}

"$ingot" run --workload "$model" --threads 1 --min-repeat-ms 1 \
  --schedule naive strategy:unfused strategy:rules strategy:subgraph strategy:global > "$dir/run.log" ||
  fail "run: $(cat "$dir/run.log")"
cat "$dir/run.log"
[ "$(grep -c ' correct ' "$dir/run.log")" = 5 ] || fail "run did not verify all five schedules"
grep -q "^program .*($model)" "$dir/run.log" || fail "run did not name the model file"

"$ingot" plan --workload "$model" --strategy global > "$dir/plan.txt" || fail "plan: $(cat "$dir/plan.txt")"
grep -qi "kernel" "$dir/plan.txt" || fail "plan printed no kernels: $(cat "$dir/plan.txt")"
"$ingot" lower --workload "$model" --schedule strategy:global --emit cpp > "$dir/lowered.cc" || fail "lower failed"
grep -q "extern \"C\"" "$dir/lowered.cc" || fail "lower printed no C++ entry point"
"$ingot" costmodel features --workload "$model" --schedule strategy:global > "$dir/features.txt" ||
  fail "costmodel features: $(cat "$dir/features.txt")"

if "$ingot" run --workload "$model" --size small 2> "$dir/size.txt"; then fail "--size was accepted for an ONNX file"; fi
grep -q "is an ONNX model, whose shapes are its file's" "$dir/size.txt" || fail "unexpected --size error: $(cat "$dir/size.txt")"
if "$ingot" plan --workload "$dir/missing.onnx" 2> "$dir/missing.txt"; then fail "a missing file was accepted"; fi
grep -q "missing.onnx" "$dir/missing.txt" || fail "the missing file was not named: $(cat "$dir/missing.txt")"

cat > "$dir/tune.yaml" <<CONFIG
workload: {onnx: $model}
target: {threads: 1}
budget: {trials: 2}
database: $dir/tuned.db
measure: {warmup_runs: 0, min_repeat_ms: 1, min_repeats: 1, build_workers: 2}
CONFIG
"$ingot" tune "$dir/tune.yaml" > "$dir/tune.log" || fail "tune: $(cat "$dir/tune.log")"
by_file="$("$ingot" best --workload "$model" --db "$dir/tuned.db" --threads 1 --json | grep workload_hash)"
by_stem="$("$ingot" best --workload "$(basename "$model" .onnx)" --db "$dir/tuned.db" --threads 1 --json |
  grep workload_hash)"
[ -n "$by_file" ] && [ "$by_file" = "$by_stem" ] || fail "best by file ($by_file) is not best by stem ($by_stem)"
[ "$("$ingot" history --workload "$model" --db "$dir/tuned.db" | grep -c "$(basename "$model" .onnx)")" -ge 2 ] ||
  fail "history by file did not list the trials"
"$ingot" export --workload "$model" --db "$dir/tuned.db" --threads 1 --out "$dir/export" > "$dir/export.log" ||
  fail "export: $(cat "$dir/export.log")"
grep -q "^build: " "$dir/export.log" || fail "export printed no build command"
echo "PASS"
