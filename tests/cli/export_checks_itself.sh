#!/usr/bin/env bash
# `ingot export` writes a program that checks itself on the values ingot measured with: tuned from an ONNX model
# (whose weights are fixed inputs) with `--seed` overriding the config's seed, the export holds the model's weights
# and the run's random input, checks with the run's measure.rtol, builds with the command it prints, passes its
# check, and fails it naming the output when the reference is another seed's, or naming the file when an input is
# missing. AVX2 code on every machine (tuned and exported with that ISA), so that the exported weight is packed on
# AVX-512 machines too, where their own code's panels span its rows and packing leaves it as it is.
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
target: {threads: 1, isa: avx2}
budget: {trials: 2}
seed: 1
database: $dir/seed_$seed.db
measure: {warmup_runs: 0, min_repeat_ms: 1, min_repeats: 1, build_workers: 2, rtol: 0.001}
CONFIG
  "$ingot" tune "$dir/tiny_$seed.yaml" --seed "$seed" > "$dir/tune_$seed.log"
  "$ingot" export --workload tiny_mlp --db "$dir/seed_$seed.db" --threads 1 --isa avx2 --out "$dir/export_$seed" \
    > "$dir/export_$seed.log"
done
out="$dir/export_7"
cat "$dir/export_7.log"

# w1 [16, 32] is stored as the program reads it: as is, or packed (its columns in blocks, as tiny_mlp.h says; the
# AVX2 target's GEMM panels of two vectors pack it into [2, 16, 16]), so it is unpacked before it is looked for.
python3 - "$model" "$out/inputs/w1.bin" "$out/tiny_mlp.h" <<'CHECK' || fail "inputs/w1.bin is not the model's weight w1"
import re, sys
model, stored, header = (open(path, "rb").read() for path in sys.argv[1:])
packed = re.search(rb"input w1 \[16, 32\] packed: dimension (\d) in blocks of (\d+)", header)
if packed:
    dim, block = int(packed.group(1)), int(packed.group(2))
    if dim != 1:
        sys.exit("w1 packed along dimension %d, where this check expects 1" % dim)
    element = lambda i, j: stored[4 * ((j // block) * 16 * block + i * block + j % block):][:4]
    stored = b"".join(element(i, j) for i in range(16) for j in range(32))
sys.exit(stored not in model)
CHECK
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
