#!/usr/bin/env bash
# Makes the cost model's data set: builds ingot, then runs every config of configs/costmodel/ (random schedules of
# each task workload under the unfused and the global plan, and the evolutionary search without the model under the
# global plan: 3500 candidates, about 30 minutes on 2 cores for the 3200 before task:efficientnet_expansion) into one
# SQLite database. Measure on an idle machine.
# Usage: scripts/make_costmodel_dataset.sh [DATABASE [SECOND_DATABASE]] (default: costmodel.db in the current
# directory). With a second database every config runs again into it, a second measurement pass: read both with
# `ingot costmodel eval --db DATABASE --db SECOND_DATABASE` (each candidate at its least median, less noisy labels;
# docs/costmodel.md, "Bench"). Running it again resumes: each config skips the candidates it has measured already.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${INGOT_BUILD_DIR:-$root/build}"
# Resolved before the cd below, so that a relative path means the caller's directory, as for any command.
databases=("$(realpath -m "${1:-costmodel.db}")")
if [ $# -ge 2 ]; then databases+=("$(realpath -m "$2")"); fi
"$root/scripts/build.sh"
cd "$root"
for database in "${databases[@]}"; do
  started=$SECONDS
  for config in configs/costmodel/*.yaml; do
    config_started=$SECONDS
    echo "== $config"
    "$build/ingot" tune "$config" --db "$database"
    echo "== $config: $((SECONDS - config_started)) s"
  done
  echo "== the data set is in $database ($(((SECONDS - started) / 60)) minutes)"
  "$build/ingot" db check --db "$database"
done
