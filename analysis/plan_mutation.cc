#include "analysis/plan_mutation.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "analysis/strategies.h"

namespace ingot {
namespace {

// Where a move applies: a stage (and the cut inside it, for a split), or a kernel boundary.
struct Place {
  size_t kernel = 0, stage = 0, cut = 0;
};

std::vector<Place> places(const PartitionPlan& plan, PlanMove move) {
  std::vector<Place> out;
  for (size_t k = 0; k < plan.kernels.size(); ++k) {
    const std::vector<PlanStage>& stages = plan.kernels[k].stages;
    switch (move) {
      case PlanMove::kSplitStage:
        for (size_t s = 0; s < stages.size(); ++s)
          for (size_t cut = 1; cut < stages[s].tes.size(); ++cut) out.push_back({k, s, cut});
        break;
      case PlanMove::kMergeStages:
      case PlanMove::kCutKernel:
        for (size_t s = 1; s < stages.size(); ++s) out.push_back({k, s, 0});
        break;
      case PlanMove::kJoinKernels:
        if (k > 0) out.push_back({k, 0, 0});
        break;
    }
  }
  return out;
}

class PlanEditor {
 public:
  explicit PlanEditor(const ProgramAnalysis& analysis) : analysis_(analysis) {
    for (size_t i = 0; i < analysis.tes.size(); ++i) position_[analysis.tes[i].tensor->name] = int(i);
    for (const TensorReuse& t : analysis.tensors) bytes_[t.tensor->name] = t.bytes;
  }

  std::optional<PartitionPlan> apply(const PartitionPlan& plan, PlanMove move, const Place& at) const {
    PartitionPlan out = plan;
    if (out.strategy.find("+moves") == std::string::npos) out.strategy += "+moves";
    std::vector<PlanKernel>& kernels = out.kernels;
    std::vector<PlanStage>& stages = kernels[at.kernel].stages;
    switch (move) {
      case PlanMove::kSplitStage: {
        PlanStage& first = stages[at.stage];
        PlanStage second;
        second.tes.assign(first.tes.begin() + long(at.cut), first.tes.end());
        first.tes.resize(at.cut);
        const std::set<std::string> made_first(first.tes.begin(), first.tes.end());
        second.barrier_before = reads_any(second.tes, made_first);
        // A prefetch stays with the first part that reads it: it is fetched while the stage before runs.
        std::vector<std::string> prefetch = std::move(first.prefetch);
        first.prefetch.clear();
        for (const std::string& t : prefetch) (reads_tensor(first.tes, t) ? first : second).prefetch.push_back(t);
        stages.insert(stages.begin() + long(at.stage) + 1, std::move(second));
        break;
      }
      case PlanMove::kMergeStages: {
        PlanStage& into = stages[at.stage - 1];
        PlanStage& from = stages[at.stage];
        into.tes.insert(into.tes.end(), from.tes.begin(), from.tes.end());
        for (const std::string& t : from.prefetch)
          if (std::find(into.prefetch.begin(), into.prefetch.end(), t) == into.prefetch.end())
            into.prefetch.push_back(t);
        if (at.stage - 1 == 0) into.prefetch.clear();  // a kernel's first stage has nothing before it to overlap
        stages.erase(stages.begin() + long(at.stage));
        break;
      }
      case PlanMove::kCutKernel: {
        PlanKernel tail;
        tail.stages.assign(stages.begin() + long(at.stage), stages.end());
        stages.resize(at.stage);
        tail.stages.front().barrier_before = false;
        tail.stages.front().prefetch.clear();
        // A resident tensor stays resident in each part that reads or writes it.
        const std::vector<std::string> resident = std::move(kernels[at.kernel].resident);
        kernels[at.kernel].resident.clear();
        for (const std::string& t : resident) {
          if (touches(kernels[at.kernel], t)) kernels[at.kernel].resident.push_back(t);
          if (touches(tail, t)) tail.resident.push_back(t);
        }
        kernels.insert(kernels.begin() + long(at.kernel) + 1, std::move(tail));
        break;
      }
      case PlanMove::kJoinKernels: {
        PlanKernel& into = kernels[at.kernel - 1];
        PlanKernel& from = kernels[at.kernel];
        from.stages.front().barrier_before = true;
        into.stages.insert(into.stages.end(), from.stages.begin(), from.stages.end());
        for (const std::string& t : from.resident)
          if (std::find(into.resident.begin(), into.resident.end(), t) == into.resident.end())
            into.resident.push_back(t);
        kernels.erase(kernels.begin() + long(at.kernel));
        break;
      }
    }
    if (!plan_problems(out, analysis_).empty() || !within_limits(out)) return std::nullopt;
    return out;
  }

