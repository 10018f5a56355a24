// Moves of a partition plan: split a stage in two, merge two neighbouring stages, cut a kernel in two, join two
// neighbouring kernels. Each result is valid for its program (plan_problems) and within the target's limits (resident
// capacity; on a GPU, a kernel of several stages fits one cooperative launch). Whole-model tuning's partition search
// (tuner/model_tune_job.h) tries them. Pure: runs on any valid plan.
#pragma once

#include <optional>
#include <random>
#include <string>
#include <vector>

#include "analysis/partition_plan.h"
#include "analysis/program_analysis.h"

namespace ingot {

enum class PlanMove { kSplitStage, kMergeStages, kCutKernel, kJoinKernels };
const std::vector<PlanMove>& all_plan_moves();
const char* plan_move_name(PlanMove move);  // "split_stage", "merge_stages", "cut_kernel", "join_kernels"

// The move of the kind at a place drawn with rng among those where it gives a valid plan; nullopt when there is no
// such place. The plan must be valid for the analysed program. Its strategy becomes "<strategy>+moves".
std::optional<PartitionPlan> move_plan(const PartitionPlan& plan, const ProgramAnalysis& analysis, PlanMove move,
                                       std::mt19937_64& rng);

// Every valid plan one move of the kind makes, in plan order (tests; small plans).
std::vector<PartitionPlan> plan_neighbours(const PartitionPlan& plan, const ProgramAnalysis& analysis, PlanMove move);

}  // namespace ingot
