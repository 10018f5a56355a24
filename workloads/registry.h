// Every workload a run config can name, with its parameters, their defaults, and the figures reports need
// (FLOPs, weight count). Use make_workload to build a program from a name and parameters (a config's
// workload section); list_workloads to show or validate what exists.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "interp/interpreter.h"
#include "ir/program.h"

namespace ingot {

// A workload's integer parameters by name; a parameter left out takes its default.
using WorkloadParams = std::map<std::string, int64_t>;

struct WorkloadParameter {
  std::string name;
  int64_t default_value = 0;
  std::string meaning;
};

struct WorkloadInfo {
  std::string name;
  std::string description;
  std::vector<WorkloadParameter> parameters;  // every parameter; values must be positive
  WorkloadParams small;                       // a size the interpreter runs in milliseconds (tests, smoke runs)
  // Each takes parameters as make_workload does (missing ones default) and throws as it does.
  std::function<int64_t(const WorkloadParams&)> flops;            // count_flops of the built program
  std::function<int64_t(const WorkloadParams&)> parameter_count;  // elements of the weight placeholders
  std::function<std::vector<std::string>(const WorkloadParams&)> weight_names;
  // Value ranges of the placeholders for verification and timing, as the model's framework initialises them
  // (e.g. PyTorch's uniform +-1/sqrt(fan_in)); unnamed placeholders take random_inputs' default.
  std::function<InputRanges(const WorkloadParams&)> input_ranges;
};

// The workloads by name, sorted: bert, efficientnet, lstm, matmul, matmul_bias_relu, mlp, mmoe, resnext, softmax,
// swin, the task workloads of workloads/tasks.h ("task:bert_ffn", ...), two_gemm.
const std::vector<WorkloadInfo>& list_workloads();
// The workload with this name, or nullptr.
const WorkloadInfo* find_workload(const std::string& name);

// Builds the named workload, its per-channel scales folded into the weights that follow them
// (workloads/scale_into_weights.h). Throws std::invalid_argument for an unknown workload (listing the known ones),
// an unknown parameter (listing the workload's parameters) or a parameter that is not positive.
Program make_workload(const std::string& name, const WorkloadParams& params = {});
// The workload's input ranges (see WorkloadInfo::input_ranges); throws as make_workload does.
InputRanges workload_input_ranges(const std::string& name, const WorkloadParams& params = {});
// params with every missing parameter set to its default; throws as make_workload does.
WorkloadParams complete_workload_params(const std::string& name, const WorkloadParams& params);

// Floating-point operations of one evaluation of the program, counted by the rules of ir/flops.h (a
// multiply-add is 2); what `ingot workloads` and the roofline figures report.
int64_t count_flops(const Program& program);

}  // namespace ingot
