#!/usr/bin/env bash
# The main job: builds ingot, then runs a short real tuning run (configs/quickstart.yaml: the CPU target,
# results in the SQLite file ingot.db) and prints the best schedule found. Running it again continues the
# same run where it stopped, measuring nothing twice.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${INGOT_BUILD_DIR:-$root/build}"
"$root/scripts/build.sh"
cd "$root"
"$build/ingot" tune configs/quickstart.yaml
# The best of exactly the quickstart's workload, whatever else was tuned into ingot.db under the name mlp.
"$build/ingot" best --config configs/quickstart.yaml
