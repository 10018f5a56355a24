#include "ir/horizontal_batch.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <unordered_map>

#include "ir/functor.h"
#include "ir/simplify.h"
#include "ir/tensor_copier.h"

namespace ingot {

namespace {

const char* const kHole = "ingot_batch_hole";

// Every read of the body, parents before children.
std::vector<Expr> reads_of(const Expr& body) {
  std::vector<Expr> reads;
  for_each_node(body, [&](const Expr& e) {
    if (e.as<TensorReadNode>()) reads.push_back(e);
  });
  return reads;
}

// The expression with the read `hole` replaced.
class HoleFiller final : public ExprMutator {
 public:
  HoleFiller(const Expr& hole, Expr with) : hole_(hole.get()), with_(std::move(with)) {}
  Expr mutate(const Expr& e) override { return e.get() == hole_ ? with_ : mutate_children(e); }

 private:
  const ExprNode* hole_;
  Expr with_;
};

Expr fill_hole(const Expr& body, const Expr& hole, const Expr& with) { return HoleFiller(hole, with).mutate(body); }

// The variables of a read's indices, in order of first use, each once.
std::vector<std::string> index_variables(const Expr& read) {
  std::vector<std::string> names;
  for (const Expr& index : read.as<TensorReadNode>()->indices)
    for_each_node(index, [&](const Expr& e) {
      auto* v = e.as<VarNode>();
      if (v && std::find(names.begin(), names.end(), v->name) == names.end()) names.push_back(v->name);
    });
  return names;
}

// Extent of each axis (spatial or reduction) of a compute, by name.
std::map<std::string, int64_t> axis_extents(const Tensor& t) {
  std::map<std::string, int64_t> extents;
  for (const IterVar& axis : t->axes) extents[axis.name()] = axis.extent;
  if (const ReduceNode* r = t->reduction())
    for (const IterVar& axis : r->axes) extents[axis.name()] = axis.extent;
  return extents;
}

// What every member of a group shares but its body: its shape, dtype, axes, and the variables of the read they differ
// in.
std::string form_header(const Tensor& t, const Expr& hole) {
  std::string form = std::string(dtype_name(t->dtype)) + "[";
  for (const IterVar& axis : t->axes) form += axis.name() + ":" + std::to_string(axis.extent) + ",";
  form += "] reads " + std::string(dtype_name(hole.dtype())) + " (";
  for (const std::string& v : index_variables(hole)) form += v + ",";
  return form + ") ";
}

Expr body_with_hole(const Tensor& t, const Expr& hole) { return fill_hole(t->body, hole, var(kHole, hole.dtype())); }

// The header and the body printed with a variable in place of the read the members differ in.
std::string form_with_hole(const Tensor& t, const Expr& hole) {
  return form_header(t, hole) + to_string(body_with_hole(t, hole));
}

// Names in the order a person counts them: "t9" before "t10".
bool natural_less(const std::string& a, const std::string& b) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (std::isdigit(static_cast<unsigned char>(a[i])) && std::isdigit(static_cast<unsigned char>(b[j]))) {
      size_t i_end = i, j_end = j;
      while (i_end < a.size() && std::isdigit(static_cast<unsigned char>(a[i_end]))) ++i_end;
      while (j_end < b.size() && std::isdigit(static_cast<unsigned char>(b[j_end]))) ++j_end;
      const std::string x = a.substr(i, i_end - i), y = b.substr(j, j_end - j);
      if (x.size() != y.size()) return x.size() < y.size();
      if (x != y) return x < y;
      i = i_end;
      j = j_end;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i;
      ++j;
    }
  }
  return a.size() - i < b.size() - j;
}

// Whether any member reads another, directly or through other computes.
bool members_depend(const std::vector<Tensor>& members) {
  std::set<const TensorNode*> member_set;
  for (const Tensor& m : members) member_set.insert(m.get());
  std::set<const TensorNode*> seen;
  std::vector<Tensor> stack;
  for (const Tensor& m : members)
    for (const Tensor& in : m->inputs()) stack.push_back(in);
  while (!stack.empty()) {
    Tensor t = stack.back();
    stack.pop_back();
    if (!seen.insert(t.get()).second) continue;
    if (member_set.count(t.get())) return true;
    for (const Tensor& in : t->inputs()) stack.push_back(in);
  }
  return false;
}

