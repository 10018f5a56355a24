#!/usr/bin/env bash
# A fault-injection campaign against the ingot binary: tuning runs killed with SIGKILL and resumed (one of them while
# it creates the database), a corrupt database, a read-only one, a missing one, bad flags, bad configs and bad ONNX
# files. Each case checks what
# ingot promises (docs/database.md, docs/config.md): nothing measured twice or lost, a damaged or read-only file
# left byte for byte as it was, and every refusal a clean exit (1-127) with a message naming the flag, the file or
# the problem, before any database is created.
#
# Usage: scripts/fault_campaign.sh [--quick] [PATH/TO/ingot]   (default: the repository's build/ingot)
# Prints `ok     NAME`, `FAILED NAME: why` (with the start of the offending output) or `skipped NAME (why)` per
# case, then `N passed, M failed, K skipped`; exits 1 when a case failed. --quick (a CTest: seconds on 2 cores)
# kills 2 runs instead of 10 and truncates the ONNX file at 1 place instead of 5.
# Everything happens in a temporary directory, removed on exit: the working directory's ingot.db, the user's files
# and the user's kernel cache are never touched.
set -uo pipefail

quick=0
if [ "${1:-}" = "--quick" ]; then
  quick=1
  shift
fi
repo="$(cd "$(dirname "$0")/.." && pwd)"
binary="${1:-$repo/build/ingot}"
if [ ! -f "$binary" ] || [ ! -x "$binary" ]; then
  echo "usage: $0 [--quick] [PATH/TO/ingot] ('$binary' is not an executable)" >&2
  exit 2
fi
ingot="$(realpath -- "$binary")"

dir="$(mktemp -d)"
cleanup() {
  # The read-only cases leave folders nobody may write into; compilers orphaned by kill -9 may still be writing
  # into the kernel cache for a moment, so a second try follows a short wait.
  chmod -R u+w "$dir" 2> /dev/null
  rm -rf "$dir" 2> /dev/null || { sleep 2; rm -rf "$dir"; }
}
trap cleanup EXIT
trap 'exit 130' INT TERM
# Relative paths ingot defaults to (ingot.db) land in the scratch directory, never in the caller's.
cd "$dir" || exit 1
# A kernel cache of its own: the user's stays as it was, and the first killed runs die in real compiles.
export INGOT_CACHE_DIR="$dir/kernel_cache"

passed=0 failed=0 skipped=0
out="$dir/out.txt"  # what the latest `run` printed, stdout and stderr together
rc=0                # and its exit status
problems=""         # why the current case fails, "" while it passes
evidence=""         # the start of the output that showed its first problem, indented

# run COMMAND...: runs it, keeping its output in $out and its exit status in $rc.
run() {
  "$@" > "$out" 2>&1
  rc=$?
}

# check WHY COMMAND...: the current case fails with WHY unless COMMAND succeeds; the first failure keeps the
# latest output as evidence.
check() {
  local why="$1"
  shift
  "$@" && return 0
  problems="${problems:+$problems; }$why"
  [ -n "$evidence" ] || evidence="$(head -n 6 "$out" | sed 's/^/         | /')"
}

# finish NAME: prints the current case's line and starts the next case afresh.
finish() {
  if [ -z "$problems" ]; then
    echo "ok     $1"
    passed=$((passed + 1))
  else
    echo "FAILED $1: $problems"
    [ -z "$evidence" ] || echo "$evidence"
    failed=$((failed + 1))
  fi
  problems="" evidence=""
}

skip() {
  echo "skipped $1 ($2)"
  skipped=$((skipped + 1))
}

# Predicates for check, on the latest run.
failed_cleanly() { [ "$rc" -gt 0 ] && [ "$rc" -lt 128 ]; }  # 128 and above: killed by a signal (a crash)
succeeded() { [ "$rc" -eq 0 ]; }
says() { grep -Eq -- "$1" "$out"; }
absent() { [ ! -e "$1" ]; }
unchanged() { [ "$(md5sum < "$1")" = "$2" ]; }

# refused NAME PATTERN MUST_NOT_EXIST COMMAND...: COMMAND must fail cleanly, print an error matching PATTERN
# (grep -E) and leave MUST_NOT_EXIST uncreated.
refused() {
  local name="$1" pattern="$2" must_not_exist="$3"
  shift 3
  run "$@"
  check "exit status $rc, not a clean failure (1-127)" failed_cleanly
  check "no message matching '$pattern'" says "$pattern"
  check "created $must_not_exist" absent "$must_not_exist"
  finish "$name"
}

