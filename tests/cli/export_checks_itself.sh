#!/usr/bin/env bash
# `ingot export` writes a program that checks itself on the values ingot measured with: tuned from an ONNX model
# (whose weights are fixed inputs) with `--seed` overriding the config's seed, the export holds the model's weights
# and the run's random input, checks with the run's measure.rtol, builds with the command it prints, passes its
# check, and fails it naming the output when the reference is another seed's, or naming the file when an input is
# missing.
# Usage: export_checks_itself.sh PATH/TO/ingot PATH/TO/tiny_mlp.onnx
set -euo pipefail
ingot="$1"
model="$(realpath "$2")"
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
fail() {
  echo "FAIL: $*"
  exit 1
}

for seed in 1 7; do
  cat > "$dir/tiny_$seed.yaml" <<CONFIG
workload: {onnx: $model}
target: {threads: 1}
budget: {trials: 2}
seed: 1
database: $dir/seed_$seed.db
measure: {warmup_runs: 0, min_repeat_ms: 1, min_repeats: 1, build_workers: 2, rtol: 0.001}
CONFIG
  "$ingot" tune "$dir/tiny_$seed.yaml" --seed "$seed" > "$dir/tune_$seed.log"
  "$ingot" export --workload tiny_mlp --db "$dir/seed_$seed.db" --threads 1 --out "$dir/export_$seed" \
    > "$dir/export_$seed.log"
done
out="$dir/export_7"
cat "$dir/export_7.log"

python3 -c 'import sys; sys.exit(open(sys.argv[2], "rb").read() not in open(sys.argv[1], "rb").read())' \
  "$model" "$out/inputs/w1.bin" || fail "inputs/w1.bin is not the model's weight w1"
if cmp -s "$dir/export_1/inputs/x.bin" "$out/inputs/x.bin"; then
  fail "inputs/x.bin is the config's seed's, not the run's (--seed 7)"
fi

build="$(sed -n 's/^build: cd .* && //p' "$dir/export_7.log")"
[ -n "$build" ] || fail "export printed no build command"
grep -q "^run:   cd .* && ./tiny_mlp" "$dir/export_7.log" || fail "export printed no run command"
grep -q "+ 0.001 \* |expected|" "$out/README.txt" || fail "the check is not the run's measure.rtol: $(cat "$out/README.txt")"
(cd "$out" && eval "$build") || fail "the printed build command failed"

(cd "$out" && ./tiny_mlp) > "$dir/run.log" || fail "the check failed: $(cat "$dir/run.log")"
cat "$dir/run.log"
grep -q ": ok (max abs error" "$dir/run.log" || fail "no output said ok"
grep -q "every output matches the reference" "$dir/run.log" || fail "no summary line"

cp -r "$out/reference" "$out/reference_7"
cp "$dir/export_1/reference/"*.bin "$out/reference/"
status=0
(cd "$out" && ./tiny_mlp) > "$dir/mismatch.log" || status=$?
cat "$dir/mismatch.log"
[ "$status" = 1 ] || fail "another seed's reference gave exit status $status, not 1"
grep -q "MISMATCH in" "$dir/mismatch.log" || fail "the mismatch was not reported"
rm -r "$out/reference"
mv "$out/reference_7" "$out/reference"

rm "$out/inputs/x.bin"
status=0
(cd "$out" && ./tiny_mlp) > "$dir/missing.log" 2>&1 || status=$?
cat "$dir/missing.log"
[ "$status" = 2 ] || fail "a missing input gave exit status $status, not 2"
grep -q "inputs/x.bin: No such file or directory (input x " "$dir/missing.log" || fail "the missing file was not named"
echo "PASS"