// The largest tensor every member reads, the read they differ in left out.
int64_t largest_common_read_bytes(const std::vector<Tensor>& members, const std::vector<Expr>& holes) {
  std::map<const TensorNode*, size_t> readers;
  for (size_t i = 0; i < members.size(); ++i) {
    std::set<const ExprNode*> in_hole;  // the differing read and any read in its indices: the stacked copy's
    for_each_node(holes[i], [&](const Expr& e) { in_hole.insert(e.get()); });
    std::set<const TensorNode*> own;
    for (const Expr& r : reads_of(members[i]->body))
      if (!in_hole.count(r.get())) own.insert(r.as<TensorReadNode>()->tensor.get());
    for (const TensorNode* t : own) ++readers[t];
  }
  int64_t largest = 0;
  for (const auto& [t, n] : readers)
    if (n == members.size()) largest = std::max(largest, t->num_elements() * dtype_bytes(t->dtype));
  return largest;
}

// The members' reads they differ in (one each, at the same place), or an empty list where they are not the same up
// to one read with the same variables, or where those reads are all alike.
std::vector<Expr> differing_reads(const std::vector<Tensor>& members) {
  const std::vector<Expr> first_reads = reads_of(members[0]->body);
  for (size_t p = 0; p < first_reads.size(); ++p) {
    const std::string form = form_with_hole(members[0], first_reads[p]);
    std::vector<Expr> holes = {first_reads[p]};
    for (size_t i = 1; i < members.size(); ++i) {
      const std::vector<Expr> reads = reads_of(members[i]->body);
      if (reads.size() != first_reads.size() || form_with_hole(members[i], reads[p]) != form) break;
      holes.push_back(reads[p]);
    }
    if (holes.size() != members.size()) continue;
    std::set<std::string> printed;
    for (const Expr& h : holes) printed.insert(to_string(h));
    if (printed.size() == holes.size()) return holes;
  }
  return {};
}

// Where the members read one tensor at indices that move by a constant step from one member to the next (an LSTM's
// first layer reads row t of X at step t): the steps, one per index. The batched compute then reads that tensor
// there itself, and there is nothing to stack. nullopt otherwise.
std::optional<std::vector<int64_t>> strided_reads(const std::vector<Expr>& holes) {
  const TensorReadNode* first = holes[0].as<TensorReadNode>();
  std::vector<int64_t> steps;
  for (size_t i = 1; i < holes.size(); ++i) {
    const TensorReadNode* r = holes[i].as<TensorReadNode>();
    if (r->tensor.get() != first->tensor.get()) return std::nullopt;
    for (size_t d = 0; d < first->indices.size(); ++d) {
      const Expr moved = simplify(r->indices[d] - first->indices[d]);
      const int64_t* by = as_const_int(moved);
      if (!by) return std::nullopt;
      if (i == 1) steps.push_back(*by);
      if (*by != int64_t(i) * steps[d]) return std::nullopt;
    }
  }
  return steps;
}

class Batcher final : public TensorCopier {
 public:
  Batcher(const BatchGroup& group, std::vector<Tensor> members, std::vector<Expr> holes)
      : group_(group), members_(std::move(members)), holes_(std::move(holes)) {
    for (size_t i = 0; i < members_.size(); ++i) member_index_[members_[i].get()] = int64_t(i);
  }

  Expr mutate(const Expr& e) override {
    auto* r = e.as<TensorReadNode>();
    auto it = r ? member_index_.find(r->tensor.get()) : member_index_.end();
    if (it == member_index_.end()) return TensorCopier::mutate(e);
    std::vector<Expr> indices = {int_imm(it->second)};
    for (const Expr& i : r->indices) indices.push_back(mutate(i));
    return read(batched(), std::move(indices));
  }

 private:
  Tensor make_copy(const Tensor& t) override {
    if (t->is_placeholder()) return t;
    return with_body(t, t->name, mutate(t->body));
  }