# config FILE DATABASE TRIALS: a tiny MLP whose candidates compile and run in a moment.
config() {
  cat > "$1" << CONFIG
workload: {name: mlp, params: {batch: 4, in: 8, hidden: 16, out: 8}}
target: {threads: 1}
budget: {trials: $3}
database: $2
measure: {warmup_runs: 0, min_repeat_ms: 1, min_repeats: 1, build_workers: 2}
CONFIG
}

# The finished database the corrupt and read-only cases start from, and its config.
finished_config="$dir/finished.yaml"
finished_db="$dir/finished.db"

# killed CONFIG LINE DELAY: starts `ingot tune CONFIG`, waits until it has printed LINE lines, then DELAY seconds
# more, and kills it with SIGKILL; succeeds when the kill landed (the run had not ended by itself). Waiting for
# output rather than for a fixed time puts the kill at the same point of a run on a fast or a busy machine.
killed() {
  local pid deadline=$((SECONDS + 60))
  : > "$out"  # emptied here: the background run's own redirection may come after the first look at it
  "$ingot" tune "$1" > "$out" 2>&1 &
  pid=$!
  while kill -0 "$pid" 2> /dev/null && [ "$(wc -l < "$out")" -lt "$2" ] && [ "$SECONDS" -lt "$deadline" ]; do
    sleep 0.01
  done
  sleep "$3"
  kill -9 "$pid" 2> /dev/null
  wait "$pid" 2> /dev/null
  [ $? -eq 137 ]
}

# Runs killed with SIGKILL at points spread over a run, then one run to the end: every trial of the budget is
# measured exactly once, and the file is sound. A run prints `tuning ...`, `fusion ...` and `computing the
# reference ...` together once the database is open, then `trials 0/N ... (compiling ...)` (line 4), then a line per
# measurement committed. So LINE:DELAY 1:0 kills it while it computes the reference, 4:0.3 while it compiles, 5:0
# right after a commit, while it measures the next candidate, 0:0.04 while it starts and opens the file. Resumed
# runs print a `skipped` line per batch measured before, so the same points fall later into their work. (The first
# kill comes after the database was created: case_kill9_creating_database kills a run in that moment.)
case_kill9_resume() {
  local budget=16 points=(1:0 4:0.3 5:0 3:0 6:0.002 4:0 5:0.01 0:0.04 7:0 5:0.001)
  if [ "$quick" = 1 ]; then budget=6 points=(1:0 5:0); fi
  local cfg="$dir/kill9.yaml" db="$dir/kill9.db" landed=0 point
  config "$cfg" "$db" "$budget"
  for point in "${points[@]}"; do
    if killed "$cfg" "${point%:*}" "${point#*:}"; then landed=$((landed + 1)); fi
  done
  check "only $landed of ${#points[@]} kills landed before the run ended; the case tested less than it says" \
    [ "$landed" -eq "${#points[@]}" ]
  run "$ingot" tune "$cfg"
  check "the run after the kills failed (exit $rc)" succeeded
  check "the run after the kills did not finish" says "^run [0-9]+ done: "
  # history lists every measurement: measured_at workload trial error median_ms min_ms candidate [message].
  run "$ingot" history --db "$db" --limit 0
  check "history failed (exit $rc)" succeeded
  local rows trials candidates expected
  rows="$(tail -n +2 "$out")"
  trials="$(awk '{print $3}' <<< "$rows" | sort -n | tr '\n' ' ')"
  candidates="$(awk '{print $7}' <<< "$rows" | sort -u | grep -c .)"
  expected="$(seq 0 $((budget - 1)) | tr '\n' ' ')"
  check "trials measured: '$trials', expected each of '$expected' once" [ "$trials" = "$expected" ]
  check "$candidates distinct candidates measured, expected $budget" [ "$candidates" -eq "$budget" ]
  run "$ingot" db check --db "$db"
  check "db check failed (exit $rc)" succeeded
  check "db check: integrity not ok" says "^integrity: ok$"
  check "db check: not $budget measurements" says "^measurements: $budget "
  check "db check: claims left in flight" says "^claims in flight: 0$"
  finish "kill9.resume (${#points[@]} kills, $budget trials)"
}

