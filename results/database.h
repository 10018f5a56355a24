// The tuning database: one SQLite file (WAL mode) holding tuning runs, workloads, candidates, every
// measurement as it completes, claims on candidates in flight (so a killed run resumes without measuring
// anything twice and several processes can tune into one file), learned cost models, which workloads are the
// tasks of a whole model, and side-by-side timings of a run's best candidates. docs/database.md.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "results/database_error.h"
#include "results/error_class.h"
#include "results/run_statistics.h"

namespace ingot {

// Timestamps everywhere are UTC ISO-8601 with milliseconds, e.g. "2024-05-01T12:34:56.789Z", so they sort
// as text. Hashes are 16 lowercase hex digits (see hash_hex in ir/hash.h).

struct RunInfo {
  int64_t id = 0;           // set by begin_run
  std::string config_text;  // the whole config file, as read
  std::string config_path;
  std::string started_at;  // set by begin_run
  std::string ended_at;    // "" while the run goes on, or when it was killed
  std::string machine;     // e.g. CPU model, cores, OS
  std::string compiler;    // e.g. compiler version and flags
  uint64_t seed = 0;       // stored as the SQL integer with the same 64 bits (large seeds read as negative)
};

struct WorkloadRecord {
  std::string hash;  // Program::structural_hash()
  std::string name;
  std::string program_text;  // Program::to_string()
  std::string created_at;    // set when first added
};

struct CandidateRecord {
  std::string hash;           // identifies program + schedule + target; the caller decides what it covers (the
                              // tuner's: Candidate::hash_hex, tuner/candidate.h)
  std::string workload_hash;  // must already be added
  std::string target;         // short target key, e.g. "cpu"; what claims and has_measurement match on
  std::string schedule_json;  // Schedule::to_json(), canonical and replayable
  std::string created_at;     // set when first added
};

struct MeasurementRecord {
  int64_t id = 0;  // set by add_measurement
  std::string candidate_hash;
  int64_t run_id = 0;
  int64_t trial_index = 0;         // position in the run's candidate sequence
  std::string target_description;  // the full target: machine, threads, compiler flags
  ErrorClass error_class = ErrorClass::kNone;
  std::string error_message;
  std::vector<double> run_seconds;  // every timed run, in order; may be empty for an error
  // Derived by add_measurement from run_seconds (columns min_s, median_s, mean_s, stddev_s); nullopt when
  // run_seconds is empty. Values given to add_measurement are ignored.
  std::optional<RunStatistics> statistics;
  std::optional<double> compile_seconds;  // nullopt when nothing was compiled
  std::string measured_at;                // set by add_measurement
};

// A measurement with its candidate and the workload's name: a row of the `history` view.
struct MeasuredCandidate {
  std::string workload_name;
  CandidateRecord candidate;
  MeasurementRecord measurement;
};

// A learned cost model as stored: the model itself and what it was trained with, so a tuner can load the
// newest one for its target and tell whether it still fits (feature set, sample count, held-out metrics).
struct CostModelRecord {
  int64_t id = 0;                   // set by add_cost_model; increases with every model added, never reused
  std::string target;               // the target key measurements use, e.g. "cpu:AMD EPYC:threads=2"; not empty
  int feature_set_version = 0;      // the version of the features the model reads; not negative
  int64_t sample_count = 0;         // measurements it was trained on; not negative
  std::string params_json;          // the training parameters, as JSON text (as given; may be empty)
  std::string model_json;           // the model (XGBoost's JSON model); not empty
  std::string metrics_json = "{}";  // held-out metrics as a JSON object; "{}" when none were taken
  std::string trained_on;           // what it was trained on, e.g. the workloads' names or "all"
  std::string created_at;           // set by add_cost_model
};

// One task of a whole model under one partition plan: a group of the model's operators, tuned as a workload of
// its own. A row of the `model_tasks` table.
struct ModelTaskRecord {
  std::string model_workload_hash;  // must already be added (add_workload)
  std::string plan_hash;            // the partition plan the tasks come from: a model's tasks change with its plan
  std::string plan_strategy;        // e.g. "global"; for people reading the table
  int64_t task_index = 0;           // position among the plan's tasks; not negative
  std::string task_workload_hash;   // must already be added
  int64_t weight = 1;               // how many times the task occurs in the model; at least 1
  std::string occurrences_json;     // a JSON array, one entry per occurrence, in the caller's format; stored as given
  std::string created_at;           // set when first added
};

// One timed round of one schedule in a side-by-side comparison: the reference schedule (the fixed strategy
// schedule) and the best candidates of a run timed again in interleaved rounds in one process, so that all of them
// meet the same periods of the machine's speed. Not a measurement: best(), history() and resume never read it.
struct SideBySideRecord {
  int64_t id = 0;              // set by add_side_by_side
  std::string candidate_hash;  // must already be added (add_candidate)
  int64_t run_id = 0;          // the run that compared; must exist
  bool is_reference = false;   // the schedule the others are compared with
  int64_t round = 0;           // 0, 1, ...: the contenders of one round were timed one after another
  std::string target_description;
  ErrorClass error_class = ErrorClass::kNone;
  std::string error_message;
  std::vector<double> run_seconds;          // every timed run of the round, in order; empty for an error
  std::optional<RunStatistics> statistics;  // derived from run_seconds by add_side_by_side, as add_measurement does
  std::string measured_at;                  // set by add_side_by_side
};

// A side-by-side round with its candidate and the workload's name: a row of the `side_by_side_history` view.
struct SideBySideRow {
  std::string workload_name;
  CandidateRecord candidate;
  SideBySideRecord record;
};

// What `ingot db check` prints.
struct IntegrityReport {
  std::string path;
  bool ok = false;  // integrity_check said "ok" and no foreign key is broken
  int schema_version = 0;
  std::string journal_mode;
  std::vector<std::string> problems;  // integrity_check and foreign_key_check findings, one per line
  // A table that a later schema version added counts 0 in an older file (check_file does not migrate it).
  int64_t runs = 0, unfinished_runs = 0, workloads = 0, candidates = 0, measurements = 0, claims = 0, cost_models = 0,
          model_tasks = 0, side_by_side = 0;
  std::map<ErrorClass, int64_t> measurements_by_class;

