#!/usr/bin/env bash
# `ingot export --schedule` writes the program of a named schedule without a database: for this CPU as C++ that
# builds with the printed command and passes its own check, and with --target sm_90 as CUDA (the GPU's only export
# until GPU candidates are tuned) whose printed build command is nvcc's. A GPU target without --schedule, and --size
# without --schedule, are refused naming the flag.
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

if "$ingot" export --workload mlp --target sm_90 --out "$dir/refused" > "$dir/refused.log" 2>&1; then
  fail "a GPU export without --schedule succeeded"
fi
grep -q "GPU candidates are not tuned yet.*--schedule" "$dir/refused.log" || fail "$(cat "$dir/refused.log")"
if "$ingot" export --workload mlp --size small --out "$dir/refused" > "$dir/size.log" 2>&1; then
  fail "--size without --schedule succeeded"
fi
grep -q -- "--size applies with --schedule" "$dir/size.log" || fail "$(cat "$dir/size.log")"
echo "PASS"
