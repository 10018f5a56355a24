#include "analysis/strategies.h"

#include <algorithm>
#include <functional>
#include <map>
#include <numeric>
#include <queue>
#include <set>
#include <stdexcept>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

namespace ingot {
namespace {

// Producers of every compute: (position of the compute read, how it is read), in first-read order.
struct Dataflow {
  std::vector<std::vector<std::pair<int, AccessKind>>> producers;
  std::vector<std::vector<int>> readers;  // the computes reading each compute's output, ascending

  explicit Dataflow(const ProgramAnalysis& a) : producers(a.tes.size()), readers(a.tes.size()) {
    std::unordered_map<const TensorNode*, int> position;
    for (size_t i = 0; i < a.tes.size(); ++i) position.emplace(a.tes[i].tensor.get(), static_cast<int>(i));
    for (size_t i = 0; i < a.tes.size(); ++i) {
      for (const TensorAccess& access : a.tes[i].accesses) {
        auto it = position.find(access.tensor.get());
        if (it == position.end()) continue;
        producers[i].emplace_back(it->second, access.kind);
        readers[size_t(it->second)].push_back(static_cast<int>(i));
      }
    }
  }
};

bool is_epilogue_read(AccessKind kind) { return kind == AccessKind::kIdentity || kind == AccessKind::kBroadcast; }

int64_t blocks_for(const TeAnalysis& te) {
  int64_t per_block = GpuBlockEstimate::kThreadsPerBlock * GpuBlockEstimate::kOutputsPerThread;
  return (std::max<int64_t>(te.parallelism, 1) + per_block - 1) / per_block;
}

// What a horizontal partner must share: the TE depth (longest path from the inputs, so partners are
// independent), shape and reduction size.
std::string horizontal_key(const TeAnalysis& te, int depth) {
  std::string key = std::to_string(depth) + ":";
  for (int64_t d : te.tensor->shape) key += std::to_string(d) + "x";
  return key + "/r" + std::to_string(te.reduction_size);
}

// Groups under construction, with the group-level dependence edges that the acyclicity check walks.
class GroupBuilder {
 public:
  GroupBuilder(const ProgramAnalysis& a, const FusionOptions& options)
      : a_(a), flow_(a), options_(options), group_of_(a.tes.size(), -1) {
    for (const TensorReuse& tensor : a.tensors)
      if (tensor.is_output) outputs_.insert(tensor.tensor.get());
  }

  std::vector<std::vector<int>> build() {
    std::vector<int> depth(a_.tes.size(), 0);
    for (size_t t = 0; t < a_.tes.size(); ++t) {
      for (const auto& [p, kind] : flow_.producers[t]) depth[t] = std::max(depth[t], depth[p] + 1);
    }
    for (int t = 0; t < static_cast<int>(a_.tes.size()); ++t) place(t, depth[t]);
    for (int t = 0; t < static_cast<int>(a_.tes.size()); ++t) sink_into_its_rounding(t);
    return ordered_groups();
  }