  Tensor batched() {
    if (batched_) return batched_;
    const Tensor& first = members_[0];
    const std::map<std::string, int64_t> extents = axis_extents(first);
    const std::vector<std::string> variables = index_variables(holes_[0]);
    const int64_t n = int64_t(members_.size());
    std::set<std::string> taken;
    for (const auto& [name, extent] : extents) taken.insert(name);
    std::string batch_axis = "b";
    for (int k = 1; taken.count(batch_axis); ++k) batch_axis = "b" + std::to_string(k);
    std::vector<std::string> axis_names = {batch_axis};
    std::vector<int64_t> shape = {n};
    for (const IterVar& axis : first->axes) {
      axis_names.push_back(axis.name());
      shape.push_back(axis.extent);
    }
    // What the batched compute reads in place of member b's read: the read tensor itself a constant step further per
    // member, or the stacked copy.
    Expr read_of_member;
    if (const std::optional<std::vector<int64_t>> steps = strided_reads(holes_)) {
      const TensorReadNode* read0 = holes_[0].as<TensorReadNode>();
      std::vector<Expr> at;
      for (size_t d = 0; d < read0->indices.size(); ++d)
        at.push_back(
            mutate((*steps)[d] == 0 ? read0->indices[d] : simplify(read0->indices[d] + var(batch_axis) * (*steps)[d])));
      read_of_member = read(copy_of(read0->tensor), at);
    } else {
      std::vector<int64_t> stacked_shape = {n};
      for (const std::string& v : variables) stacked_shape.push_back(extents.at(v));
      Tensor stacked = compute(group_.stacked, stacked_shape, [&](const std::vector<Expr>& at) {
        std::unordered_map<std::string, Expr> to_stacked;
        for (size_t d = 0; d < variables.size(); ++d) to_stacked.emplace(variables[d], at[d + 1]);
        return choose(at[0], n, [&](int64_t i) { return mutate(substitute(holes_[size_t(i)], to_stacked)); });
      });
      std::vector<Expr> stacked_index = {var(batch_axis)};
      for (const std::string& v : variables) stacked_index.push_back(var(v));
      read_of_member = read(stacked, stacked_index);
    }
    const Expr body = substitute(mutate(body_with_hole(first, holes_[0])), {{kHole, read_of_member}});
    batched_ = compute(
        group_.batched, shape, [&](const std::vector<Expr>&) { return body; }, axis_names);
    return batched_;
  }

  const BatchGroup& group_;
  std::vector<Tensor> members_;
  std::vector<Expr> holes_;
  std::unordered_map<const TensorNode*, int64_t> member_index_;
  Tensor batched_;
};

}  // namespace

