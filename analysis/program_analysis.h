// Whole-program analysis over tensor expressions (Souffle's global analysis): for every compute its class,
// footprint, parallelism, reduction size, FLOPs and intensity on a target; for every tensor its readers and
// live range. What partition-plan generators and `ingot plan` start from. Run it on a built Program.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "analysis/access.h"
#include "analysis/reuse.h"
#include "analysis/target.h"
#include "analysis/te_class.h"
#include "ir/program.h"

namespace ingot {

struct TeAnalysis {
  Tensor tensor;
  TeClass te_class = TeClass::kOneToOne;
  std::vector<TensorAccess> accesses;  // one per input, first-read order: the input footprints
  int64_t output_bytes = 0;            // the output written, once
  int64_t parallelism = 0;             // independent iterations: the output's elements
  int64_t reduction_size = 1;          // reduction steps per output element; 1 without a reduction
  int64_t flops = 0;                   // ir/flops.h tensor_flops
  int64_t bytes = 0;                   // input footprints + output_bytes
  double arithmetic_intensity = 0;     // flops / bytes
  Intensity intensity = Intensity::kMemory;
};

struct ProgramAnalysis {
  std::string program_name;
  Target target;
  std::vector<TeAnalysis> tes;       // every compute, in Program::computes() order (positions of TensorReuse)
  std::vector<TensorReuse> tensors;  // every tensor, in Program::tensors() order
  int64_t total_flops = 0;

  // Linear look-ups by name (for tests and tools; analysis itself never searches by name).
  const TeAnalysis* find_te(const std::string& name) const;
  const TensorReuse* find_tensor(const std::string& name) const;
};

// Analyzes every compute and tensor of program for target. Linear in the program's size (the 4002-compute
// LSTM takes milliseconds).
ProgramAnalysis analyze(const Program& program, const Target& target);

// A readable report: totals, class counts, one line per compute, then the tensors read by several computes
// (at most max_readers reader names each, then a count).
std::string format_analysis(const ProgramAnalysis& analysis, size_t max_readers = 6);

// Everything in the analysis as JSON (schema in docs/analysis.md); readers and producers by tensor name.
nlohmann::json analysis_to_json(const ProgramAnalysis& analysis);

}  // namespace ingot