# A first run killed while it creates the database, in the moment SQLite's rollback journal and the file's first
# page both exist (ingot switches a new file to WAL mode through one): the next run must open the file and tune, as
# docs/database.md promises that a SIGKILL at any moment loses at most the measurement in flight. The journal lives
# for a few milliseconds, which polling may miss or the kill come too late for: up to 5 tries, until one leaves the
# journal behind. Should none, the next run is checked all the same, and the case's name says that none did.
case_kill9_creating_database() {
  local cfg="$dir/creating.yaml" db="$dir/creating.db" pid status attempt deadline moment
  config "$cfg" "$db" 2
  for attempt in 1 2 3 4 5; do
    rm -f "$db" "$db"-*
    deadline=$((SECONDS + 60))
    : > "$out"
    "$ingot" tune "$cfg" > "$out" 2>&1 &
    pid=$!
    while kill -0 "$pid" 2> /dev/null && [ ! -s "$out" ] && [ "$SECONDS" -lt "$deadline" ]; do
      if [ -s "$db-journal" ] && [ -s "$db" ]; then break; fi
    done
    kill -9 "$pid" 2> /dev/null
    wait "$pid" 2> /dev/null
    status=$?
    if [ -s "$db-journal" ]; then break; fi
  done
  moment="no try left a journal behind"
  if [ -s "$db-journal" ]; then moment="its journal left behind, try $attempt"; fi
  check "the kill did not land (exit $status)" [ "$status" -eq 137 ]
  run "$ingot" tune "$cfg"
  check "the next run failed (exit $rc)" succeeded
  run "$ingot" db check --db "$db"
  check "db check failed after the next run (exit $rc)" succeeded
  finish "kill9.creating_database ($moment)"
}

# untouched_corrupt NAME DB MD5 COMMAND...: COMMAND refuses the damaged DB, saying it is corrupt and was not
# modified, and DB still has checksum MD5.
untouched_corrupt() {
  local name="$1" db="$2" before="$3"
  shift 3
  run "$@"
  check "exit status $rc, not a clean failure (1-127)" failed_cleanly
  check "no message that '$db' is corrupt" says "ingot database '$db': is corrupt"
  check "no word that it was not modified" says "it was not modified"
  check "the file changed" unchanged "$db" "$before"
  finish "corrupt.$name"
}

# A damaged file is refused by what writes or reads it, named as corrupt and left byte for byte as it was;
# db check lists the damage. One page in the middle gets its first 512 bytes overwritten: a fresh database has no
# free pages, so the page is in use and its damage is seen.
case_corrupt_database() {
  local db="$dir/corrupt.db" page_size middle before
  cp "$finished_db" "$db"
  page_size="$(od -An -tu1 -j16 -N2 "$db" | awk '{print $1 * 256 + $2}')"
  middle=$(($(stat -c %s "$db") / page_size / 2))
  head -c 512 /dev/zero | tr '\0' '\377' | dd of="$db" bs=1 seek=$((middle * page_size)) conv=notrunc status=none
  before="$(md5sum < "$db")"
  untouched_corrupt tune "$db" "$before" "$ingot" tune "$finished_config" --db "$db"
  untouched_corrupt best "$db" "$before" "$ingot" best --config "$finished_config" --db "$db"
  untouched_corrupt history "$db" "$before" "$ingot" history --db "$db"
  run "$ingot" db check --db "$db"
  check "exit status $rc, not a clean failure (1-127)" failed_cleanly
  check "no 'PROBLEMS FOUND'" says "^integrity: PROBLEMS FOUND$"
  check "no integrity_check finding" says "^  integrity_check: "
  check "the file changed" unchanged "$db" "$before"
  finish "corrupt.db_check"
}

# read_only NAME DIRECTORY_MODE: a copy of the finished database made read-only (mode 444) in a folder of the
# given mode: best, history and db check read it; tune fails cleanly, naming it, and leaves it as it was.
read_only() {
  local name="$1" mode="$2" folder="$dir/$1" db before
  db="$folder/finished.db"
  mkdir "$folder"
  cp "$finished_db" "$db"
  chmod 444 "$db"
  chmod "$mode" "$folder"
  before="$(md5sum < "$db")"
  run "$ingot" best --config "$finished_config" --db "$db" --json
  check "best failed (exit $rc)" succeeded
  run "$ingot" history --db "$db" --limit 0
  check "history failed (exit $rc)" succeeded
  run "$ingot" db check --db "$db"
  check "db check failed (exit $rc)" succeeded
  run "$ingot" tune "$finished_config" --db "$db" --trials 8
  check "tune: exit status $rc, not a clean failure (1-127)" failed_cleanly
  check "tune: no message naming '$db' as read-only" says "'$db'.*(read-?only|[Pp]ermission)"
  check "the file changed" unchanged "$db" "$before"
  finish "$name"
}

case_read_only() {
  # Permissions do not stop root: faking the case would prove nothing.
  if [ "$(id -u)" = 0 ]; then
    skip readonly.file "running as root: permissions do not apply"
    skip readonly.folder "running as root: permissions do not apply"
    return
  fi
  read_only readonly.file 755
  read_only readonly.folder 555
}

