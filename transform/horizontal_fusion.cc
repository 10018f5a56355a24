#include "transform/horizontal_fusion.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <queue>
#include <stdexcept>
#include <unordered_map>

#include "ir/functor.h"
#include "transform/program_rewrite.h"

namespace ingot {

namespace {

[[noreturn]] void reject(const std::string& member, const std::string& reason) {
  throw std::invalid_argument("merge_horizontal: '" + member + "' " + reason);
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t d = 0; d < shape.size(); ++d) {
    if (d) s += ", ";
    s += std::to_string(shape[d]);
  }
  return s + "]";
}

// What members must share besides shape and dtype: none (no reduction) or the combiner and reduce extents.
std::string reduction_signature(const Tensor& t) {
  const ReduceNode* r = t->reduction();
  if (!r) return "none";
  std::string s = std::string(reduce_op_name(r->op)) + " over";
  for (const IterVar& k : r->axes) {
    s += ' ';  // appended piecewise: GCC 12 misreports "literal" + std::to_string as overlapping (-Wrestrict)
    s += std::to_string(k.extent);
  }
  return s;
}

std::vector<Tensor> checked_members(const Program& program, const std::vector<std::string>& group) {
  if (group.size() < 2)
    throw std::invalid_argument("merge_horizontal: a group needs at least two members, got " +
                                std::to_string(group.size()) + (group.empty() ? "" : " ('" + group[0] + "')"));
  std::vector<Tensor> members;
  for (const std::string& name : group) {
    Tensor t = program.find(name);
    if (!t) reject(name, "is not a tensor of program '" + program.name() + "'");
    if (t->is_placeholder()) reject(name, "is a placeholder, not a compute");
    if (program.is_output(t)) reject(name, "is a program output; outputs keep their tensors and are not merged");
    for (const Tensor& m : members)
      if (m.same_as(t)) reject(name, "appears twice in the group");
    const Tensor& first = members.empty() ? t : members[0];
    if (t->shape != first->shape)
      reject(name, "has shape " + shape_text(t->shape) + ", unlike '" + first->name + "' " + shape_text(first->shape));
    if (t->dtype != first->dtype)
      reject(name, std::string("has dtype ") + dtype_name(t->dtype) + ", unlike '" + first->name + "' " +
                       dtype_name(first->dtype));
    if (reduction_signature(t) != reduction_signature(first))
      reject(name, "has reduction (" + reduction_signature(t) + "), unlike '" + first->name + "' (" +
                       reduction_signature(first) + ")");
    members.push_back(t);
  }
  return members;
}

// Throws when a member of the group reads another, directly or through other computes: one sweep in topological
// order carries, for each tensor, a member it depends on. producers are positions into order.
void check_independent(const std::vector<Tensor>& order, const std::vector<std::vector<int>>& producers,
                       const std::vector<int>& positions) {
  std::vector<int> source(order.size(), -1);
  std::vector<bool> is_member(order.size(), false);
  for (int p : positions) is_member[p] = true;
  for (size_t t = *std::min_element(positions.begin(), positions.end()); t < order.size(); ++t) {
    for (int p : producers[t]) {
      if (source[p] < 0) continue;
      if (is_member[t])
        reject(order[t]->name, "depends on '" + order[source[p]]->name + "'; members must be independent");
      source[t] = source[p];
    }
    if (is_member[t]) source[t] = int(t);
  }
}

// The merged compute of checked members.
Tensor merge_members(const std::string& name, const std::vector<Tensor>& members) {
  const Tensor& first = members[0];
  const ReduceNode* first_reduction = first->reduction();
  std::vector<std::string> spatial;
  for (const IterVar& a : first->axes) spatial.push_back(a.name());
  std::vector<std::string> taken = axis_names(first);
  std::string group_axis = unique_name("g", taken);
  Expr g = var(group_axis);

  // Each member's source (the reduction's source, or the body) in the merged axes.
  std::vector<Expr> sources;
  for (const Tensor& m : members) {
    std::unordered_map<std::string, Expr> rename;
    for (size_t d = 0; d < m->axes.size(); ++d) rename[m->axes[d].name()] = var(spatial[d]);
    const ReduceNode* r = m->reduction();
    if (r)
      for (size_t k = 0; k < r->axes.size(); ++k) rename[r->axes[k].name()] = first_reduction->axes[k].var;
    sources.push_back(substitute(r ? r->source : m->body, rename));
  }
  Expr chosen = sources.back();
  for (size_t m = members.size() - 1; m-- > 0;) chosen = select(eq(g, int64_t(m)), sources[m], chosen);
  Expr body = first_reduction ? reduce(first_reduction->op, chosen, first_reduction->axes) : chosen;

  std::vector<int64_t> shape{int64_t(members.size())};
  shape.insert(shape.end(), first->shape.begin(), first->shape.end());
  std::vector<std::string> names{group_axis};
  names.insert(names.end(), spatial.begin(), spatial.end());
  return compute(
      name, shape, [&](const std::vector<Expr>&) { return body; }, names);
}

}  // namespace

std::string horizontal_merge_name(const std::vector<std::string>& group) {
  return (group.empty() ? std::string("empty") : group[0]) + "_hmerge";
}

