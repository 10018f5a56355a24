#!/usr/bin/env bash
# `ingot export --schedule` writes the program of a named schedule without a database: for this CPU as C++ that
# builds with the printed command and passes its own check, and with --target sm_90 as CUDA whose printed build
# command is nvcc's. Without --schedule a GPU export takes the best tuned on a GPU of that architecture: `ingot tune`
# of an sm_90 config tunes on this machine's GPU, or is refused with the reason and creates no database where none is
# usable; a database with no GPU measurement says so. --size without --schedule is refused naming the flag.
# Usage: export_schedule.sh PATH/TO/ingot
set -euo pipefail
ingot="$1"
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$ingot" export --workload mlp --size small --schedule strategy:global --db "$dir/none.db" --out "$dir/cpu" \
  > "$dir/cpu.log" 2>&1 || fail "CPU export: $(cat "$dir/cpu.log")"
[ ! -e "$dir/none.db" ] || fail "an export of a named schedule created a database"
build="$(sed -n 's/^build: cd .* && //p' "$dir/cpu.log")"
(cd "$dir/cpu" && eval "$build") > "$dir/build.log" 2>&1 || fail "CPU build: $(cat "$dir/build.log")"
(cd "$dir/cpu" && ./mlp) > "$dir/run.log" 2>&1 || fail "CPU check: $(cat "$dir/run.log")"
grep -q "every output matches the reference" "$dir/run.log" || fail "no summary: $(cat "$dir/run.log")"

"$ingot" export --workload mlp --size small --schedule strategy:global --target sm_90 --out "$dir/gpu" \
  > "$dir/gpu.log" 2>&1 || fail "CUDA export: $(cat "$dir/gpu.log")"
for file in mlp.cu mlp.h mlp_main.cpp README.txt inputs/X.bin reference/Y.bin; do
  [ -s "$dir/gpu/$file" ] || fail "CUDA export wrote no $file"
done
grep -q "^build: cd .* && nvcc -O3 -arch=sm_90 mlp.cu mlp_main.cpp -o mlp$" "$dir/gpu.log" ||
  fail "no nvcc build command: $(cat "$dir/gpu.log")"
grep -q "cudaLaunchCooperativeKernel" "$dir/gpu/mlp.cu" || fail "the global kernel is not launched cooperatively"

cat > "$dir/gpu.yaml" <<CONFIG
workload: {name: mlp, size: small}
target: {kind: sm_90}
budget: {trials: 2}
database: $dir/gpu.db
measure: {warmup_runs: 0, min_repeat_ms: 1, min_repeats: 1}
CONFIG
if "$ingot" tune "$dir/gpu.yaml" > "$dir/gpu_tune.log" 2>&1; then
  # A GPU is here: the best it measured is exported as CUDA.
  "$ingot" export --workload mlp --db "$dir/gpu.db" --target sm_90 --out "$dir/tuned" > "$dir/tuned.log" 2>&1 ||
    fail "export of the GPU's best: $(cat "$dir/tuned.log")"
  grep -q "nvcc -O3 -arch=sm_90" "$dir/tuned.log" || fail "no nvcc build command: $(cat "$dir/tuned.log")"
else
  grep -q "target.kind: sm_90 candidates are measured on this machine's GPU, and none is usable: " \
    "$dir/gpu_tune.log" || fail "$(cat "$dir/gpu_tune.log")"
  [ ! -e "$dir/gpu.db" ] || fail "a refused GPU tune created its database"
  sed -e "s|kind: sm_90|threads: 1|" -e "s|gpu.db|cpu.db|" "$dir/gpu.yaml" > "$dir/cpu.yaml"
  "$ingot" tune "$dir/cpu.yaml" > "$dir/cpu_tune.log" 2>&1 || fail "CPU tune: $(cat "$dir/cpu_tune.log")"
  if "$ingot" export --workload mlp --db "$dir/cpu.db" --target sm_90 --out "$dir/refused" \
    > "$dir/refused.log" 2>&1; then
    fail "a GPU export without a GPU measurement succeeded"
  fi
  grep -q "no correct measurement of 'mlp' on target 'gpu:(no GPU of sm_90 measured it):sm_90'" \
    "$dir/refused.log" || fail "$(cat "$dir/refused.log")"
fi
if "$ingot" export --workload mlp --size small --out "$dir/refused" > "$dir/size.log" 2>&1; then
  fail "--size without --schedule succeeded"
fi
grep -q -- "--size applies with --schedule" "$dir/size.log" || fail "$(cat "$dir/size.log")"
echo "PASS"
