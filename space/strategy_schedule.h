// Runs a fusion strategy: its partition plan (analysis/strategies.h) becomes a schedule whose layout holds the
// plan's kernels and stages and whose fusion decisions (compute_inline, compute_at) realise the plan's vertical
// fusion; every stage left gets the same fixed, reasonable loop schedule, so strategies differ only in fusion.
// Use it to run the four strategies side by side, and as the starting point the search keeps (sampler.h).
#pragma once

#include <string>

#include "analysis/partition_plan.h"
#include "analysis/target.h"
#include "ir/program.h"
#include "ir/schedule.h"

namespace ingot {

// The plan's kernels and stages as a schedule layout: one step per plan stage, a kernel boundary before the
// first stage of every kernel but the first.
StageLayout plan_layout(const PartitionPlan& plan);

struct FixedScheduleOptions {
  bool gpu = false;           // bind to blockIdx.x / threadIdx.x instead of parallel and vectorized loops
  int max_vector_lanes = 64;  // CPU: the innermost spatial loop is vectorized up to this extent (split when longer)
  int simd_fp32_lanes = 16;   // CPU: fp32 lanes of a vector register (the target's), for register tiles
  int gpu_threads = 256;      // GPU: threads per block at most
};

// The strategy schedule for a plan of `program` (the plan must be valid for it). A compute whose readers are all
// in its plan stage is fused: inlined when it is not a reduction; on the CPU, a reduction with one reader is
// computed inside that reader's parallel loop (compute_at). Two kinds stay stored: a compute that does arithmetic
// and that a reader reads more often than it has elements (a broadcast, a GEMM operand), and data movement whose
// folding would leave a reduction loading through a non-affine index. Every other compute is a root stage: CPU:
// outer spatial loops fused and parallel, reduction loops, then the innermost spatial loop vectorized (split when
// longer than max_vector_lanes); reductions accumulate in a local tile (cache_write); a reduction along memory
// (analysis/access.h) with a contiguous innermost reduction axis of 8 or more vectorizes that axis instead (a simd
// reduction) around a register tile of up to 4 outputs, or else unrolls its spatial tile; the parallel loop that
// hosts it visits its largest operand's axes first (weight tiles reused across activation rows). GPU: spatial
// axes split into a block loop and a thread loop of at most gpu_threads.
Schedule strategy_schedule(const Program& program, const PartitionPlan& plan, const FixedScheduleOptions& options = {});

// make_plan (analysis/strategies.h) then strategy_schedule: throws std::invalid_argument for an unknown strategy.
struct StrategyProgram {
  PartitionPlan plan;
  Schedule schedule;
};
StrategyProgram make_strategy_program(const Program& program, const std::string& strategy, const Target& target,
                                      const FixedScheduleOptions& options = {});

}  // namespace ingot
