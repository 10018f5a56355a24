// Registration of ingot's commands; each is defined in its own file under cli/.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "analysis/target.h"
#include "configs/run_config.h"
#include "ir/program.h"
#include "ir/schedule.h"
#include "tuner/side_by_side_comparison.h"
#include "workloads/registry.h"

namespace ingot::cli {

void add_lower_command(CLI::App& app);
void add_run_command(CLI::App& app);
void add_tune_command(CLI::App& app);
void add_results_commands(CLI::App& app);  // best, history, db check, workloads
void add_export_command(CLI::App& app);
void add_verify_command(CLI::App& app);     // ONNX model against ONNX test data
void add_cache_command(CLI::App& app);      // the kernel cache: info, clean
void add_plan_command(CLI::App& app);       // partition plans of a workload (analysis/strategies.h)
void add_costmodel_command(CLI::App& app);  // the learned cost model: train, eval, features, list

// The exit status of a command that succeeded without finishing its work: `ingot tune` stopped by SIGINT or SIGTERM
// exits with 128 + the signal (130, 143), as a shell reports a process the signal killed. main returns it; 0 otherwise.
int& command_exit_status();

// Whether a --workload argument names an ONNX model file (it ends in .onnx, in any case) rather than a registry
// workload.
bool is_onnx_file(const std::string& workload);
// The workload a --workload argument names: a registry workload (workloads/registry.h) at `size` ("small", "default"
// or NAME=VALUE,...), or an ONNX model file, imported with its weights as fixed inputs (stored under the file's stem,
// as a run config's workload.onnx). An ONNX model's shapes are its file's, so size_given (the user passed --size) is
// refused for one. Throws std::invalid_argument for an unknown workload or size, and what the importer throws.
ConfiguredWorkload command_line_workload(const std::string& workload, const std::string& size, bool size_given,
                                         const std::string& precision = "fp32", const std::string& isa = "native");
// The workload's inputs as `ingot run` and the tuner feed it: random values of its ranges from seed, its fixed inputs
// (an ONNX model's weights) as they are.
TensorMap workload_inputs(const ConfiguredWorkload& workload, uint64_t seed);
// For a --workload flag that names stored results (best, history, export, costmodel): an ONNX model file given there
// becomes its stem, the name `ingot tune` stores the model's results under.
CLI::Validator onnx_file_as_stored_name();
// The name a --workload argument's results are stored under: an ONNX model file's stem, else the argument itself.
std::string stored_workload_name(const std::string& workload);
// The parameters of that size ({} for the defaults); throws for an unknown workload or size.
WorkloadParams workload_size_params(const std::string& name, const std::string& size);
// A schedule from a spec: "naive" (no decisions), "hand" (the hand-written one, for AVX-512), "random:SEED" (sampled,
// CPU), "strategy:NAME" (a fusion strategy's plan with fixed schedules, space/strategy_schedule.h: for this CPU with
// code for `isa` (a target.isa setting: native, avx512, avx2, generic), or for sm_90 with GPU loop bindings when gpu
// is set), "db:HASH" (the schedule of a candidate measured for this program in `database`, named by a unique prefix
// of its hash), or a path to a schedule JSON file (or to `ingot best --json`'s answer, whose "schedule" it takes).
// Strategy schedules may pass `weights` packed (FixedScheduleOptions).
Schedule schedule_from_spec(const std::string& spec, const Program& program, bool gpu = false,
                            const std::string& isa = "native", const std::vector<std::string>& weights = {},
                            const std::string& database = "ingot.db");
// This CPU's target with code for `isa` (a target.isa setting); std::invalid_argument for an unknown one.
Target cpu_target_for(const std::string& isa);
// A side-by-side comparison (tuner/side_by_side_comparison.h) for people: one line per schedule with its median over
// the rounds and its paired speed-up over the reference, and which was fastest. Ends with a newline.
std::string side_by_side_text(const SideBySideComparison& comparison);

}  // namespace ingot::cli