  std::string to_text() const;
};

// Every method is one transaction, committed before it returns, and may be called from several threads (a
// Database serializes them). Several Database objects, in one process or many, may use one file at once:
// writers wait for each other up to 10 s (busy_timeout). Every failure throws DatabaseError naming the file.
class Database {
 public:
  // Opens the database at path, creating the file and schema when it does not exist (or is empty). An
  // existing file must be an ingot database: a file that is not SQLite, an SQLite database of another
  // application, or one of a newer schema version is refused with a DatabaseError, and left byte for byte
  // as it was. An older ingot schema is migrated forward in one transaction.
  static Database open(const std::string& path);
  // A file SQLite's quick_check finds damaged is refused too ("is corrupt"), before anything is written to it.
  // open, for commands that only read (best, history, db check, export): a missing file is a DatabaseError
  // ("no database at PATH"), and nothing is created.
  static Database open_existing(const std::string& path);

  Database(Database&&) noexcept;
  Database& operator=(Database&&) noexcept;
  ~Database();

  const std::string& path() const;

  // Records a new run (started_at = now) and returns its id; fields id, started_at, ended_at are ignored.
  int64_t begin_run(const RunInfo& info);
  // Sets ended_at = now. Throws if there is no such run.
  void end_run(int64_t run_id);
  std::optional<RunInfo> run(int64_t run_id) const;

  // Idempotent: true when the record was new, false when an equal one is stored (its first name and
  // created_at are kept). Throws when the hash is malformed, or is stored with a different program text
  // (workload) or a different workload, target or schedule (candidate): a hash collision or a caller bug,
  // never silently merged. add_candidate throws when its workload was not added.
  bool add_workload(const WorkloadRecord& workload);
  bool add_candidate(const CandidateRecord& candidate);

  // Stores one measurement with the statistics of its run times and returns its id; committed (durable)
  // when it returns. Releases this process's claim on the candidate in the same transaction. Throws when
  // the candidate or run is unknown, or a run time or compile time is negative or not finite.
  int64_t add_measurement(const MeasurementRecord& measurement);

  // True when the candidate has a measurement (any error class) for this target in ANY run: resume and
  // concurrent tuners skip it.
  bool has_measurement(const std::string& candidate_hash, const std::string& target) const;

  // The first measurement's outcome of a candidate on a target: its error class and, for a correct one, its median;
  // nullopt when it has none. A resumed search relearns what it was told before from these.
  struct StoredOutcome {
    ErrorClass error_class = ErrorClass::kNone;
    std::optional<double> median_seconds;
  };
  std::optional<StoredOutcome> first_outcome(const std::string& candidate_hash, const std::string& target) const;