std::vector<BatchGroup> batchable_groups(const Program& program) {
  // Computes alike but for one read, by that form; a compute may have a form per read it makes.
  std::map<std::string, std::vector<Tensor>> alike;
  std::vector<std::string> form_order;
  for (const Tensor& t : program.computes()) {
    if (program.is_output(t)) continue;
    std::set<std::string> own;
    for (const Expr& r : reads_of(t->body)) {
      std::string form = form_with_hole(t, r);
      if (!own.insert(form).second) continue;
      auto [it, added] = alike.try_emplace(form);
      if (added) form_order.push_back(form);
      it->second.push_back(t);
    }
  }
  std::vector<std::pair<size_t, BatchGroup>> groups;  // (first member's position, group)
  std::map<const TensorNode*, size_t> position;
  for (const Tensor& t : program.computes()) position.emplace(t.get(), position.size());
  std::set<const TensorNode*> taken;
  std::set<std::string> new_names;
  for (const std::string& form : form_order) {
    std::vector<Tensor> members = alike.at(form);
    if (members.size() < 2) continue;
    std::sort(members.begin(), members.end(),
              [](const Tensor& a, const Tensor& b) { return natural_less(a->name, b->name); });
    if (std::any_of(members.begin(), members.end(), [&](const Tensor& m) { return taken.count(m.get()) > 0; }))
      continue;
    const std::vector<Expr> holes = differing_reads(members);
    if (holes.empty() || members_depend(members)) continue;
    const bool strided = strided_reads(holes).has_value();
    // A stacked copy is made at every run: of inputs (weights) that would be work a packed layout does once.
    if (!strided && std::any_of(holes.begin(), holes.end(),
                                [](const Expr& h) { return h.as<TensorReadNode>()->tensor->is_placeholder(); }))
      continue;
    const std::map<std::string, int64_t> extents = axis_extents(members[0]);
    int64_t stacked_bytes = strided ? 0 : int64_t(members.size()) * dtype_bytes(holes[0].dtype());
    for (const std::string& v : index_variables(holes[0])) stacked_bytes *= extents.at(v);
    if (stacked_bytes > largest_common_read_bytes(members, holes)) continue;
    BatchGroup group;
    for (const Tensor& m : members) {
      group.members.push_back(m->name);
      taken.insert(m.get());
    }
    auto fresh = [&](const std::string& base) {
      std::string name = unused_name(program, base);
      for (int n = 1; new_names.count(name); ++n) name = unused_name(program, base + "_" + std::to_string(n));
      new_names.insert(name);
      return name;
    };
    group.batched = fresh(members[0]->name + "_batched");
    group.stacked = fresh(members[0]->name + "_stacked");
    size_t first = position.at(members[0].get());
    for (const Tensor& m : members) first = std::min(first, position.at(m.get()));
    groups.emplace_back(first, std::move(group));
  }
  std::stable_sort(groups.begin(), groups.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<BatchGroup> out;
  for (auto& [pos, group] : groups) out.push_back(std::move(group));
  return out;
}

std::string batch_group_kind(const Program& program, const BatchGroup& group) {
  if (group.members.size() < 2)
    throw std::invalid_argument("batch_group_kind: " + group.batched + " needs two members");
  std::vector<Tensor> members;
  for (const std::string& name : group.members) {
    Tensor t = program.find(name);
    if (!t || t->is_placeholder()) throw std::invalid_argument("batch_group_kind: no compute '" + name + "'");
    members.push_back(t);
  }
  const std::vector<Expr> holes = differing_reads(members);
  if (holes.empty()) throw std::invalid_argument("batch_group_kind: the members are not alike up to one read");
  // Every tensor read named by its dtype and shape.
  class Anonymizer final : public TensorCopier {
    Tensor make_copy(const Tensor& t) override {
      std::string name = dtype_name(t->dtype);
      for (int64_t e : t->shape) name += "_" + std::to_string(e);
      return placeholder(name, t->shape, t->dtype);
    }
  } anonymizer;
  return std::to_string(members.size()) + " x " + form_header(members[0], holes[0]) +
         to_string(anonymizer.mutate(body_with_hole(members[0], holes[0])));
}

Program batch_computes(const Program& program, const BatchGroup& group) {
  auto fail = [&](const std::string& why) { throw std::invalid_argument("batch " + group.batched + ": " + why); };
  if (group.members.size() < 2) fail("needs two or more members");
  for (const std::string& name : {group.batched, group.stacked})
    if (program.find(name)) fail("the name '" + name + "' is taken");
  if (group.batched == group.stacked) fail("the batched and the stacked tensor need two names");
  std::vector<Tensor> members;
  std::set<std::string> seen;
  for (const std::string& name : group.members) {
    Tensor t = program.find(name);
    if (!t) fail("no compute '" + name + "'");
    if (t->is_placeholder()) fail("'" + name + "' is an input, not a compute");
    if (program.is_output(t)) fail("'" + name + "' is an output of the program");
    if (!seen.insert(name).second) fail("'" + name + "' is named twice");
    members.push_back(t);
  }
  std::vector<Expr> holes = differing_reads(members);
  if (holes.empty()) fail("the members are not the same up to one read with the same variables");
  if (members_depend(members)) fail("a member reads another");
  Batcher batcher(group, members, holes);
  std::vector<Tensor> outputs;
  for (const Tensor& t : program.outputs()) outputs.push_back(batcher.copy_of(t));
  return Program(std::move(outputs), program.name());
}

std::vector<BatchGroup> batch_groups_of(const Schedule& schedule) {
  std::vector<BatchGroup> groups;
  for (const Decision& d : schedule.decisions())
    if (d.kind == DecisionKind::kBatch) groups.push_back(BatchGroup{d.stage, d.tensor, d.axes});
  return groups;
}

Schedule without_batches(const Schedule& schedule) {
  Schedule out;
  for (const Decision& d : schedule.decisions())
    if (d.kind != DecisionKind::kBatch) out.append(d);
  out.set_layout(schedule.layout());
  return out;
}

Schedule after_batches(const Schedule& batches, const Schedule& schedule) {
  Schedule out;
  for (const Decision& d : batches.decisions())
    if (d.kind == DecisionKind::kBatch) out.append(d);
  for (const Decision& d : schedule.decisions()) out.append(d);
  out.set_layout(schedule.layout());
  return out;
}

Program batched_program(const Program& program, const Schedule& schedule) {
  Program out = program;
  for (size_t n = 0; n < schedule.decisions().size(); ++n) {
    const Decision& d = schedule.decisions()[n];
    if (d.kind != DecisionKind::kBatch) continue;
    try {
      out = batch_computes(out, BatchGroup{d.stage, d.tensor, d.axes});
    } catch (const std::invalid_argument& e) {
      throw ScheduleError("decision #" + std::to_string(n) + " (" + d.to_string() + "): " + e.what());
    }
  }
  return out;
}

}  // namespace ingot