 private:
  // An epilogue t of a reduction's group whose only reader moves its elements (a window partition, a shift) into a
  // rounding to bf16 (workloads/bf16_products.h: the rows a GEMM's AMX tiles load) goes to the group of that chain,
  // with the moves of the chain that are still in its own group (each reading t's chain alone):
  // computed where it is rounded (folded into the moves), its f32 map is never written. The rounding, read by sums
  // only, is stored, so a reduction of that group reads it and recomputes nothing. Only where each move reads its
  // input at one site and the producers t leaves behind in its group are reductions of at most an eighth of its
  // elements (a layer norm's variance), which are stored instead of t. Swin's first layer norms in bf16: the model
  // 1.020x side by side (the median of 9 rounds' ratios), its ONNX file (norms read through a Pad) 1.022x, likewise.
  void sink_into_its_rounding(int t) {
    const TeAnalysis& te = a_.tes[size_t(t)];
    const int g = group_of_[t];
    if (te.te_class == TeClass::kManyToMany || te.flops == 0 || !has_reduction_[g] || is_output(t)) return;
    for (const auto& [p, kind] : flow_.producers[t])
      if (group_of_[p] == g &&
          (a_.tes[size_t(p)].te_class != TeClass::kManyToMany || 8 * a_.tes[size_t(p)].parallelism > te.parallelism))
        return;
    // The chain: moves still in t's group (an ONNX Pad of nothing), which go with it, then those of one other group h.
    std::vector<int> moving{t};
    int h = -1;
    for (int read = t;;) {
      const std::vector<int>& next = flow_.readers[size_t(read)];
      if (next.size() != 1) return;
      const int c = next[0];
      const TeAnalysis& moved = a_.tes[size_t(c)];
      if (moved.te_class == TeClass::kManyToMany || is_output(c) || !reads_each_element_once(c, read) ||
          (options_.part && (*options_.part)[t] != (*options_.part)[c]))
        return;
      if (h < 0 && group_of_[c] == g) {
        if (moved.flops != 0 || is_bf16_rounding(moved.tensor) || flow_.producers[size_t(c)].size() != 1) return;
        moving.push_back(c);
      } else {
        if (h < 0) h = group_of_[c];
        if (group_of_[c] != h) return;
        // A rounding stays stored (its readers' tiles load it) only where every reader is a sum.
        if (is_bf16_rounding(moved.tensor)) {
          const std::vector<int>& sums = flow_.readers[size_t(c)];
          if (sums.empty() || std::any_of(sums.begin(), sums.end(),
                                          [&](int r) { return a_.tes[size_t(r)].te_class != TeClass::kManyToMany; }))
            return;
          break;
        }
        if (moved.flops != 0) return;
      }
      read = c;
    }
    for (const auto& [p, kind] : flow_.producers[t])
      if (group_of_[p] != h && group_of_[p] != g && reaches(h, group_of_[p])) return;
    std::vector<int>& from = members_[size_t(g)];
    std::vector<int>& to = members_[size_t(h)];
    for (int m : moving) {
      from.erase(std::find(from.begin(), from.end(), m));
      to.insert(std::lower_bound(to.begin(), to.end(), m), m);
      group_of_[m] = h;
    }
    for (const auto& [p, kind] : flow_.producers[t])
      if (group_of_[p] != h) successors_[size_t(group_of_[p])].insert(h);
  }

  static bool is_bf16_rounding(const Tensor& t) {
    return t->dtype == DType::kBFloat16 && !t->reduction() && t->body.as<CastNode>() != nullptr;
  }

  bool is_output(int t) const { return outputs_.count(a_.tes[size_t(t)].tensor.get()) > 0; }

  // Whether compute c reads compute p's output at one site and every element of it, as many elements as p has: each
  // element of p once (a permutation, a reshape; not a broadcast, which would recompute p where p is folded into c).
  bool reads_each_element_once(int c, int p) const {
    for (const TensorAccess& access : a_.tes[size_t(c)].accesses)
      if (access.tensor.get() == a_.tes[size_t(p)].tensor.get())
        return access.reads == 1 && access.elements == a_.tes[size_t(p)].parallelism &&
               a_.tes[size_t(c)].parallelism == a_.tes[size_t(p)].parallelism;
    return false;
  }

  void place(int t, int depth) {
    bool reduces = a_.tes[t].te_class == TeClass::kManyToMany;
    int chosen = -1;
    std::string key;
    if (options_.horizontal && reduces) {
      key = horizontal_key(a_.tes[t], depth);
      auto it = partner_group_.find(key);
      if (it != partner_group_.end() && may_join(t, it->second, true)) chosen = it->second;
    }
    for (size_t i = 0; chosen < 0 && i < flow_.producers[t].size(); ++i) {
      int g = group_of_[flow_.producers[t][i].first];
      if (may_join(t, g, false)) chosen = g;
    }
    if (chosen < 0) {
      chosen = static_cast<int>(members_.size());
      members_.emplace_back();
      successors_.emplace_back();
      has_reduction_.push_back(false);
      reduction_blocks_.push_back(0);
      computes_.push_back(false);
    }
    computes_[chosen] = computes_[chosen] || a_.tes[t].flops > 0;
    if (options_.horizontal && reduces) partner_group_[key] = chosen;
    members_[chosen].push_back(t);
    group_of_[t] = chosen;
    if (reduces) {
      has_reduction_[chosen] = true;
      reduction_blocks_[chosen] += blocks_for(a_.tes[t]);
    }
    for (const auto& [p, kind] : flow_.producers[t]) {
      if (group_of_[p] != chosen) successors_[group_of_[p]].insert(chosen);
    }
  }

