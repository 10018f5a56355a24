#!/usr/bin/env bash
# A measured schedule replays in `ingot run` and `ingot lower`: by a prefix of its candidate hash
# (`--schedule db:HASH --db FILE`) and from `ingot best --json`'s answer saved to a file. A candidate of another
# workload, an unknown prefix and a missing database are refused with messages that say so, and nothing is created.
# Usage: replay_measured_schedule.sh PATH/TO/ingot
set -euo pipefail
ingot="$1"
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
size="batch=4,in=8,hidden=16,out=8"
cat > "$dir/mlp.yaml" <<CONFIG
workload: {name: mlp, params: {batch: 4, in: 8, hidden: 16, out: 8}}
target: {threads: 1}
budget: {trials: 3}
database: $dir/x.db
measure: {warmup_runs: 0, min_repeat_ms: 1, min_repeats: 1, build_workers: 2}
CONFIG
"$ingot" tune "$dir/mlp.yaml" > /dev/null
"$ingot" best --config "$dir/mlp.yaml" --json > "$dir/best.json"
hash="$(sed -n 's/^  "candidate": "\([0-9a-f]*\)".*/\1/p' "$dir/best.json")"
[ -n "$hash" ] || fail "no candidate in best --json: $(cat "$dir/best.json")"

"$ingot" run --workload mlp --size "$size" --schedule "db:${hash:0:8}" "$dir/best.json" --db "$dir/x.db" \
  --min-repeat-ms 1 > "$dir/run.txt" 2>&1 || fail "run: $(cat "$dir/run.txt")"
grep -q "^db:${hash:0:8} .*correct" "$dir/run.txt" || fail "db:HASH did not run: $(cat "$dir/run.txt")"
grep -q "best.json .*correct" "$dir/run.txt" || fail "best --json's file did not run: $(cat "$dir/run.txt")"

# The replayed schedule is the stored one, decision for decision.
"$ingot" lower --workload mlp --size "$size" --schedule "db:$hash" --db "$dir/x.db" --emit schedule > "$dir/db.json"
"$ingot" lower --workload mlp --size "$size" --schedule "$dir/best.json" --emit schedule > "$dir/file.json"
cmp -s "$dir/db.json" "$dir/file.json" || fail "db:HASH and best's file give different schedules"
grep -q '"decisions"' "$dir/db.json" || fail "no schedule printed: $(cat "$dir/db.json")"

refused() {  # refused WHAT EXPECTED-TEXT COMMAND...
  local what="$1" expected="$2"
  shift 2
  if "$@" > "$dir/out.txt" 2>&1; then fail "$what was accepted"; fi
  grep -q "$expected" "$dir/out.txt" || fail "$what: unexpected message: $(cat "$dir/out.txt")"
}
refused "another workload's candidate" "was measured for another workload" \
  "$ingot" run --workload mlp --size "batch=4,in=8,hidden=16,out=9" --schedule "db:$hash" --db "$dir/x.db"
refused "an unknown prefix" "no candidate in .* has a hash starting with 'zzzz'" \
  "$ingot" lower --workload mlp --size "$size" --schedule db:zzzz --db "$dir/x.db"
refused "a missing database" "no database at this path" \
  "$ingot" lower --workload mlp --size "$size" --schedule "db:$hash" --db "$dir/none.db"
[ ! -e "$dir/none.db" ] || fail "a missing database was created"
echo "ok"
