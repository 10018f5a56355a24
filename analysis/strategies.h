// Partition-plan generators, each a function of the analysed program and its target: unfused (one kernel per TE),
// rules (DNNFusion's class-table fusion), subgraph (Ansor-style fused subgraphs) and global (Souffle: as few
// kernels as the target allows). The rules and every estimate are in docs/plans.md; space/strategy_schedule.h runs a
// plan.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/partition_plan.h"
#include "analysis/program_analysis.h"

namespace ingot {

// "unfused", "rules", "subgraph", "global": the order in which plans fuse more.
std::vector<std::string> plan_strategy_names();
// The plan of the named strategy; throws std::invalid_argument naming the strategies for another name.
PartitionPlan make_plan(const std::string& strategy, const ProgramAnalysis& analysis);
PartitionPlan make_plan(const std::string& strategy, const Program& program, const Target& target);

PartitionPlan unfused_plan(const ProgramAnalysis& analysis);
PartitionPlan rules_plan(const ProgramAnalysis& analysis);
PartitionPlan subgraph_plan(const ProgramAnalysis& analysis);
// Global: one kernel of wavefront stages (independent groups of one depth side by side), cut into several
// kernels only where the target requires it: on a GPU a stage too wide for a cooperative launch; on any target,
// weights read by several groups (an LSTM layer's, at every step) that together overflow the resident capacity,
// in which case groups sharing a weight stay together and are packed into kernels in dependency order.
PartitionPlan global_plan(const ProgramAnalysis& analysis);

// How fusion_groups may join a TE to a group (docs/plans.md).
struct FusionOptions {
  bool single_reader_edges_only = false;   // rules: fuse only along a tensor read by one TE
  bool horizontal = false;                 // global: join independent reductions of one shape and depth
  int64_t block_limit = 0;                 // global on a GPU: a horizontal group's blocks stay within it; 0 = none
  const std::vector<int>* part = nullptr;  // global: a part per TE; TEs of different parts never share a group
};
// Fusion groups: positions into analysis.tes, each group ascending, groups in a topological order.
std::vector<std::vector<int>> fusion_groups(const ProgramAnalysis& analysis, const FusionOptions& options);

// The per-block resource estimate of a GPU stage (docs/plans.md): every fused group runs as blocks of
// kThreadsPerBlock threads, each thread computing kOutputsPerThread output elements of the group's widest TE.
struct GpuBlockEstimate {
  static constexpr int64_t kThreadsPerBlock = 256;
  static constexpr int64_t kOutputsPerThread = 4;
  static constexpr int64_t kRegistersPerThread = 64;
  static constexpr int64_t kReductionSharedBytes = 16 * 1024;  // two 32 x 64 fp32 input tiles
};
// Blocks that one cooperative launch can keep resident at once: SMs x blocks per SM, the latter limited by
// threads, registers, shared memory and the block-count limit. 0 for a CPU target.
int64_t cooperative_block_limit(const Target& target, bool with_reduction);
// Blocks a group of TEs (positions into analysis.tes) needs: its reductions' blocks summed (horizontally fused
// reductions run side by side), or its widest other TE's if more; a TE needs ceil(elements / outputs per block).
int64_t group_blocks(const ProgramAnalysis& analysis, const std::vector<int>& group);
// Bytes a persistent kernel can keep resident across stages: GPU: SMs x (shared memory + half the register
// file); CPU: cores x L2.
int64_t resident_capacity_bytes(const Target& target);
// Bytes a global plan may prefetch for one stage while the stage before it finishes: on a GPU half its L2, the other
// half left to the running stage; on a CPU none (docs/plans.md: there the prefetches before a barrier cost time).
int64_t prefetch_capacity_bytes(const Target& target);

}  // namespace ingot
