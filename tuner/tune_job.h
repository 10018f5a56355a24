// A tuning job from a run config (configs/run_config.h): the config's target, its workload's program, the fusion
// plan candidates follow, the tuning loop's options and the search strategy. This is `ingot tune` without its
// flags and printing; the tests run it the same way.
#pragma once

#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <utility>

#include "analysis/partition_plan.h"
#include "analysis/target.h"
#include "configs/run_config.h"
#include "ir/program.h"
#include "results/database.h"
#include "space/space_generator.h"
#include "tuner/search_strategy.h"
#include "tuner/tuning_loop.h"

namespace ingot {

struct TuneJob {
  std::string workload_name;  // what results are stored under (ConfiguredWorkload::name)
  Program program;
  Target target;       // target.kind, resolved (analysis/target.h): this CPU, or a GPU measured on this machine's
  PartitionPlan plan;  // search.fusion's plan of the program for the target
  TuneOptions options;
  // Where search.strategy draws from: for "evolutionary" the sketch space around the plan's strategy schedule
  // (space/sketch_space.h), else the sampler within the plan's layout.
  std::shared_ptr<const SpaceGenerator> space;
  std::unique_ptr<SearchStrategy> search;  // search.strategy over the space, seeded by seed
  // The learned cost model an "evolutionary" (with search.cost_model xgboost) or "ranked" search ranks by; null
  // otherwise. It starts from the target's newest stored model that no tuning run of this workload made (e.g.
  // `ingot costmodel train`'s), and relearns this workload's earlier results as the search proposes them again.
  std::shared_ptr<XGBoostCostModel> cost_model;
  std::string notes;  // what the warm-up found or ignored, one line each, for the user
};

// What a job takes beyond its config: how the learned model trains (tests shorten its warm-up).
struct TuneJobOptions {
  XGBoostCostModelOptions model;
};

// The loop's options a config sets: database, budget, seed, threads, compiler, measurement; config_text is the
// formatted config. The workload's inputs are make_tune_job's.
TuneOptions tune_options_from_config(const RunConfig& config);

// The ISA a target.isa setting names (native: this CPU's); std::invalid_argument for an unknown name.
CpuIsa target_isa(const std::string& setting);
// The ISA part of the target key (TuneOptions::target_isa) for a target.isa setting: "" for this CPU's own ISA.
std::string target_isa_key(const std::string& setting);
// The compiler flags of code for isa on this machine: the default flags, with the ISA's in place of -march=native
// where it is another than this CPU's (analysis/target.h: cpu_isa_compiler_flags).
std::string cpp_flags_for(CpuIsa isa);
// Their ISA part (what `ingot export`'s build command compiles the program with): default_isa_flags() for this CPU's
// own ISA, else cpu_isa_compiler_flags(isa).
std::string isa_flags_for(CpuIsa isa);
// Throws std::invalid_argument (starting with `where`) unless code of `isa` can run bf16 products here: this CPU has
// AVX-512 BF16 and the code is AVX-512 (precision: bf16, workloads/bf16_products.h).
void check_bf16_precision(CpuIsa isa, const std::string& where);
// The verification tolerance of a workload in `precision`: rtol and atol as given, for bf16 at least kBf16Tolerance
// (ir/dtype.h).
std::pair<double, double> verification_tolerance(const std::string& precision, double rtol, double atol);

// What every tuning job of a config starts from: the resolved target, its database key (cpu_target_key, or for a GPU
// target gpu_target_key of this machine's GPU), the loop's options (with the workload's input ranges and fixed
// inputs), and the workload. Before the workload is built and before any database is opened, the toolchain is
// checked (ToolchainError) or, for a GPU target, the GPU (GpuUnavailable, naming target.kind and config_path, with
// the reason: no driver, no device, ingot built without the CUDA toolkit).
struct JobStart {
  Target target;
  std::string target_key;
  TuneOptions options;
  ConfiguredWorkload workload;
};
JobStart start_job(const RunConfig& config, const std::string& config_path);
// The workload of a config as its tuning job builds it for the config's target (in bf16, its convolutions padded
// for that target: bf16_conv_channel_multiple), without start_job's checks: to find the program a stored run measured.
// Given the measured program's key (workload_key), a bf16 workload whose padding depends on the machine (AMX or not)
// is built with the other padding too, and the one with that key returned (else the target's).
ConfiguredWorkload configured_workload(const RunConfig& config, const std::string& measured_hash = "");

// Everything a config's run needs, checked before anything is built: what start_job checks (config_path, when given,
// starts the messages and is recorded with the run); then throws what make_configured_workload and make_plan throw.
// A GPU target's candidates are bound to blocks and threads (the sampler's and strategy schedules' GPU form) and
// measured on this machine's GPU, compiled by NVRTC for its architecture, whatever the sm_ the config names (whose
// figures the plan and schedules use). The plan
// of the CPU target depends on the host's cores and caches (kernels cut by capacity: docs/plans.md),
// so one config may propose other candidates, with other keys, on another machine.
// The evolutionary search starts from the fixed strategy schedule of search.fusion's plan and from the best correct
// measurements of this workload on this target made by runs with another seed (a run with this seed proposes its
// own again, so a resumed run starts as the interrupted one did).
TuneJob make_tune_job(const RunConfig& config, const std::string& config_path = "", const TuneJobOptions& = {});

// Loads into `model` the target's newest stored model that this job did not make (made_by_this_job(trained_on) is
// false): those the job relearns from the results it is told again, so a resumed run proposes what the interrupted
// one did. A model of another feature-set version, or one that does not load, is ignored; notes say which it took.
void warm_up_cost_model(XGBoostCostModel& model, const Database& db, const std::string& target,
                        const std::function<bool(const std::string&)>& made_by_this_job, std::ostream& notes);

// The best correct measurements of a workload (key) on a target, one per candidate (its least median), best first,
// from runs whose seed is not `seed`; at most `limit`. Schedules this ingot no longer reads are left out. The
// evolutionary search starts from them.
std::vector<MeasuredSchedule> measured_seeds(const Database& db, const std::string& target, const std::string& workload,
                                             uint64_t seed, int limit);

// tune() of the job's program with its options and search strategy.
TuneSummary run_tune_job(TuneJob& job, const std::function<void(const TuneProgress&)>& on_progress = {});

}  // namespace ingot
