#!/usr/bin/env bash
# `ingot run --rounds N` times its schedules side by side and prints each one's median over the rounds and its paired
# speed-up over the first; `strategy:NAME:KNOB=VALUE` changes knobs of a fixed schedule, and a bad knob is named.
# Usage: run_side_by_side.sh PATH/TO/ingot
set -euo pipefail
ingot="$1"
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
"$ingot" run --workload task:bert_ffn --size small --threads 1 --min-repeat-ms 1 --rounds 3 \
  --schedule strategy:global strategy:global:pack_weights=0 > "$dir/out.txt"
grep -q "^side by side, 3 interleaved rounds" "$dir/out.txt" || { echo "FAIL: no side-by-side table"; cat "$dir/out.txt"; exit 1; }
grep -Eq "^  strategy:global +[0-9.]+ ms$" "$dir/out.txt" || { echo "FAIL: no row for the first"; cat "$dir/out.txt"; exit 1; }
grep -Eq "^  strategy:global:pack_weights=0 +[0-9.]+ ms  [0-9.]+x$" "$dir/out.txt" || {
  echo "FAIL: no paired speed-up for the second"; cat "$dir/out.txt"; exit 1; }
if "$ingot" run --workload task:bert_ffn --size small --schedule strategy:global:pack=0 > /dev/null 2> "$dir/error.txt"; then
  echo "FAIL: an unknown knob was accepted"
  exit 1
fi
grep -q "unknown knob 'pack'" "$dir/error.txt" || { echo "FAIL: unexpected error: $(cat "$dir/error.txt")"; exit 1; }
echo "ok"
