#!/usr/bin/env bash
# `ingot tune` stopped by SIGINT keeps every measurement made, releases the rest, prints how to go on and exits 130;
# the same command then resumes, skipping what was measured.
# Usage: tune_stops_on_sigint.sh PATH/TO/ingot
set -uo pipefail
ingot="$1"
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
cat > "$dir/stop.yaml" <<CONFIG
workload: {name: matmul, params: {m: 8, n: 8, k: 8}}
target: {threads: 1}
budget: {trials: 400}
database: $dir/stop.db
measure: {warmup_runs: 0, min_repeat_ms: 1, min_repeats: 1, build_workers: 1}
search: {strategy: random, batch: 1}
CONFIG
"$ingot" tune "$dir/stop.yaml" > "$dir/first.txt" 2>&1 &
pid=$!
for _ in $(seq 1 600); do
  grep -q "(trial " "$dir/first.txt" && break
  sleep 0.1
done
kill -INT "$pid"
wait "$pid"
status=$?
[ "$status" -eq 130 ] || { echo "FAIL: exit status $status, not 130"; cat "$dir/first.txt"; exit 1; }
grep -q "stopped by SIGINT" "$dir/first.txt" || { echo "FAIL: no stop report"; cat "$dir/first.txt"; exit 1; }
measured="$(sed -n 's/^run [0-9]* stopped: \([0-9]*\) measured.*/\1/p' "$dir/first.txt")"
[ -n "$measured" ] && [ "$measured" -ge 1 ] || { echo "FAIL: no measurement kept"; cat "$dir/first.txt"; exit 1; }
"$ingot" tune "$dir/stop.yaml" --trials $((measured + 2)) > "$dir/second.txt" 2>&1 || {
  echo "FAIL: the resumed run failed"
  cat "$dir/second.txt"
  exit 1
}
grep -q "2 measured (0 errors), $measured already measured" "$dir/second.txt" || {
  echo "FAIL: the resumed run did not skip the $measured measured before"
  cat "$dir/second.txt"
  exit 1
}
echo "stopped after $measured measured; resumed"