# A database that is not there is an error naming it, and reading it does not create it.
case_missing_database() {
  local db="$dir/missing/none.db"
  mkdir "$dir/missing"
  local pattern="ingot database '$db': no database at this path"
  refused missing_db.best "$pattern" "$db" "$ingot" best --db "$db"
  refused missing_db.history "$pattern" "$db" "$ingot" history --db "$db"
  refused missing_db.db_check "$pattern" "$db" "$ingot" db check --db "$db"
  refused missing_db.export "$pattern" "$db" "$ingot" export --db "$db" --workload mlp --out "$dir/missing/out"
}

# Bad flags are refused by name before the config is read or a database created.
case_bad_flags() {
  local cfg="$dir/flags.yaml" db="$dir/flags.db"
  config "$cfg" "$db" 4
  mkdir "$dir/folder.yaml"
  refused flags.trials_negative "--trials: .*-1" "$db" "$ingot" tune "$cfg" --trials -1
  refused flags.trials_not_a_number "--trials: .*'abc'" "$db" "$ingot" tune "$cfg" --trials abc
  refused flags.minutes_nan "--minutes: .*'nan'" "$db" "$ingot" tune "$cfg" --minutes nan
  refused flags.seed_above_2^64 "--seed: .*18446744073709551616" "$db" \
    "$ingot" tune "$cfg" --seed 18446744073709551616
  refused flags.history_limit_negative "--limit: .*-5" "$db" "$ingot" history --limit -5 --db "$db"
  refused flags.unknown_command "unknown command 'tnue'" "$dir/ingot.db" "$ingot" tnue "$cfg"
  refused flags.config_missing "$dir/none.yaml.*(No such file|cannot open)" "$dir/ingot.db" \
    "$ingot" tune "$dir/none.yaml"
  refused flags.config_is_a_folder "$dir/folder.yaml.*directory" "$dir/ingot.db" "$ingot" tune "$dir/folder.yaml"
}

# A config with a mistake is refused at its file:line:col, naming the key, before a database is created.
case_bad_configs() {
  local db="$dir/configs.db"
  printf 'workload: {name: mlp}\nbudget: {trials: 2, trails: 3}\ndatabase: %s\n' "$db" > "$dir/unknown_key.yaml"
  printf 'workload: {name: mlp}\ntarget: {threads: four}\nbudget: {trials: 2}\ndatabase: %s\n' "$db" \
    > "$dir/wrong_type.yaml"
  printf 'database: %s\nworkload: {name: mlp\nbudget: {trials: 2}\n' "$db" > "$dir/invalid.yaml"
  refused config.unknown_key "unknown_key\.yaml:2:[0-9]+: budget\.trails: unknown key" "$db" \
    "$ingot" tune "$dir/unknown_key.yaml"
  refused config.wrong_type "wrong_type\.yaml:2:[0-9]+: target\.threads: .*'four'" "$db" \
    "$ingot" tune "$dir/wrong_type.yaml"
  refused config.invalid_yaml "invalid\.yaml:[0-9]+:[0-9]+: invalid YAML" "$db" "$ingot" tune "$dir/invalid.yaml"
}

# bad_onnx NAME FILE: FILE is refused by `ingot run --workload FILE` and by a config's workload.onnx, with a
# message naming it that says what is wrong with it (empty, or not an ONNX model), and no crash.
bad_onnx() {
  local name="$1" file="$2" db="$dir/onnx.db"
  local what="$file.*(empty|not an ONNX model)"
  printf 'workload: {onnx: %s}\nbudget: {trials: 2}\ndatabase: %s\n' "$file" "$db" > "$dir/onnx.yaml"
  refused "onnx.${name}_run" "$what" "$db" "$ingot" run --workload "$file"
  refused "onnx.${name}_config" "onnx\.yaml:1:[0-9]+: workload\.onnx: .*$what" "$db" "$ingot" tune "$dir/onnx.yaml"
}

case_bad_onnx() {
  local model="$repo/configs/tiny_mlp.onnx" size cut
  : > "$dir/empty.onnx"
  bad_onnx empty "$dir/empty.onnx"
  size="$(stat -c %s "$model")"
  local cuts=($((size / 2)))
  [ "$quick" = 1 ] || cuts=(16 $((size / 4)) $((size / 2)) $((size * 3 / 4)) $((size - 1)))
  for cut in "${cuts[@]}"; do
    head -c "$cut" "$model" > "$dir/cut_$cut.onnx"
    bad_onnx "truncated_to_$cut" "$dir/cut_$cut.onnx"
  done
}

config "$finished_config" "$finished_db" 4
run "$ingot" tune "$finished_config"
if [ "$rc" -ne 0 ]; then
  echo "FAILED setup: could not tune the database the other cases start from (exit $rc)"
  sed 's/^/         | /' "$out" | tail -n 6
  exit 1
fi

case_kill9_resume
case_kill9_creating_database
case_corrupt_database
case_read_only
case_missing_database
case_bad_flags
case_bad_configs
case_bad_onnx

echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
