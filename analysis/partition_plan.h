// A partition plan: how a program's compute TEs are grouped into kernels, each an ordered list of stages (the TEs
// computed together) with grid barriers between dependent stages and the tensors kept resident across stages.
// Plain data with JSON, validation against the program, the bytes-moved count, and a readable report.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "analysis/program_analysis.h"

namespace ingot {

// Bump when the JSON layout changes; plan_from_json rejects other versions.
inline constexpr int kPartitionPlanVersion = 2;  // 2: stages name the tensors they prefetch

struct PlanStage {
  // The TEs computed in this stage, in the program's topological order: an anchor with its vertically fused
  // TEs, and TEs of horizontally fused groups of the same shape listed together.
  std::vector<std::string> tes;
  // A grid barrier (CPU: a barrier of the parallel region) separates this stage from the previous one.
  bool barrier_before = false;
  // Tensors this stage reads from memory (made before its kernel) that are fetched into cache while the stage
  // before it finishes, so that its first loads do not wait for memory (GPU: the L2; CPU: each thread's share
  // into its L2). Never a kernel's first stage.
  std::vector<std::string> prefetch = {};
  bool operator==(const PlanStage&) const = default;
};

struct PlanKernel {
  std::vector<PlanStage> stages;
  // Tensors kept on chip (GPU: shared memory and registers; CPU: L2/L3) across the kernel's stages.
  std::vector<std::string> resident;
  bool operator==(const PlanKernel&) const = default;
};

struct PartitionPlan {
  std::string strategy;  // the generator that made it: unfused, rules, subgraph, global, or anything else
  std::string program;   // Program::name()
  std::string target;    // Target::name
  std::vector<PlanKernel> kernels;
  bool operator==(const PartitionPlan&) const = default;

  int64_t kernel_count() const { return static_cast<int64_t>(kernels.size()); }
  int64_t stage_count() const;
};

class PlanError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// {version, strategy, program, target, kernels: [{stages: [{tes: [...], barrier_before, prefetch: [...]}],
// resident: [...]}]}.
nlohmann::json plan_to_json(const PartitionPlan& plan);
// Throws PlanError on a missing or mistyped field or another version.
PartitionPlan plan_from_json(const nlohmann::json& j);

// Every way the plan disagrees with the program, one sentence each; empty when valid. A valid plan has no empty
// kernel or stage; computes every compute of the program in exactly one stage (and nothing else); lists a TE
// after every TE it reads from that is in the same stage, and in a later stage or kernel than the others; has
// a barrier after any stage whose output a later stage of the same kernel reads, before that reader; no barrier
// before a kernel's first stage; resident tensors that exist and are read or written in their kernel; and
// prefetched tensors that their stage reads, made before its kernel, in a stage that is not its kernel's first.
std::vector<std::string> plan_problems(const PartitionPlan& plan, const ProgramAnalysis& analysis);
// Throws PlanError listing plan_problems when there are any.
void validate_plan(const PartitionPlan& plan, const ProgramAnalysis& analysis);

// Bytes to and from main memory, counted from the plan alone (the rule is in docs/plans.md).
struct PlanTraffic {
  std::vector<int64_t> kernel_bytes;  // one per kernel: reads + writes
  int64_t bytes_read = 0;
  int64_t bytes_written = 0;
  int64_t bytes_moved() const { return bytes_read + bytes_written; }
};
// The plan must be valid for the analysed program.
PlanTraffic plan_traffic(const PartitionPlan& plan, const ProgramAnalysis& analysis);

// A readable report: one header line, then per kernel its bytes, resident tensors, stages with each TE's class,
// prefetches and barriers. What `ingot plan` prints and the golden files hold.
std::string format_plan(const PartitionPlan& plan, const ProgramAnalysis& analysis);
// The report as data: {strategy, program, target, kernel_count, bytes_moved, bytes_read, bytes_written,
// kernels: [{bytes_moved, resident, stages: [{tes, classes, barrier_before, prefetch}]}]}.
nlohmann::json plan_report_json(const PartitionPlan& plan, const ProgramAnalysis& analysis);

}  // namespace ingot
