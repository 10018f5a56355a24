// One feature row per candidate (a program and a schedule on a target), for a model that ranks whole candidates:
// the candidate is lowered as its backend compiles it, each store featurized (costmodel/features.h), and the stage
// rows aggregated into one fixed-width row. Why aggregated rows and not summed per-stage scores: docs/costmodel.md.
#pragma once

#include <string>
#include <vector>

#include "analysis/target.h"
#include "costmodel/features.h"
#include "ir/program.h"
#include "ir/schedule.h"
#include "ir/stmt.h"

namespace ingot {

// "sum.<feature>", "max.<feature>" and "heaviest.<feature>" for every stage feature, then the estimates
// "estimated_compute", "estimated_lines", "estimated_unique_lines", "estimated_cost", "heaviest_parallelism",
// "estimated_parallel_cycles", then "stages", "kernels".
const std::vector<std::string>& candidate_feature_names();

// The stage rows in one row, in candidate_feature_names() order:
// - sum: log2(1 + the sum over stages of multiplicity * (2^value - 1)): counts (ops, bytes, lines) add up as the
//   raw numbers would;
// - max: the largest value of any stage: the widest vector, the deepest unroll, the biggest footprint;
// - heaviest: the row of the stage that runs the most float operations plus integer operations (its multiplicity
//   counted), which dominates the run time of most candidates;
// - estimates, summed over stages with multiplicity: operations over the parallelism the target can use (loop
//   iterations up to its threads, times the vectorized share's lanes), cache lines over threads, unique lines, a
//   cost that adds the two (a line as 4 operations), the heaviest stage's parallelism, and the stages' estimated
//   cycles over the rounds their parallel iterations take on the target's threads (docs/costmodel.md);
// - stages: log2(1 + stores, with multiplicity); kernels: log2(1 + kernels of the function).
std::vector<float> aggregate_stage_features(const std::vector<StageFeatures>& stages, int64_t kernels);

// The function a candidate's backend prints: lowered, and for a CPU target with its parallel stages merged
// (codegen/pipeline.h runs the same passes). Throws ScheduleError for a schedule lowering refuses.
LoopFunction lower_as_compiled(const Program& program, const Schedule& schedule, const Target& target);

// lower_as_compiled, extract_stage_features, aggregate_stage_features.
std::vector<float> candidate_features(const Program& program, const Schedule& schedule, const Target& target);

}  // namespace ingot