  // Vertical joining needs no barrier inside the group: after a reduction, only a non-reduction TE that reads
  // the group's tensors element for element (identity or broadcast) may join; a group without a reduction takes
  // any non-reduction TE (index rewriting), and a reduction only when its members do no arithmetic (pure data
  // movement folds into the reduction's loads; anything else every block would recompute). A horizontal
  // partner reads nothing of the group and keeps the group within one cooperative launch.
  bool may_join(int t, int g, bool horizontal) const {
    if (options_.part && (*options_.part)[t] != (*options_.part)[members_[g].front()]) return false;
    bool t_reduces = a_.tes[t].te_class == TeClass::kManyToMany;
    for (const auto& [p, kind] : flow_.producers[t]) {
      if (group_of_[p] != g) continue;
      if (horizontal) return false;
      if (options_.single_reader_edges_only && flow_.readers[size_t(p)].size() != 1) return false;
      if (has_reduction_[g] && (t_reduces || !is_epilogue_read(kind))) return false;
    }
    if (!horizontal && t_reduces && (has_reduction_[g] || computes_[g])) return false;
    if (horizontal && options_.block_limit > 0 && reduction_blocks_[g] + blocks_for(a_.tes[t]) > options_.block_limit) {
      return false;
    }
    for (const auto& [p, kind] : flow_.producers[t]) {
      int h = group_of_[p];
      if (h != g && reaches(g, h)) return false;  // h -> t would close a cycle through g
    }
    return true;
  }

  bool reaches(int from, int to) const {
    std::vector<int> stack{from};
    std::unordered_set<int> seen{from};
    while (!stack.empty()) {
      int g = stack.back();
      stack.pop_back();
      for (int s : successors_[g]) {
        if (s == to) return true;
        if (seen.insert(s).second) stack.push_back(s);
      }
    }
    return false;
  }

  // Kahn's order over the group graph, taking the ready group with the smallest first member each time.
  std::vector<std::vector<int>> ordered_groups() const {
    size_t n = members_.size();
    std::vector<int> indegree(n, 0);
    for (const auto& succ : successors_) {
      for (int s : succ) ++indegree[s];
    }
    using Entry = std::pair<int, int>;  // (first member, group)
    std::priority_queue<Entry, std::vector<Entry>, std::greater<>> ready;
    for (size_t g = 0; g < n; ++g) {
      if (indegree[g] == 0) ready.emplace(members_[g].front(), static_cast<int>(g));
    }
    std::vector<std::vector<int>> out;
    while (!ready.empty()) {
      int g = ready.top().second;
      ready.pop();
      out.push_back(members_[g]);
      for (int s : successors_[g]) {
        if (--indegree[s] == 0) ready.emplace(members_[s].front(), s);
      }
    }
    if (out.size() != n) throw std::logic_error("fusion_groups: the group graph has a cycle");
    return out;
  }

