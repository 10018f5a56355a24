// A tuning run's configuration, read from YAML: which workload (a registry name or an ONNX file), on what
// target, for how long, where results go and how candidates are measured. Every key, its type, default and
// meaning is documented in docs/config.md (a test keeps that table and this parser in step). Use parse/load
// before anything runs.
#pragma once

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "interp/interpreter.h"
#include "ir/host_tensor.h"
#include "ir/located_error.h"
#include "ir/program.h"
#include "workloads/bf16_products.h"
#include "workloads/registry.h"

namespace ingot {

// A value bound to an ONNX model's graph input (workload.bind): int64 values, a 1-D tensor, or a scalar (0-D).
struct BoundInputConfig {
  std::vector<int64_t> values;
  bool scalar = false;
  bool operator==(const BoundInputConfig&) const = default;
};

// Exactly one of name and onnx is set.
struct WorkloadConfig {
  std::string name;       // a workload of list_workloads() (workloads/registry.h)
  WorkloadParams params;  // that workload's parameters; those left out take the size's (after parsing: all of them)
  std::string onnx;       // or: an ONNX model file, absolute (the parser resolves a relative path)
  // With onnx: graph inputs imported as constants (shape operands fed as inputs), by ONNX input name
  std::map<std::string, BoundInputConfig> bind;
  std::string size = "default";  // small or default: the workload's sizes that params start from
  // fp32, or bf16: the dense layers' weights in bf16 and their products too, accumulated in f32
  // (workloads/bf16_products.h); its results are stored under the name with "@bf16"
  std::string precision = "fp32";
  bool operator==(const WorkloadConfig&) const = default;
};

struct TargetConfig {
  std::string kind = "cpu";    // where candidates run: cpu, sm_80 or sm_90; only cpu can be tuned so far
  int threads = 0;             // OpenMP threads of each run; 0 = all cores
  std::string compiler;        // compiler command (may be several words); empty = $CXX, else c++
  std::string flags;           // compiler flags, split on whitespace; empty = default_cpp_flags() (codegen)
  std::string isa = "native";  // the CPU's ISA to write code for: native (this machine's), avx512, avx2 or generic
  bool operator==(const TargetConfig&) const = default;
};

struct BudgetConfig {
  int64_t trials = 0;  // candidates of the seeded sequence to have measured (resumed runs count); 0 = no limit
  double minutes = 0;  // start no candidate after this many minutes; 0 = no limit (one of the two must be > 0)
  bool operator==(const BudgetConfig&) const = default;
};

// The measurement settings mirror LocalRunOptions (runtime/local_run.h), whose defaults they share.
struct MeasureConfig {
  int warmup_runs = 1;           // untimed runs before timing
  double min_repeat_ms = 100;    // keep repeating timed runs until this many milliseconds were spent...
  int min_repeats = 3;           // ...and at least this many runs
  int max_repeats = 1000;        // stop after this many timed runs even if min_repeat_ms is not reached
  double build_timeout_s = 300;  // a compile still running after this many seconds is a compile_timeout
  double run_timeout_s = 60;     // a candidate's run still going after this many seconds is a run_timeout
  int build_workers = 0;         // candidates compiled at once; 0 = all cores
  double rtol = kDefaultRtol;    // verification: |actual - expected| <= atol * max(1, max|expected|)
  double atol = kDefaultAtol;    //   + rtol * |expected| + 4 * the output's rounding noise, for every output element
  // At the end of a run: the fixed schedule and this many of the best candidates timed again side by side, in
  // side_by_side_rounds interleaved rounds (tuner/side_by_side_comparison.h); 0 = not at all
  int side_by_side = 3;
  int side_by_side_rounds = 5;
  bool operator==(const MeasureConfig&) const = default;
};

// How candidates are chosen; docs/config.md and docs/search.md say what each key does.
struct SearchConfig {
  std::string strategy = "evolutionary";  // "evolutionary" (tuner/evolutionary_search.h), "random" or "ranked"
  std::string fusion = "global";          // the partition plan candidates follow: unfused, rules, subgraph or global
  std::string cost_model = "xgboost";     // what ranks the evolutionary search's population: "xgboost" or "none"
  int batch = 0;                          // candidates built together before they are measured; 0 = 2 per worker
  int population = 64;                    // evolutionary: schedules kept per generation
  int generations = 4;                    // evolutionary: model-ranked generations per batch
  double mutation_probability = 0.85;     // evolutionary: share of children made by mutation (the rest: crossover)
  double epsilon = 0.1;                   // evolutionary: share of each batch drawn at random from the space
  // "program": every candidate is a schedule of the whole workload; "tasks": the plan's distinct stages are tuned
  // alone and their bests assembled (tuner/model_tune_job.h)
  std::string scope = "program";
  int partition_moves = 0;  // tasks: plan moves tried after the rounds, each measured end to end
  bool operator==(const SearchConfig&) const = default;
};

struct RunConfig {
  WorkloadConfig workload;            // what is tuned
  TargetConfig target;                // where and how it is compiled and run
  BudgetConfig budget;                // when the run stops
  uint64_t seed = 0;                  // seeds the candidate sequence: same seed, same candidates
  std::string database = "ingot.db";  // SQLite results file; a relative path is taken from the working directory
  MeasureConfig measure;              // how each candidate is timed and verified
  SearchConfig search;                // how candidates are chosen
  bool operator==(const RunConfig&) const = default;
};

// A mistake in a config, located as ir/located_error.h says, e.g.
// "configs/x.yaml:4:3: budget.trails: unknown key (known: trials, minutes)".
class ConfigError : public LocatedError {
 public:
  using LocatedError::LocatedError;
};

// Parses a config; source_name names it in error messages. A relative workload.onnx is taken from
// base_directory (empty: the working directory) and stored absolute, so that the formatted config a run
// records rebuilds the same program from anywhere. Throws ConfigError on an unknown key, a value of the wrong
// type or out of range, an unknown workload, workload parameter, target kind or search strategy, neither or
// both of workload.name and workload.onnx, workload.params with workload.onnx, workload.bind without it or naming
// an input the model lacks or a value that does not fit it, an ONNX file that is missing or does not import (the
// importer's message), or a budget with neither trials nor minutes above 0. The ONNX
// check imports the model, so parsing such a config costs one import. Returns nothing partial.
RunConfig parse_run_config(const std::string& yaml_text, const std::string& source_name,
                           const std::string& base_directory = "");
// Reads and parses the file at path (named by path in errors; a relative workload.onnx is taken from the
// file's folder). Throws ConfigError as parse_run_config does, and when the file cannot be read.
RunConfig load_run_config(const std::string& path);

// Every key the parser accepts (dotted path, e.g. "measure.rtol"), its type as docs/config.md names it
// ("integer", "number", "string", "map of integers", "map of integer lists") and its default as text ("(required unless
// ...)" for workload.name and workload.onnx). The list docs/config.md must match.
struct ConfigKey {
  std::string path;
  std::string type;
  std::string default_value;
};
std::vector<ConfigKey> run_config_keys();

// The config as YAML with every key set (defaults included; of the workload keys, those of its kind), in the
// order of docs/config.md: what a run records as its configuration. parse_run_config(format_run_config(c),
// ...) == c.
std::string format_run_config(const RunConfig& config);

// What a config's workload gives the tuner: the program and how to feed it.
struct ConfiguredWorkload {
  std::string name;  // the name results are stored under: the registry name, or the ONNX file's stem
  Program program;
  InputRanges input_ranges;  // of the random inputs (TuneOptions::input_ranges)
  TensorMap fixed_inputs;    // an ONNX model's weights (its initializers); empty for registry workloads
  // The placeholders that hold weights (the same values in every run; a schedule may pass them packed): the
  // registry's weight names, or the ONNX model's initializers. Sorted.
  std::vector<std::string> weights = {};
};
// Builds the program of a parsed config's workload (imports the ONNX model with its bound inputs, or
// make_workload). Throws what those throw. A binding changes the program's name (onnx_import.h), so the
// database keys each binding as a workload of its own; results are still stored under the file's stem. In bf16 its
// 1 x 1 convolutions' input channels pad to bf16_conv_channel_multiple (bf16_products; the target's:
// analysis/target.h).
ConfiguredWorkload make_configured_workload(const WorkloadConfig& workload, int64_t bf16_conv_channel_multiple = 2);

// The bf16 form of an f32 workload (precision: bf16): `rewritten` (bf16_products of its program and weights) under
// the name with "@bf16", an ONNX model's weights rounded; random weights keep their ranges (drawn as bf16).
ConfiguredWorkload bf16_workload(const ConfiguredWorkload& f32, const Bf16Program& rewritten);

// workload.bind as the importer takes it: int64 tensors of shape [n], or [] for a scalar.
std::map<std::string, HostTensor> onnx_bound_inputs(const WorkloadConfig& workload);

}  // namespace ingot