Program merge_horizontal(const Program& program, const std::vector<std::vector<std::string>>& groups) {
  const std::vector<Tensor>& order = program.tensors();
  const int n = int(order.size());
  std::unordered_map<const TensorNode*, int> position;
  for (int t = 0; t < n; ++t) position[order[t].get()] = t;
  std::vector<std::vector<int>> producers(n);
  for (int t = 0; t < n; ++t)
    for (const Tensor& in : order[t]->inputs()) producers[t].push_back(position.at(in.get()));

  // Each tensor is a node of the graph in which every group is one node (n + its index).
  std::vector<int> node(n);
  std::iota(node.begin(), node.end(), 0);
  std::vector<std::vector<Tensor>> members(groups.size());
  std::unordered_map<const TensorNode*, std::pair<size_t, int64_t>> slot;  // member -> (group, position in it)
  for (size_t g = 0; g < groups.size(); ++g) {
    members[g] = checked_members(program, groups[g]);
    std::string name = horizontal_merge_name(groups[g]);
    if (program.find(name)) reject(groups[g][0], "cannot be merged: the merged name '" + name + "' is taken");
    std::vector<int> positions;
    for (size_t m = 0; m < members[g].size(); ++m) {
      const Tensor& t = members[g][m];
      if (slot.count(t.get())) reject(t->name, "belongs to two groups");
      slot[t.get()] = {g, int64_t(m)};
      positions.push_back(position.at(t.get()));
      node[positions.back()] = n + int(g);
    }
    check_independent(order, producers, positions);
  }

  // Kahn's algorithm on that graph, taking ready nodes by their first tensor's position: the merged program's
  // order. A node left over means two groups each read the other's results, which no order can compute.
  const int nodes = n + int(groups.size());
  std::vector<int> first(nodes, n), pending(nodes, 0);
  std::vector<std::vector<int>> successors(nodes);
  for (int t = 0; t < n; ++t) {
    first[node[t]] = std::min(first[node[t]], t);
    for (int p : producers[t])
      if (node[p] != node[t]) {
        successors[node[p]].push_back(node[t]);
        ++pending[node[t]];
      }
  }
  std::priority_queue<std::pair<int, int>, std::vector<std::pair<int, int>>, std::greater<>> ready;
  for (int v = 0; v < nodes; ++v)
    if (first[v] < n && pending[v] == 0) ready.push({first[v], v});

  std::vector<Tensor> merged(groups.size());
  ProgramRewriter rewriter([&](const Tensor& original, const std::vector<Expr>& indices) -> Expr {
    auto it = slot.find(original.get());
    if (it == slot.end()) return Expr();
    std::vector<Expr> at{int_imm(it->second.second)};
    at.insert(at.end(), indices.begin(), indices.end());
    return read(merged[it->second.first], at);
  });
  int done = 0;
  while (!ready.empty()) {
    const int v = ready.top().second;
    ready.pop();
    ++done;
    if (v >= n) {
      std::vector<Tensor> rewritten;
      for (const Tensor& m : members[v - n]) rewritten.push_back(with_body(m, rewriter.rewrite_body(m)));
      merged[v - n] = merge_members(horizontal_merge_name(groups[v - n]), rewritten);
    } else if (!order[v]->is_placeholder()) {
      rewriter.set_result(order[v], with_body(order[v], rewriter.rewrite_body(order[v])));
    }
    for (int s : successors[v])
      if (--pending[s] == 0) ready.push({first[s], s});
  }
  const int present = int(std::count_if(first.begin(), first.end(), [&](int f) { return f < n; }));
  if (done < present)  // the program itself is acyclic, so a group lies on the cycle
    for (int v = n; v < nodes; ++v)
      if (pending[v] > 0)
        reject(groups[v - n][0], "cannot be merged: its group and another group each read the other's results");

  return rewriter.program_of(program);
}

std::vector<std::vector<std::string>> find_horizontal_groups(const Program& program,
                                                             const HorizontalGroupOptions& options) {
  std::unordered_map<const TensorNode*, int> depth;
  std::map<std::string, std::vector<Tensor>> buckets;
  for (const Tensor& t : program.tensors()) {
    if (t->is_placeholder()) continue;
    int d = 0;
    for (const Tensor& in : t->inputs())
      if (!in->is_placeholder()) d = std::max(d, depth.at(in.get()) + 1);
    depth[t.get()] = d;
    if (!t->reduction() || program.is_output(t)) continue;
    std::string key =
        std::to_string(d) + " " + shape_text(t->shape) + " " + dtype_name(t->dtype) + " " + reduction_signature(t);
    buckets[key].push_back(t);
  }
  std::vector<std::vector<Tensor>> groups;
  for (auto& [key, members] : buckets) {
    if (!options.require_common_input) {
      groups.push_back(members);
      continue;
    }
    // Connected components of "reads a tensor in common" (union-find over member positions).
    std::vector<size_t> parent(members.size());
    std::iota(parent.begin(), parent.end(), 0);
    auto root = [&](size_t x) {
      while (parent[x] != x) x = parent[x] = parent[parent[x]];
      return x;
    };
    std::unordered_map<const TensorNode*, size_t> reader_of;
    for (size_t m = 0; m < members.size(); ++m)
      for (const Tensor& in : members[m]->inputs()) {
        auto [it, fresh] = reader_of.emplace(in.get(), m);
        if (!fresh) parent[root(m)] = root(it->second);
      }
    std::map<size_t, std::vector<Tensor>> components;
    for (size_t m = 0; m < members.size(); ++m) components[root(m)].push_back(members[m]);
    for (auto& [r, component] : components) groups.push_back(component);
  }
  std::unordered_map<const TensorNode*, size_t> order;
  for (const Tensor& t : program.tensors()) order.emplace(t.get(), order.size());
  std::vector<std::vector<std::string>> named;
  std::sort(groups.begin(), groups.end(),
            [&](const auto& a, const auto& b) { return order.at(a[0].get()) < order.at(b[0].get()); });
  for (const auto& group : groups) {
    if (group.size() < 2) continue;
    named.emplace_back();
    for (const Tensor& t : group) named.back().push_back(t->name);
  }
  return named;
}

}  // namespace ingot