  // Atomically (BEGIN IMMEDIATE) claims a candidate for measurement by this process. False when it is
  // measured already, or claimed by a process that still runs (see is_running in process_identity.h: same
  // host, pid alive and started when the claim says). A claim whose holder is gone (killed, or on another
  // host) is taken over. A process's second claim of the same candidate is false too. With retry_failed only a
  // correct measurement counts as measured: a candidate that failed before is claimed again (`tune --retry-errors`).
  bool claim(const std::string& candidate_hash, const std::string& target, int64_t run_id, bool retry_failed = false);
  // Removes this process's claim; true when there was one. add_measurement releases it already.
  bool release_claim(const std::string& candidate_hash, const std::string& target);

  // The fastest correct measurement (least median_s; the earliest on a tie) of a workload on a target, from
  // the best_per_workload_target view. workload is a hash or a name; a name shared by several workloads
  // throws, listing their hashes.
  std::optional<MeasuredCandidate> best(const std::string& workload, const std::string& target) const;
  // The best of every workload measured correctly on the target, by workload name then hash.
  std::vector<MeasuredCandidate> best_of_every_workload(const std::string& target) const;

  // Measurements in the order they were made (measured_at, then id). workload ("" = all) is a hash or a
  // name (all workloads of that name); limit > 0 keeps only the latest `limit`, still oldest first.
  std::vector<MeasuredCandidate> history(const std::string& workload = "", int64_t limit = 0) const;

  // Measurements per error class, every class present (0 when none); workload as for history.
  std::map<ErrorClass, int64_t> error_counts(const std::string& workload = "") const;

  // Every workload, ordered by name then hash.
  std::vector<WorkloadRecord> list_workloads() const;
  // The candidates whose hash starts with prefix (as `ingot best` and `history` print them), at most `limit`,
  // in hash order: one when the prefix names one.
  std::vector<CandidateRecord> candidates_with_prefix(const std::string& prefix, int64_t limit = 2) const;

  // Idempotent as add_workload: true when new, false when an equal record is stored (its created_at is kept).
  // Throws when a record with the same (model, plan, index) but other content is stored (the plan hash should
  // have told the plans apart), when a hash is malformed, either workload was not added, the weight is below 1 or
  // the task index is negative.
  bool add_model_task(const ModelTaskRecord& task);
  // The tasks of a model (a workload hash or name, as best() takes it: a name shared by several workloads throws)
  // under one plan (plan_hash; "" = every plan), ordered by plan_hash, task_index.
  std::vector<ModelTaskRecord> model_tasks(const std::string& model_workload, const std::string& plan_hash = "") const;

  // Stores a cost model and returns its id; id and created_at are set here, the given ones ignored. Throws when
  // the target, model_json or metrics_json is empty (metrics are "{}" when there are none), or sample_count or
  // feature_set_version is negative. The JSON texts are stored as given, unparsed.
  int64_t add_cost_model(const CostModelRecord& model);
  // The newest cost model (largest id) of a target, whatever its feature-set version: the caller decides what
  // to do with a model of another version (retrain, or fall back to no model).
  std::optional<CostModelRecord> latest_cost_model(const std::string& target) const;
  // Every cost model ("" = of every target) or one target's, oldest first, model_json included.
  std::vector<CostModelRecord> cost_models(const std::string& target = "") const;

  // Adds one round of one schedule; returns its id. Throws DatabaseError for an unknown candidate or run, a
  // negative round, or an error_class of kNone with empty run_seconds (a correct round was timed at least once).
  // As add_measurement it refuses a run time that is negative or not finite, and touches no claim.
  int64_t add_side_by_side(const SideBySideRecord& record);
  // The newest comparison of a workload (its hash, or a name only one workload has, as best() takes it) on a target:
  // every row of the highest run id that compared it, in (round, id) order; empty when it was never compared. With
  // `including`, the newest comparison that timed every one of those candidates (their hashes).
  std::vector<SideBySideRow> latest_side_by_side(const std::string& workload, const std::string& target,
                                                 const std::vector<std::string>& including = {}) const;
  // Every comparison of a workload on a target that timed all of `including`, oldest first: their rows in (run, round,
  // id) order; empty when there is none.
  std::vector<SideBySideRow> side_by_side_comparisons(const std::string& workload, const std::string& target,
                                                      const std::vector<std::string>& including = {}) const;

  // PRAGMA integrity_check and foreign_key_check, schema version, journal mode and row counts. Reports
  // problems rather than throwing; throws only when the file cannot be read at all.
  IntegrityReport check() const;
  // check() of the file at path without opening it as open does: read only, so a corrupt file (which open refuses)
  // is reported, each check that cannot read it a problem naming the corruption. Throws DatabaseError only for a
  // missing file or one that is not SQLite at all.
  static IntegrityReport check_file(const std::string& path);

 private:
  struct Impl;
  explicit Database(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace ingot
