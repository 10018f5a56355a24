#!/usr/bin/env bash
# The checks that need an NVIDIA GPU, which CI's machines do not have: the CUDA tests that skip without one (the GPU
# runner and GPU tuning among them), then
# each small model's `global` and `unfused` programs exported as CUDA (`ingot export --target sm_NN`), built with
# the nvcc command their header gives and checked by their own main, then each model's programs under the four
# fusion strategies run on the GPU and compared with the interpreter (`ingot run --gpu`). Run it on a machine with a
# GPU, a driver and the CUDA toolkit ingot was built with (scripts/gpu_bundle.sh packs a build for such a machine).
# Usage: scripts/gpu_check.sh [BUILD_DIR] [OUT_DIR]; prints a tally and exits non-zero when a check failed.
# Time on an H200 (2026-11-28): the CUDA tests 6 s, the 14 small exports about 2 min, the strategy tests 6.5 min (NVRTC
# compiles the small Swin's unfused kernels one by one), `ingot run --gpu` of the small models several minutes more.
set -uo pipefail
build="${1:-build}"
out="${2:-gpu-check}"
mkdir -p "$out"
failed=0
passed=0

check() {  # check NAME TIMEOUT_S COMMAND...: runs the command, its output into OUT/NAME.log
  local name="$1" limit="$2"
  shift 2
  local start=$SECONDS
  timeout "$limit" "$@" >"$out/$name.log" 2>&1
  local rc=$?
  if [ "$rc" -eq 0 ]; then
    passed=$((passed + 1))
    echo "ok     $name ($((SECONDS - start)) s)"
  else
    failed=$((failed + 1))
    echo "FAILED $name ($((SECONDS - start)) s, exit $rc): see $out/$name.log"
    tail -n 5 "$out/$name.log" | sed 's/^/    /'
  fi
}

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | sed 's/^/gpu: /'
check cuda_tests 600 "$build/runtime_tests" --gtest_filter='Cuda*:GpuRunner*:Builder.Gpu*'
# Tuning on the GPU: the small mlp tuned by both searches, then `ingot tune` of an sm_NN config and its export.
check gpu_tuning_tests 600 "$build/tuner_tests" --gtest_filter='*Gpu*'
check gpu_tune_and_export 600 bash tests/cli/export_schedule.sh "$build/ingot"
# Exports: written by ingot, built by nvcc alone, run and checked against the interpreter's reference by their main.
arch="sm_$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n 1 | tr -d '. ')"
export_and_run() {  # export_and_run INGOT MODEL SIZE STRATEGY ARCH DIR
  "$1" export --workload "$2" --size "$3" --schedule "strategy:$4" --target "$5" --out "$6" || return
  local build
  build="$(cd "$6" && sed -n "s|^// Build: ||p" "$2.h")"
  (cd "$6" && eval "$build") && (cd "$6" && "./$2" --repeat 20)
}
export -f export_and_run
PATH="$PATH:${CUDA_HOME:-/usr/local/cuda}/bin"
for model in mlp mmoe lstm bert efficientnet resnext swin; do
  for strategy in global unfused; do
    check "export-$model-small-$strategy" 600 bash -c 'export_and_run "$@"' _ "$build/ingot" "$model" small \
      "$strategy" "$arch" "$out/export-$model-small-$strategy"
    grep -E "median|every output|MISMATCH|differ" "$out/export-$model-small-$strategy.log" | sed 's/^/    /'
  done
done
check nvrtc_strategy_tests 600 "$build/space_tests" --gtest_filter='*Gpu*:*Nvrtc*'
grep -h "SKIPPED\|PASSED\|FAILED  " "$out/cuda_tests.log" "$out/nvrtc_strategy_tests.log" | sed 's/^/    /'
strategies=(strategy:unfused strategy:rules strategy:subgraph strategy:global)
for model in mlp mmoe lstm bert efficientnet resnext swin; do
  check "$model-small" 600 "$build/ingot" run --gpu --workload "$model" --size small --min-repeat-ms 20 \
    --schedule "${strategies[@]}"
  grep -E "correct|WRONG" "$out/$model-small.log" | sed 's/^/    /'
done
for model in ${INGOT_GPU_CHECK_PAPER_MODELS:-}; do  # paper sizes, where time allows (the interpreter is slow)
  check "export-$model-paper-global" 600 bash -c 'export_and_run "$@"' _ "$build/ingot" "$model" default global \
    "$arch" "$out/export-$model-paper-global"
  grep -E "median|every output|MISMATCH|differ" "$out/export-$model-paper-global.log" | sed 's/^/    /'
  check "$model-paper" 600 "$build/ingot" run --gpu --workload "$model" --min-repeat-ms 50 --schedule "${strategies[@]}"
  grep -E "correct|WRONG" "$out/$model-paper.log" | sed 's/^/    /'
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