  const ProgramAnalysis& a_;
  Dataflow flow_;
  FusionOptions options_;
  std::vector<int> group_of_;
  std::vector<std::vector<int>> members_;
  std::vector<std::unordered_set<int>> successors_;
  std::vector<bool> has_reduction_;
  std::vector<int64_t> reduction_blocks_;
  std::vector<bool> computes_;  // some member does arithmetic: a reduction would recompute it in every block
  std::unordered_map<std::string, int> partner_group_;  // horizontal key -> latest group holding such a TE
  std::unordered_set<const TensorNode*> outputs_;
};

PartitionPlan empty_plan(const std::string& strategy, const ProgramAnalysis& a) {
  PartitionPlan plan;
  plan.strategy = strategy;
  plan.program = a.program_name;
  plan.target = a.target.name;
  return plan;
}

std::vector<std::string> names_of(const ProgramAnalysis& a, const std::vector<int>& positions) {
  std::vector<std::string> names;
  for (int p : positions) names.push_back(a.tes[p].tensor->name);
  return names;
}

// One kernel of one stage per group.
PartitionPlan kernel_per_group(const std::string& strategy, const ProgramAnalysis& a,
                               const std::vector<std::vector<int>>& groups) {
  PartitionPlan plan = empty_plan(strategy, a);
  for (const std::vector<int>& g : groups) plan.kernels.push_back(PlanKernel{{PlanStage{names_of(a, g), false}}, {}});
  return plan;
}

bool has_reduction(const ProgramAnalysis& a, const std::vector<int>& group) {
  return std::any_of(group.begin(), group.end(), [&](int t) { return a.tes[t].te_class == TeClass::kManyToMany; });
}

// What groups must share to be fused horizontally into one TE: the anchor's (first reduction, else first TE)
// shape and reduction size, and the classes of the members in order.
std::string horizontal_signature(const ProgramAnalysis& a, const std::vector<int>& group) {
  int anchor = group.front();
  for (int t : group) {
    if (a.tes[t].te_class == TeClass::kManyToMany) {
      anchor = t;
      break;
    }
  }
  std::string key;
  for (int64_t d : a.tes[anchor].tensor->shape) key += std::to_string(d) + "x";
  key += "/r" + std::to_string(a.tes[anchor].reduction_size) + "/";
  for (int t : group) key += te_class_name(a.tes[t].te_class) + std::string(",");
  return key;
}

// Chooses the kernel's resident tensors: read by two or more of its stages and made outside it, most bytes saved
// first (bytes x (stages reading - 1), then name), while they fit the capacity.
void choose_resident(const ProgramAnalysis& a, PlanKernel& kernel, int64_t capacity) {
  std::unordered_map<std::string, int> kernel_computes;
  for (const PlanStage& s : kernel.stages) {
    for (const std::string& name : s.tes) kernel_computes[name] = 1;
  }
  std::map<std::string, int> stages_reading;  // by name: deterministic
  std::map<std::string, int64_t> bytes;
  std::unordered_map<std::string, const TeAnalysis*> te_by_name;
  for (const TeAnalysis& te : a.tes) te_by_name[te.tensor->name] = &te;
  std::unordered_map<std::string, int64_t> tensor_bytes;
  for (const TensorReuse& r : a.tensors) tensor_bytes[r.tensor->name] = r.bytes;
  for (const PlanStage& s : kernel.stages) {
    std::unordered_set<std::string> read_here;
    for (const std::string& name : s.tes) {
      for (const TensorAccess& access : te_by_name.at(name)->accesses) {
        const std::string& input = access.tensor->name;
        if (!kernel_computes.count(input)) read_here.insert(input);
      }
    }
    for (const std::string& input : read_here) {
      ++stages_reading[input];
      bytes[input] = tensor_bytes.at(input);
    }
  }
  std::vector<std::pair<int64_t, std::string>> candidates;  // (-saved, name)
  for (const auto& [name, count] : stages_reading) {
    if (count >= 2) candidates.emplace_back(-bytes[name] * (count - 1), name);
  }
  std::sort(candidates.begin(), candidates.end());
  int64_t used = 0;
  for (const auto& [saved, name] : candidates) {
    if (used + bytes[name] > capacity) continue;
    used += bytes[name];
    kernel.resident.push_back(name);
  }
  std::sort(kernel.resident.begin(), kernel.resident.end());
}

// Chooses what each stage after a barrier prefetches: the tensors it reads from memory (made before the kernel),
// unless they are resident or the stage before reads them too (then they are in cache already), in the order its
// TEs first read them, while they fit the capacity. What does not fit streams as before. The fetch overlaps the end
// of the stage before and the barrier wait; a stage without a barrier before it starts as soon as a thread is
// free, and its own loads are as early as a prefetch would be.
void choose_prefetch(const ProgramAnalysis& a, PlanKernel& kernel, int64_t capacity) {
  std::unordered_set<std::string> kernel_computes, resident(kernel.resident.begin(), kernel.resident.end());
  for (const PlanStage& s : kernel.stages) kernel_computes.insert(s.tes.begin(), s.tes.end());
  std::unordered_map<std::string, const TeAnalysis*> te_by_name;
  for (const TeAnalysis& te : a.tes) te_by_name[te.tensor->name] = &te;
  std::unordered_map<std::string, int64_t> tensor_bytes;
  for (const TensorReuse& r : a.tensors) tensor_bytes[r.tensor->name] = r.bytes;
  auto reads_from_memory = [&](const PlanStage& s) {
    std::vector<std::string> names;
    for (const std::string& name : s.tes) {
      for (const TensorAccess& access : te_by_name.at(name)->accesses) {
        const std::string& input = access.tensor->name;
        if (!kernel_computes.count(input) && std::find(names.begin(), names.end(), input) == names.end())
          names.push_back(input);
      }
    }
    return names;
  };
  std::vector<std::string> previous =
      kernel.stages.empty() ? std::vector<std::string>{} : reads_from_memory(kernel.stages.front());
  for (size_t s = 1; s < kernel.stages.size(); ++s) {
    std::vector<std::string> reads = reads_from_memory(kernel.stages[s]);
    if (!kernel.stages[s].barrier_before) {
      previous = std::move(reads);
      continue;
    }
    int64_t used = 0;
    for (const std::string& name : reads) {
      if (resident.count(name) || std::find(previous.begin(), previous.end(), name) != previous.end()) continue;
      if (used + tensor_bytes.at(name) > capacity) continue;
      used += tensor_bytes.at(name);
      kernel.stages[s].prefetch.push_back(name);
    }
    previous = std::move(reads);
  }
}

}  // namespace

std::vector<std::string> plan_strategy_names() { return {"unfused", "rules", "subgraph", "global"}; }

PartitionPlan make_plan(const std::string& strategy, const ProgramAnalysis& analysis) {
  if (strategy == "unfused") return unfused_plan(analysis);
  if (strategy == "rules") return rules_plan(analysis);
  if (strategy == "subgraph") return subgraph_plan(analysis);
  if (strategy == "global") return global_plan(analysis);
  throw std::invalid_argument("unknown plan strategy '" + strategy + "' (known: unfused, rules, subgraph, global)");
}

PartitionPlan make_plan(const std::string& strategy, const Program& program, const Target& target) {
  return make_plan(strategy, analyze(program, target));
}

PartitionPlan unfused_plan(const ProgramAnalysis& analysis) {
  std::vector<std::vector<int>> groups;
  for (int t = 0; t < static_cast<int>(analysis.tes.size()); ++t) groups.push_back({t});
  return kernel_per_group("unfused", analysis, groups);
}

std::vector<std::vector<int>> fusion_groups(const ProgramAnalysis& analysis, const FusionOptions& options) {
  return GroupBuilder(analysis, options).build();
}

PartitionPlan rules_plan(const ProgramAnalysis& analysis) {
  return kernel_per_group("rules", analysis, fusion_groups(analysis, FusionOptions{true, false, 0}));
}

PartitionPlan subgraph_plan(const ProgramAnalysis& analysis) {
  return kernel_per_group("subgraph", analysis, fusion_groups(analysis, FusionOptions{false, false, 0}));
}

int64_t cooperative_block_limit(const Target& target, bool with_reduction) {
  if (target.kind != TargetKind::kGpu) return 0;
  const GpuLimits& g = target.gpu;
  using E = GpuBlockEstimate;
  int64_t per_sm = std::min(g.max_blocks_per_sm, g.max_threads_per_sm / E::kThreadsPerBlock);
  per_sm = std::min(per_sm, g.registers_per_sm / (E::kThreadsPerBlock * E::kRegistersPerThread));
  if (with_reduction) per_sm = std::min(per_sm, g.shared_memory_per_sm / E::kReductionSharedBytes);
  return g.sm_count * per_sm;
}

int64_t group_blocks(const ProgramAnalysis& analysis, const std::vector<int>& group) {
  int64_t widest = 0, reductions = 0;
  for (int t : group) {
    if (analysis.tes[t].te_class == TeClass::kManyToMany)
      reductions += blocks_for(analysis.tes[t]);
    else
      widest = std::max(widest, blocks_for(analysis.tes[t]));
  }
  return std::max(widest, reductions);
}

int64_t resident_capacity_bytes(const Target& target) {
  if (target.kind == TargetKind::kGpu) {
    return target.gpu.sm_count * (target.gpu.shared_memory_per_sm + target.gpu.registers_per_sm * 4 / 2);
  }
  // The cores' private L2s: with static scheduling each thread computes the same rows of a stage at every step,
  // so its slice of the weights stays in its own L2 (Souffle's per-thread weight slices). The shared L3 is not
  // counted: the paper LSTM (1 MB L2s, 32 MB L3) ran layer by layer in 14.3 ms with its slices in L2 and as a
  // wavefront over 8 layers streaming 16 MB from the L3 every step in 15.4 ms (20.9 ms with register tiles,
  // whose four row streams the prefetcher follows worse). On an 8 MB L3, a wavefront over 4 layers ran 30%
  // slower than layer by layer.
  return target.cpu.cores * target.cpu.l2_bytes;
}

int64_t prefetch_capacity_bytes(const Target& target) {
  // On a CPU, each thread's prefetches of the next stage's inputs before the barrier cost time: plans without them
  // ran Swin in bf16 1.05-1.08x, BERT 1.01-1.03x, ResNeXt 1.02-1.03x faster, fp32 within noise (docs/plans.md).
  return target.kind == TargetKind::kGpu ? target.gpu.l2_bytes / 2 : 0;
}

// Which kernel of a global plan each TE goes to. Weights that several TEs read (an LSTM layer's matrices, read
// at every step) are worth keeping on chip only if they fit: when all of them together exceed the target's
// capacity, the TEs are cut into kernels, each within it. TEs sharing a weight stay together (clusters; clusters
// in a dependency cycle merge), and clusters are packed into kernels in dependency order. Without such weights,
// or when they fit, every TE is in kernel 0.
static std::vector<int> capacity_parts(const ProgramAnalysis& a, const Dataflow& flow, int64_t capacity) {
  const int n = static_cast<int>(a.tes.size());
  std::vector<int> part(n, 0);
  std::map<std::string, std::set<int>> readers;  // placeholder -> TEs reading it
  std::map<std::string, int64_t> bytes;
  for (const TensorReuse& r : a.tensors) bytes[r.tensor->name] = r.bytes;
  for (int t = 0; t < n; ++t) {
    for (const TensorAccess& access : a.tes[t].accesses)
      if (access.tensor->is_placeholder()) readers[access.tensor->name].insert(t);
  }
  int64_t shared_bytes = 0;
  for (const auto& [name, ts] : readers) shared_bytes += ts.size() > 1 ? bytes[name] : 0;
  if (shared_bytes <= capacity) return part;

  // Clusters: TEs joined through a shared weight.
  std::vector<int> parent(n);
  std::iota(parent.begin(), parent.end(), 0);
  std::function<int(int)> root = [&](int x) { return parent[x] == x ? x : parent[x] = root(parent[x]); };
  for (const auto& [name, ts] : readers) {
    for (int t : ts) parent[root(t)] = root(*ts.begin());
  }
  // Cluster graph, then its strongly connected components (Tarjan, iterative), each a unit of packing.
  std::vector<std::set<int>> next(n);
  for (int t = 0; t < n; ++t) {
    for (const auto& [p, kind] : flow.producers[t])
      if (root(p) != root(t)) next[root(p)].insert(root(t));
  }
  std::vector<int> index(n, -1), low(n, 0), component(n, -1);
  std::vector<bool> on_stack(n, false);
  std::vector<int> stack;
  int counter = 0, components = 0;
  for (int start = 0; start < n; ++start) {
    if (root(start) != start || index[start] >= 0) continue;
    std::vector<std::pair<int, std::set<int>::const_iterator>> dfs{{start, next[start].begin()}};
    index[start] = low[start] = counter++;
    stack.push_back(start);
    on_stack[start] = true;
    while (!dfs.empty()) {
      auto& [v, it] = dfs.back();
      if (it != next[v].end()) {
        int w = *it++;
        if (index[w] < 0) {
          index[w] = low[w] = counter++;
          stack.push_back(w);
          on_stack[w] = true;
          dfs.push_back({w, next[w].begin()});
        } else if (on_stack[w]) {
          low[v] = std::min(low[v], index[w]);
        }
        continue;
      }
      if (low[v] == index[v]) {
        for (int w = -1; w != v;) {
          w = stack.back();
          stack.pop_back();
          on_stack[w] = false;
          component[w] = components;
        }
        ++components;
      }
      int done = v;
      dfs.pop_back();
      if (!dfs.empty()) low[dfs.back().first] = std::min(low[dfs.back().first], low[done]);
    }
  }
  // Components in dependency order, the one holding the lowest TE first among those ready.
  std::vector<int> first_te(components, n), indegree(components, 0);
  std::vector<std::set<int>> component_next(components);
  std::vector<std::set<std::string>> weights(components);
  for (int t = 0; t < n; ++t) first_te[component[root(t)]] = std::min(first_te[component[root(t)]], t);
  for (int c = 0; c < n; ++c) {
    if (root(c) != c) continue;
    for (int d : next[c])
      if (component[c] != component[d] && component_next[component[c]].insert(component[d]).second)
        ++indegree[component[d]];
  }
  for (const auto& [name, ts] : readers) {
    if (ts.size() > 1) weights[component[root(*ts.begin())]].insert(name);
  }
  std::set<std::pair<int, int>> ready;  // (first TE, component)
  for (int c = 0; c < components; ++c)
    if (indegree[c] == 0) ready.insert({first_te[c], c});
  std::vector<int> part_of_component(components, 0);
  std::set<std::string> kernel_weights;
  int64_t kernel_bytes = 0;
  int current = 0;
  bool kernel_empty = true;
  while (!ready.empty()) {
    int c = ready.begin()->second;
    ready.erase(ready.begin());
    int64_t added = 0;
    for (const std::string& w : weights[c]) added += kernel_weights.count(w) ? 0 : bytes[w];
    if (!kernel_empty && added > 0 && kernel_bytes + added > capacity) {
      ++current;
      kernel_weights.clear();
      kernel_bytes = 0;
      added = 0;
      for (const std::string& w : weights[c]) added += bytes[w];
    }
    kernel_weights.insert(weights[c].begin(), weights[c].end());
    kernel_bytes += added;
    kernel_empty = false;
    part_of_component[c] = current;
    for (int d : component_next[c])
      if (--indegree[d] == 0) ready.insert({first_te[d], d});
  }
  for (int t = 0; t < n; ++t) part[t] = part_of_component[component[root(t)]];
  return part;
}

PartitionPlan global_plan(const ProgramAnalysis& analysis) {
  const ProgramAnalysis& a = analysis;
  bool gpu = a.target.kind == TargetKind::kGpu;
  Dataflow flow(a);
  const int64_t capacity = resident_capacity_bytes(a.target);
  const int64_t prefetch_capacity = prefetch_capacity_bytes(a.target);
  const std::vector<int> te_part = capacity_parts(a, flow, capacity);
  std::vector<std::vector<int>> groups =
      fusion_groups(a, FusionOptions{false, true, gpu ? cooperative_block_limit(a.target, true) : 0, &te_part});
  std::vector<int> group_of(a.tes.size());
  for (size_t g = 0; g < groups.size(); ++g) {
    for (int t : groups[g]) group_of[t] = static_cast<int>(g);
  }
  // Level = longest path from a source in the group graph; groups of one level are independent of each other.
  std::vector<int> level(groups.size(), 0);
  for (size_t g = 0; g < groups.size(); ++g) {
    for (int t : groups[g]) {
      for (const auto& [p, kind] : flow.producers[t]) {
        if (group_of[p] != static_cast<int>(g)) level[g] = std::max(level[g], level[group_of[p]] + 1);
      }
    }
  }
  std::vector<int> part(groups.size());
  for (size_t g = 0; g < groups.size(); ++g) part[g] = te_part[groups[g].front()];
  // Horizontal fusion: groups of one part and level with the same signature form one stage (on a GPU, as many
  // stages as it takes for each to fit a cooperative launch). Stages go by part, level, then their first TE.
  std::map<std::tuple<int, int, std::string>, std::vector<int>> buckets;
  for (size_t g = 0; g < groups.size(); ++g) {
    buckets[{part[g], level[g], horizontal_signature(a, groups[g])}].push_back(static_cast<int>(g));
  }
  struct Stage {
    std::vector<int> tes;
    bool fits = true;
    int part = 0;
  };
  std::vector<std::pair<std::tuple<int, int, int>, Stage>> stages;  // ((part, level, first TE), stage)
  for (const auto& [key, members] : buckets) {
    const auto& [key_part, key_level, signature] = key;
    int64_t limit = gpu ? cooperative_block_limit(a.target, has_reduction(a, groups[members.front()])) : 0;
    Stage current{{}, true, key_part};
    int64_t blocks = 0;
    auto close = [&] {
      if (current.tes.empty()) return;
      std::sort(current.tes.begin(), current.tes.end());
      stages.push_back({{key_part, key_level, current.tes.front()}, current});
      current = Stage{{}, true, key_part};
      blocks = 0;
    };
    for (int g : members) {
      int64_t b = gpu ? group_blocks(a, groups[g]) : 0;
      if (gpu && b > limit) {  // too wide for any cooperative launch: a kernel of its own
        Stage alone{groups[g], false, key_part};
        stages.push_back({{key_part, key_level, alone.tes.front()}, alone});
        continue;
      }
      if (gpu && blocks + b > limit) close();
      current.tes.insert(current.tes.end(), groups[g].begin(), groups[g].end());
      blocks += b;
    }
    close();
  }
  std::sort(stages.begin(), stages.end(), [](const auto& x, const auto& y) { return x.first < y.first; });

  PartitionPlan plan = empty_plan("global", a);
  std::vector<int> kernel_of(a.tes.size(), -1), stage_of(a.tes.size(), -1);
  int last_barrier = 0;  // index of the current kernel's stage that the latest barrier precedes
  auto open_kernel = [&] {
    plan.kernels.emplace_back();
    last_barrier = 0;
  };
  for (size_t i = 0; i < stages.size(); ++i) {
    const Stage& s = stages[i].second;
    bool new_part = i > 0 && s.part != stages[i - 1].second.part;
    if (plan.kernels.empty() || ((!s.fits || new_part) && !plan.kernels.back().stages.empty())) open_kernel();
    PlanKernel* kernel = &plan.kernels.back();
    int k = static_cast<int>(plan.kernels.size()) - 1;
    int index = static_cast<int>(kernel->stages.size());
    bool barrier = false;
    for (int t : s.tes) {
      for (const auto& [p, kind] : flow.producers[t]) {
        if (kernel_of[p] == k && stage_of[p] >= last_barrier && stage_of[p] < index) barrier = true;
      }
    }
    if (barrier) last_barrier = index;
    kernel->stages.push_back(PlanStage{names_of(a, s.tes), barrier});
    for (int t : s.tes) {
      kernel_of[t] = k;
      stage_of[t] = index;
    }
    if (!s.fits) open_kernel();
  }
  if (!plan.kernels.empty() && plan.kernels.back().stages.empty()) plan.kernels.pop_back();
  for (PlanKernel& kernel : plan.kernels) {
    if (kernel.stages.size() > 1) choose_resident(a, kernel, capacity);
    choose_prefetch(a, kernel, prefetch_capacity);
  }
  return plan;
}

}  // namespace ingot
