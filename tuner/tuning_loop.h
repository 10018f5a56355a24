// The tuning loop: a search strategy (tuner/search_strategy.h) proposes schedules for one program, batch by batch;
// each becomes a candidate (tuner/candidate.h) of the target's key: this CPU's, or this machine's GPU's. Candidates
// are built in parallel (runtime/builder.h), measured each alone in a child process against the interpreter's outputs
// (runtime/runner.h),
// every measurement committed to the database as it completes (results/database.h), and the batch's results told
// to the strategy. Running it again with the same options, an equally seeded strategy and the same database
// continues where it stopped: measured candidates are skipped, and claims keep concurrent tuners apart.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>

#include "interp/interpreter.h"
#include "ir/program.h"
#include "results/database.h"
#include "runtime/builder.h"
#include "runtime/runner.h"
#include "tuner/search_strategy.h"
#include "tuner/side_by_side_comparison.h"

namespace ingot {

struct TuneOptions {
  std::string database_path = "ingot.db";
  int64_t trials = 0;        // candidates of the sequence to have measured (skipped ones count); 0 = no limit
  double minutes = 0;        // stop starting new candidates after this long; 0 = no limit (one of the two is needed)
  uint64_t seed = 1;         // fixes the random inputs; recorded with the run (the strategy's seed fixes candidates)
  InputRanges input_ranges;  // of the random inputs (the workload's, see WorkloadInfo::input_ranges)
  TensorMap fixed_inputs;    // placeholder values used instead of random ones, e.g. an ONNX model's weights
  // The interpreter's outputs for these inputs when the caller has them already (a bench tuning one program in
  // many short calls), their rounding noise in runner.rounding_noise; empty: both computed by each call
  // (interp/rounding_noise.h).
  TensorMap expected_outputs;
  int batch_size = 0;      // candidates built together before they are measured; 0 = 2 per build worker
  int threads = 0;         // OpenMP threads of the measured kernels (RunnerOptions::threads); part of the target
  std::string target_isa;  // the ISA the code is written for where it is not this CPU's own; part of the target
  std::string toolchain;   // toolchain_key of a config's own compiler or flags ("" for the default); part of the target
  // Measure on this machine's GPU (RunnerOptions::gpu, BuilderOptions::gpu): the target key names the device
  // (gpu_target_key); threads, target_isa, toolchain and the compiler options do not apply.
  bool gpu = false;
  BuilderOptions builder;
  RunnerOptions runner;
  std::string config_text, config_path;  // recorded with the run
  // Set (by a signal handler, `ingot tune` on SIGINT and SIGTERM) to stop cleanly: no new batch starts, the
  // measurement in flight finishes and is recorded, and the batch's candidates not measured yet are released
  // unrecorded (a compile the signal killed too is not the candidate's fault) for a later run.
  const std::atomic<bool>* stop = nullptr;
  // Measure again the candidates whose stored measurements all failed (a compile error, a timeout, a wrong answer:
  // after a fix to the toolchain, the config or ingot); each new measurement is added next to the old ones.
  bool retry_errors = false;
  // At the end of a run that was not stopped: the schedule the search started from (its reference_schedule) and
  // this many of the best candidates measured on the target are built again and timed side by side in
  // side_by_side_rounds interleaved rounds (tuner/side_by_side_comparison.h); 0 = not at all.
  int side_by_side = 0;
  int side_by_side_rounds = 5;
  // When not empty, the comparison times these schedules after the reference instead of the database's best few.
  std::vector<Schedule> side_by_side_contenders;
  bool side_by_side_naive = true;  // the naive schedule timed once after the comparison, as the user's baseline
};

struct TuneProgress {
  int64_t trials_done = 0;             // candidates of the sequence measured, by this run, earlier runs or others
  int64_t trials_budget = 0;           // 0 when only minutes bound the run
  int64_t measured_now = 0;            // by this run
  int64_t errors_now = 0;              // by this run
  std::optional<double> best_seconds;  // best median of a correct candidate, over every run
  double elapsed_seconds = 0;
  std::optional<double> eta_seconds;
  // The search's cost model: its pairwise ranking accuracy on the last batch, scored before it was measured.
  std::optional<double> model_batch_accuracy;
  // The measured time of the schedule the search started from (the fixed strategy schedule), once known: the best
  // so far is reported as a speed-up over it.
  std::optional<double> reference_seconds;
  std::string last;  // one line about the candidate just measured, or about what the loop does now
  // What the loop does now: "compiling N candidates", "measuring", or "skipped N measured before"; reported as it
  // starts, so a long compile or a resumed run's skipping is never silent.
  std::string phase;
};

struct TuneSummary {
  int64_t run_id = 0;
  std::string target;
  std::string workload_hash;
  int64_t measured_now = 0, skipped = 0, errors_now = 0;
  bool exhausted = false;  // the search ran out of new schedules
  bool stopped = false;    // TuneOptions::stop ended the run
  std::optional<double> best_seconds;
  std::optional<double> reference_seconds;  // as TuneProgress::reference_seconds
  std::string best_schedule_json;
  // The end-of-run comparison (TuneOptions::side_by_side), when it took place.
  std::optional<SideBySideComparison> side_by_side;
};

// The database key of the CPU target this process measures on: CPU model and thread count, the ISA where code is
// written for another than this CPU's own (isa: its cpu_isa_name; "" for this CPU's), and the toolchain where a
// config names its own compiler or flags (toolchain: a toolchain_key; "" for the default).
std::string cpu_target_key(int threads, const std::string& isa = "", const std::string& toolchain = "");
// The database key of a GPU target: the device and the architecture its kernels are compiled for
// ("gpu:NVIDIA H200:sm_90").
std::string gpu_target_key(const std::string& device, const std::string& arch);
// The architecture a GPU target key ends with ("sm_90" of "gpu:NVIDIA H200:sm_90"); "" for any other key.
std::string gpu_key_arch(const std::string& key);
// Whether a --target setting names a GPU architecture of the built-in targets ("sm_80", "sm_90").
bool is_gpu_arch(const std::string& target);
// The stored target key a --target setting names for a workload (name or hash): for "sm_80" or "sm_90", the key of
// the one GPU of that architecture the workload was measured on (gpu_target_key; with no such GPU, a key that says
// so and holds no measurement); std::invalid_argument, listing the keys, where several were. Any other setting is a
// key as given.
std::string resolve_stored_target(const Database& db, const std::string& workload, const std::string& target);
// tune() of GPU candidates where no GPU is usable (the message says why); thrown before anything is recorded.
class GpuUnavailable : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
// A short tag of a config's target.compiler and target.flags, "" when both are unset (the default toolchain): a
// candidate measured with `-O2` or another compiler is another measurement than with the defaults, and a run with
// other ones must not take it as measured.
std::string toolchain_key(const std::string& compiler, const std::string& flags);
// The database row of a trained model (its held-out metrics, or "{}" without them) for a target key.
CostModelRecord cost_model_record(const XGBoostCostModel& model, const std::string& target,
                                  const std::string& trained_on);
// What a model a tuning run of the workload trained and stored says it was trained on (CostModelRecord::trained_on).
std::string tuning_run_model_source(const std::string& workload_name);
// The full description stored with each measurement: target key, compiler command and flags.
std::string cpu_target_description(int threads, const std::string& isa, const CompileOptions& compile);

// Tunes `program` (named workload_name in the database) with the candidates `search` proposes for it. After each
// batch, search.tell gets every candidate of the batch that counted towards the budget, in sequence order: those
// measured now (failures included) and those skipped as measured before or claimed by another tuner (skipped =
// true). Not told: proposals beyond the trials budget, and candidates released unmeasured when the minutes ran out
// (neither counts; a later run proposes them again). Throws DatabaseError for an unusable database and
// std::invalid_argument for options without any budget, and ToolchainError (compile/cpp_compiler.h), before anything
// is recorded, when the compiler and flags cannot build a test kernel (GpuUnavailable, for GPU candidates, when no
// GPU is usable); candidate failures are recorded, never thrown.
TuneSummary tune(const Program& program, const std::string& workload_name, const TuneOptions& options,
                 SearchStrategy& search, const std::function<void(const TuneProgress&)>& on_progress = {});

}  // namespace ingot