 private:
  std::vector<Tensor> inputs_of(const std::string& te) const {
    return analysis_.tes[size_t(position_.at(te))].tensor->inputs();
  }

  bool reads_any(const std::vector<std::string>& tes, const std::set<std::string>& made) const {
    for (const std::string& te : tes)
      for (const Tensor& in : inputs_of(te))
        if (made.count(in->name)) return true;
    return false;
  }

  bool reads_tensor(const std::vector<std::string>& tes, const std::string& tensor) const {
    return reads_any(tes, {tensor});
  }

  bool touches(const PlanKernel& kernel, const std::string& tensor) const {
    for (const PlanStage& stage : kernel.stages)
      for (const std::string& te : stage.tes)
        if (te == tensor || reads_tensor({te}, tensor)) return true;
    return false;
  }

  // The limits the generators keep (docs/plans.md): what a kernel keeps resident fits the target's capacity, and on
  // a GPU every stage of a kernel with barriers between stages fits one cooperative launch.
  bool within_limits(const PartitionPlan& plan) const {
    const Target& target = analysis_.target;
    for (const PlanKernel& kernel : plan.kernels) {
      int64_t resident = 0;
      for (const std::string& t : kernel.resident) resident += bytes_.at(t);
      if (resident > resident_capacity_bytes(target)) return false;
      if (target.kind == TargetKind::kCpu || kernel.stages.size() < 2) continue;
      for (const PlanStage& stage : kernel.stages) {
        std::vector<int> group;
        bool with_reduction = false;
        for (const std::string& te : stage.tes) {
          group.push_back(position_.at(te));
          with_reduction = with_reduction || analysis_.tes[size_t(group.back())].reduction_size > 1;
        }
        std::sort(group.begin(), group.end());
        if (group_blocks(analysis_, group) > cooperative_block_limit(target, with_reduction)) return false;
      }
    }
    return true;
  }

  const ProgramAnalysis& analysis_;
  std::map<std::string, int> position_;
  std::map<std::string, int64_t> bytes_;
};

}  // namespace

const std::vector<PlanMove>& all_plan_moves() {
  static const std::vector<PlanMove> moves = {PlanMove::kSplitStage, PlanMove::kMergeStages, PlanMove::kCutKernel,
                                              PlanMove::kJoinKernels};
  return moves;
}

const char* plan_move_name(PlanMove move) {
  switch (move) {
    case PlanMove::kSplitStage: return "split_stage";
    case PlanMove::kMergeStages: return "merge_stages";
    case PlanMove::kCutKernel: return "cut_kernel";
    case PlanMove::kJoinKernels: return "join_kernels";
  }
  return "?";
}

std::optional<PartitionPlan> move_plan(const PartitionPlan& plan, const ProgramAnalysis& analysis, PlanMove move,
                                       std::mt19937_64& rng) {
  std::vector<Place> candidates = places(plan, move);
  PlanEditor editor(analysis);
  // Places in a random order, tried until one gives a valid plan: most do, so few are checked on large plans.
  // Raw draws of the engine, as the schedule space takes them: the same on every standard library.
  for (size_t n = candidates.size(); n > 0; --n) {
    std::swap(candidates[n - 1], candidates[size_t(rng() % n)]);
    if (std::optional<PartitionPlan> out = editor.apply(plan, move, candidates[n - 1])) return out;
  }
  return std::nullopt;
}

std::vector<PartitionPlan> plan_neighbours(const PartitionPlan& plan, const ProgramAnalysis& analysis, PlanMove move) {
  std::vector<PartitionPlan> out;
  PlanEditor editor(analysis);
  for (const Place& at : places(plan, move))
    if (std::optional<PartitionPlan> moved = editor.apply(plan, move, at)) out.push_back(std::move(*moved));
  return out;
}

}  // namespace ingot
