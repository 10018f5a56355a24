#include "lower/lower.h"

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <set>

#include "ir/affine.h"
#include "ir/bound.h"
#include "ir/functor.h"
#include "ir/horizontal_batch.h"
#include "ir/simplify.h"
#include "lower/vector_tiles.h"

namespace ingot {

namespace {

struct Leaf {
  std::string name;
  int64_t extent;
  bool reduce;
  LoopKind kind = LoopKind::kSerial;
  bool annotated = false;
  int64_t explicit_lanes = 0;  // explicit_vectors: the register tile of this (vectorized) loop in vectors
};

struct SplitRelation {
  std::string parent, outer, inner;
  int64_t factor;
  int64_t parent_extent;
  bool guard;
  bool shift;  // the last block moved back to end at the extent (SplitTail::kShift), peeled off the outer loop
  bool reduce;
};

struct FuseRelation {
  std::string outer, inner, fused;
  int64_t inner_extent;
};

struct CacheRead {
  std::string tensor;
  MemoryScope scope;
  std::string axis;
  Buffer buffer;         // set while emitting
  std::vector<Expr> lo;  // region origin in the tensor's index space
};

// The region of a tensor that a loop nest touches below some loop: origin (in the loop variables outside that
// loop) and constant extent per dimension, and whether a bounds guard is needed per dimension.
struct Region {
  std::vector<Expr> lo;
  std::vector<int64_t> extent;
  std::vector<bool> may_leave_bounds;
};

// One compute's lowering state: its (inlined) body, loops after the replayed decisions, and where it runs.
struct Stage {
  Tensor tensor;
  Expr body;                           // after inlining; a ReduceNode at the top for reductions
  std::vector<int64_t> domain;         // extent per spatial dimension (a region when computed at a reader)
  std::vector<Expr> origin;            // global index of domain coordinate 0, per spatial dimension
  std::vector<bool> origin_may_leave;  // whether origin + coordinate may fall outside the tensor
  std::vector<Leaf> leaves;
  std::vector<SplitRelation> splits;
  std::vector<FuseRelation> fuses;
  bool inlined = false;
  std::string attach_stage, attach_axis;  // empty: a root stage
  std::string cache_write_axis;
  std::vector<CacheRead> cache_reads;
  std::vector<std::string> attached;  // stages computed inside this one's loops, producers first
  Buffer buffer;
  // The buffer's dimension k holds domain dimension storage_order[k]; empty: in order (Lowering::storage_order).
  std::vector<size_t> storage_order;
  std::vector<Decision> decisions;
  bool reduction() const { return body.as<ReduceNode>() != nullptr; }
};

[[noreturn]] void fail(const std::string& message) { throw ScheduleError(message); }

std::string join(const std::vector<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

// Index (or shape) `in_order` with its dimensions in `order`; in_order itself where order is empty.
template <typename T>
std::vector<T> in_storage_order(const std::vector<T>& in_order, const std::vector<size_t>& order) {
  if (order.empty()) return in_order;
  std::vector<T> stored;
  for (size_t d : order) stored.push_back(in_order[d]);
  return stored;
}

class Lowering {
 public:
  Lowering(const Program& program, const Schedule& schedule) : program_(program), layout_(schedule.layout()) {
    for (const Tensor& t : program.computes()) {
      Stage s;
      s.tensor = t;
      stages_[t->name] = std::move(s);
    }
    for (size_t n = 0; n < schedule.decisions().size(); ++n) {
      const Decision& d = schedule.decisions()[n];
      if (d.kind == DecisionKind::kPack) {
        add_pack(n, d);
        continue;
      }
      if (d.kind == DecisionKind::kPad) {
        add_pad(n, d);
        continue;
      }
      if (d.kind == DecisionKind::kBatch) continue;  // applied to the program before lowering
      auto it = stages_.find(d.stage);
      if (it == stages_.end()) {
        std::string why = program.find(d.stage) ? "it is an input, not a compute" : "no such compute";
        fail("decision #" + std::to_string(n) + " (" + d.to_string() + "): stage '" + d.stage + "': " + why);
      }
      it->second.decisions.push_back(d);
    }
  }

  void add_pack(size_t n, const Decision& d) {
    const std::string where = "decision #" + std::to_string(n) + " (" + d.to_string() + "): ";
    Tensor t = program_.find(d.stage);
    if (!t) fail(where + "no tensor '" + d.stage + "'");
    if (program_.is_output(t)) fail(where + "'" + d.stage + "' is an output, which keeps the program's dense layout");
    if (packs_.count(d.stage)) fail(where + "'" + d.stage + "' is already packed");
    if (pads_.count(d.stage)) fail(where + "'" + d.stage + "' is padded; a buffer has one layout");
    if (d.dim < 0 || d.dim >= int64_t(t->shape.size()))
      fail(where + "'" + d.stage + "' has " + std::to_string(t->shape.size()) + " dimensions");
    if (d.factor < 1 || t->shape[d.dim] % d.factor != 0)
      fail(where + "the block must divide the dimension's extent " + std::to_string(t->shape[d.dim]));
    // A bf16 weight (workloads/bf16_products.h: two dimensions, k the other one) keeps its pairs of k together.
    const bool pairs =
        t->is_placeholder() && t->dtype == DType::kBFloat16 && t->shape.size() == 2 && t->shape[1 - d.dim] % 2 == 0;
    packs_[d.stage] = PackedLayout{d.stage, t->shape, d.dim, d.factor, pairs ? 1 - d.dim : -1};
  }

  void add_pad(size_t n, const Decision& d) {
    const std::string where = "decision #" + std::to_string(n) + " (" + d.to_string() + "): ";
    Tensor t = program_.find(d.stage);
    if (!t) fail(where + "no tensor '" + d.stage + "'");
    if (t->is_placeholder())
      fail(where + "'" + d.stage + "' is an input, whose layout is its caller's; pack lays out weights");
    if (program_.is_output(t)) fail(where + "'" + d.stage + "' is an output, which keeps the program's dense layout");
    if (pads_.count(d.stage)) fail(where + "'" + d.stage + "' is already padded");
    if (packs_.count(d.stage)) fail(where + "'" + d.stage + "' is packed; a buffer has one layout");
    if (d.dim < 0 || d.dim >= int64_t(t->shape.size()))
      fail(where + "'" + d.stage + "' has " + std::to_string(t->shape.size()) + " dimensions");
    if (d.factor < 1) fail(where + "a pad adds at least one element");
    pads_[d.stage] = {d.dim, d.factor};
  }

  // A load of a global buffer (an input's, or a compute's stored at its root) at the program's index, through its
  // packed layout when it has one.
  Expr load_global(const Buffer& b, const std::vector<Expr>& index) const {
    auto it = packs_.find(b->name);
    return load(b, flat_index(it == packs_.end() ? index : it->second.packed_index(index), b->shape));
  }

  LoopFunction run() {
    inline_bodies();
    std::vector<Tensor> computes = program_.computes();
    for (auto it = computes.rbegin(); it != computes.rend(); ++it) {
      Stage& s = stages_.at((*it)->name);
      if (!s.inlined) build_stage(s);
    }
    for (const Tensor& t : computes) {
      Stage& s = stages_.at(t->name);
      if (!s.inlined && !s.attach_stage.empty()) stages_.at(s.attach_stage).attached.push_back(t->name);
    }
    LoopFunction f;
    f.name = program_.name();
    for (const Tensor& t : program_.placeholders()) {
      auto pack = packs_.find(t->name);
      buffers_[t->name] = make_buffer(t->name, t->dtype, pack == packs_.end() ? t->shape : pack->second.packed_shape(),
                                      MemoryScope::kGlobal);
      f.inputs.push_back(buffers_[t->name]);
      if (pack != packs_.end()) f.packed_inputs.push_back(pack->second);
    }
    for (const Tensor& t : program_.outputs()) {
      if (t->is_placeholder()) fail("output '" + t->name + "' is an input; there is nothing to compute");
      if (stages_.at(t->name).inlined) fail("output '" + t->name + "' cannot be computed inline");
    }
    for (const Tensor& t : computes) {
      Stage& s = stages_.at(t->name);
      auto pad = pads_.find(t->name);
      auto pack = packs_.find(t->name);
      if (s.inlined || !s.attach_stage.empty()) {
        if (pad != pads_.end()) fail("pad of '" + t->name + "': it is computed inside its readers and has no buffer");
        if (pack != packs_.end())
          fail("pack of '" + t->name + "': it is computed inside its readers and has no buffer");
        continue;
      }
      std::vector<int64_t> shape = pack != packs_.end() ? pack->second.packed_shape() : t->shape;
      if (pad != pads_.end()) shape[pad->second.first] += pad->second.second;
      s.buffer = make_buffer(t->name, t->dtype, shape, MemoryScope::kGlobal);
      buffers_[t->name] = s.buffer;
      if (!program_.is_output(t)) f.workspace.push_back(s.buffer);
    }
    for (const Tensor& t : program_.outputs()) f.outputs.push_back(buffers_.at(t->name));

    std::vector<Stmt> body;
    std::set<std::string> written_since_barrier, written;
    const StageLayout steps = layout_steps();
    for (size_t n = 0; n < steps.size(); ++n) {
      const LayoutStep& step = steps[n];
      bool kernel_before = step.kernel_before, barrier_before = step.barrier_before;
      // At the end of the previous step, before the barrier: the previous stage's compute hides the fetch.
      for (const std::string& name : step.prefetch) {
        std::string where = "layout step #" + std::to_string(n) + ": prefetch of '" + name + "': ";
        auto it = buffers_.find(name);
        if (it == buffers_.end() || it->second->scope != MemoryScope::kGlobal)
          fail(where + (program_.find(name) ? "it is computed inside its readers and has no buffer"
                                            : "not a tensor of the program"));
        if (body.empty()) fail(where + "no stage runs before the step to hide it under");
        if (step.kernel_before)
          fail(where + "the step starts a kernel, and a prefetch does not outlive the one before");
        body.push_back(prefetch(it->second));
      }
      for (const std::string& name : step.computes) {
        Stage& s = stages_.at(name);
        if (s.inlined || !s.attach_stage.empty()) continue;
        Stmt stage = emit_stage(s, Context{});
        std::set<std::string> reads, writes;
        collect_global_access(stage, reads, writes);
        for (const std::string& r : reads)
          if (stages_.count(r) && !written.count(r) && !writes.count(r))
            fail("layout: '" + name + "' reads '" + r + "', which the layout computes later");
        bool dependent = std::any_of(reads.begin(), reads.end(),
                                     [&](const std::string& b) { return written_since_barrier.count(b) > 0; });
        if (!body.empty() && (kernel_before || barrier_before || dependent)) {
          body.push_back(barrier(kernel_before ? BarrierKind::kKernel : BarrierKind::kGrid));
          written_since_barrier.clear();
        }
        kernel_before = barrier_before = false;
        written_since_barrier.insert(writes.begin(), writes.end());
        written.insert(writes.begin(), writes.end());
        body.push_back(stage);
      }
    }
    f.body = simplify(seq(std::move(body)));
    return f;
  }

 private:
  // The schedule's layout after checking that it names every compute once, or the topological order.
  StageLayout layout_steps() const {
    if (layout_.empty()) {
      LayoutStep all;
      for (const Tensor& t : program_.computes()) all.computes.push_back(t->name);
      return {all};
    }
    std::set<std::string> seen;
    for (const LayoutStep& step : layout_)
      for (const std::string& name : step.computes) {
        if (!stages_.count(name))
          fail("layout: '" + name + "' is " + (program_.find(name) ? "an input, not a compute" : "not in the program"));
        if (!seen.insert(name).second) fail("layout: '" + name + "' is listed twice");
      }
    for (const Tensor& t : program_.computes())
      if (!seen.count(t->name)) fail("layout: compute '" + t->name + "' is missing");
    return layout_;
  }

  struct Context {
    bool under_block = false;
    bool under_thread = false;
  };

  // Substitutes every compute_inline'd tensor into its readers, producers first.
  void inline_bodies() {
    for (const Tensor& t : program_.computes()) {
      Stage& s = stages_.at(t->name);
      s.body = inline_reads(t->body);
      for_each_node(s.body, [&](const Expr& e) {
        if (auto* r = e.as<TensorReadNode>()) {
          reads_[t->name].insert(r->tensor->name);
          readers_[r->tensor->name].insert(t->name);
        }
      });
      for (const Decision& d : s.decisions)
        if (d.kind == DecisionKind::kComputeInline) {
          if (s.reduction()) fail(d.to_string() + ": '" + t->name + "' is a reduction and cannot be inlined");
          if (program_.is_output(t)) fail(d.to_string() + ": '" + t->name + "' is an output and cannot be inlined");
          if (s.decisions.size() > 1)
            fail(d.to_string() + ": '" + t->name + "' is inlined, so its other decisions have no loops to apply to");
          s.inlined = true;
        }
    }
  }

  Expr inline_reads(const Expr& e) {
    struct Inliner : ExprMutator {
      Lowering& self;
      explicit Inliner(Lowering& l) : self(l) {}
      Expr mutate(const Expr& x) override {
        Expr y = mutate_children(x);
        auto* r = y.as<TensorReadNode>();
        if (!r || r->tensor->is_placeholder()) return y;
        const Stage& producer = self.stages_.at(r->tensor->name);
        if (!producer.inlined) return y;
        std::unordered_map<std::string, Expr> vars;
        for (size_t d = 0; d < r->indices.size(); ++d) vars[r->tensor->axes[d].name()] = r->indices[d];
        return substitute(producer.body, vars);
      }
    } inliner(*this);
    return inliner.mutate(e);
  }

  // Reads of `tensor` in stage s's body, with indices in terms of s's loop variables.
  std::vector<std::vector<Expr>> reads_in_loop_vars(const Stage& s, const std::string& tensor) const {
    std::vector<std::vector<Expr>> reads;
    Expr body = substitute(s.body, global_index_map(s));
    for_each_node(body, [&](const Expr& e) {
      if (auto* r = e.as<TensorReadNode>())
        if (r->tensor->name == tensor) reads.push_back(r->indices);
    });
    return reads;
  }

  void build_stage(Stage& s) {
    const Tensor& t = s.tensor;
    s.domain = t->shape;
    s.origin.assign(t->shape.size(), Expr(int64_t(0)));
    s.origin_may_leave.assign(t->shape.size(), false);
    for (const Decision& d : s.decisions)
      if (d.kind == DecisionKind::kComputeAt) attach(s, d);
    for (size_t dim = 0; dim < t->axes.size(); ++dim)
      s.leaves.push_back(Leaf{t->axes[dim].name(), s.domain[dim], false});
    if (auto* r = s.body.as<ReduceNode>())
      for (const IterVar& k : r->axes) s.leaves.push_back(Leaf{k.name(), k.extent, true});
    for (const Decision& d : s.decisions) {
      try {
        apply(s, d);
      } catch (const ScheduleError& e) {
        fail(d.to_string() + ": " + e.what());
      }
    }
    for (const Leaf& l : s.leaves) ranges_[loop_var_name(s, l.name)] = IntRange{0, l.extent - 1};
    for (const SplitRelation& r : s.splits)
      if (r.shift) ranges_[shift_base_name(s, r)] = IntRange{0, r.parent_extent - r.factor};
    validate_loop_kinds(s);
  }

  void attach(Stage& s, const Decision& d) {
    const std::string& name = s.tensor->name;
    if (!s.attach_stage.empty())
      fail(d.to_string() + ": '" + name + "' is already computed at '" + s.attach_stage + "'");
    auto it = stages_.find(d.target);
    if (it == stages_.end()) fail(d.to_string() + ": no compute named '" + d.target + "'");
    Stage& reader = it->second;
    if (reader.inlined) fail(d.to_string() + ": '" + d.target + "' is inlined and has no loops");
    if (program_.is_output(s.tensor)) fail(d.to_string() + ": '" + name + "' is an output, so it must be a root stage");
    if (!reads_in_loop_vars_exists(reader, name))
      fail(d.to_string() + ": '" + d.target + "' does not read '" + name + "'");
    int pos = leaf_position(reader, d.axes[0]);
    if (pos < 0)
      fail(d.to_string() + ": '" + d.target + "' has no loop '" + d.axes[0] + "' (loops: " + leaf_names(reader) + ")");
    if (reader.leaves[pos].kind == LoopKind::kVectorized)
      fail(d.to_string() + ": loop '" + d.axes[0] + "' is vectorized and cannot hold another stage");
    std::vector<std::vector<Expr>> reads = reads_in_loop_vars(reader, name);
    VarRanges inner = inner_loop_vars(reader, pos);
    // Reads through an inlined tensor count as reads by that tensor's readers: bodies are inlined already. Another
    // reader computed at the same loop (a softmax's sum beside its max, inside each row of the output) runs inside
    // it after this stage (in program order), and its reads widen the region. Readers are built before their
    // producers, so its loops and origin are known here.
    for (const std::string& other_name : readers_[name]) {
      const Stage& other = stages_.at(other_name);
      if (other.inlined || other_name == d.target) continue;
      if (other.attach_stage != d.target || other.attach_axis != d.axes[0])
        fail(d.to_string() + ": '" + name + "' is also read by '" + other_name + "', so it cannot live inside '" +
             d.target + "' alone (unless '" + other_name + "' is computed at the same loop)");
      for (std::vector<Expr>& read : reads_in_loop_vars(other, name)) reads.push_back(std::move(read));
      for (const auto& [var, range] : inner_loop_vars(other, -1)) inner[var] = range;
    }
    s.attach_stage = d.target;
    s.attach_axis = d.axes[0];
    Region region = infer_region(reads, inner, s.tensor->shape);
    s.domain = region.extent;
    s.origin = region.lo;
    s.origin_may_leave = region.may_leave_bounds;
  }

  bool reads_in_loop_vars_exists(const Stage& reader, const std::string& tensor) const {
    auto it = reads_.find(reader.tensor->name);
    return it != reads_.end() && it->second.count(tensor) > 0;
  }

  // Loop variables (by name) that vary inside loop `pos` of stage s, with their extents; a shifted split's block
  // start where its outer loop is inside.
  VarRanges inner_loop_vars(const Stage& s, int pos) const {
    VarRanges inner;
    for (size_t p = size_t(pos) + 1; p < s.leaves.size(); ++p) {
      inner[loop_var_name(s, s.leaves[p].name)] = IntRange{0, s.leaves[p].extent - 1};
      if (const SplitRelation* r = shifted_outer(s, s.leaves[p].name))
        inner[shift_base_name(s, *r)] = IntRange{0, r->parent_extent - r->factor};
    }
    return inner;
  }

  // An index as outer + constant + sum(coefficient * term), where outer uses no inner loop variable (it may
  // hold any arithmetic of the enclosing loops, such as a fused loop's div and mod) and each term is an inner
  // loop variable or arithmetic of inner variables alone (e.g. t / 16 and t % 16 of a fused thread loop t),
  // with the term's constant range.
  struct InnerTerm {
    int64_t coeff = 0;
    IntRange range;
  };
  struct InnerForm {
    Expr outer;  // null for zero
    int64_t constant = 0;
    std::map<std::string, InnerTerm> terms;  // by printed term
  };

  static std::optional<InnerForm> decompose(const Expr& e, const VarRanges& inner) {
    bool uses_inner = false, uses_outer = false;
    for_each_node(e, [&](const Expr& x) {
      if (auto* v = x.as<VarNode>()) (inner.count(v->name) ? uses_inner : uses_outer) = true;
    });
    InnerForm f;
    if (!uses_inner) {
      if (const int64_t* c = as_const_int(e))
        f.constant = *c;
      else
        f.outer = e;
      return f;
    }
    auto* b = e.as<BinaryNode>();
    if (b && (b->op == BinaryOp::kAdd || b->op == BinaryOp::kSub)) {
      auto x = decompose(b->a, inner), y = decompose(b->b, inner);
      if (!x || !y) return std::nullopt;
      int64_t sign = b->op == BinaryOp::kAdd ? 1 : -1;
      f = *x;
      f.constant += sign * y->constant;
      for (const auto& [key, term] : y->terms) {
        f.terms[key].coeff += sign * term.coeff;
        f.terms[key].range = term.range;
      }
      if (y->outer) f.outer = f.outer ? binary(b->op, f.outer, y->outer) : (sign > 0 ? y->outer : -y->outer);
      return f;
    }
    if (b && b->op == BinaryOp::kMul) {
      const int64_t* c = as_const_int(b->b);
      const Expr& other = c ? b->a : b->b;
      if (!c) c = as_const_int(b->a);
      if (c) {
        auto x = decompose(other, inner);
        if (!x) return std::nullopt;
        x->constant *= *c;
        for (auto& [key, term] : x->terms) term.coeff *= *c;
        if (x->outer) x->outer = x->outer * *c;
        return x;
      }
    }
    if (uses_outer) return std::nullopt;
    auto range = const_bound(e, inner);
    if (!range) return std::nullopt;
    f.terms[to_string(e)] = InnerTerm{1, *range};
    return f;
  }

  // The box of indices that the given reads can touch while the `inner` loop variables run over their ranges
  // and all other variables stay fixed. A dimension whose indices are not affine in the inner variables, or
  // whose reads do not move together, falls back to the whole dimension when whole_dimension_ok; otherwise
  // (a cache_write tile, which must write back exactly what it computed) that is a ScheduleError.
  Region infer_region(const std::vector<std::vector<Expr>>& reads, const VarRanges& inner,
                      const std::vector<int64_t>& shape, bool whole_dimension_ok = true) const {
    Region region;
    for (size_t d = 0; d < shape.size(); ++d) {
      Expr outer;
      bool first = true, bounded = !reads.empty();
      int64_t lo = 0, hi = 0;
      for (const auto& read : reads) {
        auto form = decompose(simplify(read[d], ranges_), inner);
        if (!form) {
          bounded = false;
          break;
        }
        Expr read_outer = form->outer ? simplify(form->outer, ranges_) : Expr(int64_t(0));
        int64_t read_lo = form->constant, read_hi = form->constant;
        for (const auto& [key, term] : form->terms) {
          read_lo += std::min(term.coeff * term.range.lo, term.coeff * term.range.hi);
          read_hi += std::max(term.coeff * term.range.lo, term.coeff * term.range.hi);
        }
        if (first) {
          outer = read_outer;
          lo = read_lo;
          hi = read_hi;
          first = false;
        } else if (!structural_equal(outer, read_outer)) {
          bounded = false;
          break;
        } else {
          lo = std::min(lo, read_lo);
          hi = std::max(hi, read_hi);
        }
      }
      if (!bounded && !whole_dimension_ok)
        fail("the tile's extent in dimension " + std::to_string(d) +
             " does not follow from the loops inside it (an index is not affine in them)");
      if (!bounded || (whole_dimension_ok && hi - lo + 1 >= shape[d])) {
        region.lo.push_back(Expr(int64_t(0)));
        region.extent.push_back(shape[d]);
        region.may_leave_bounds.push_back(false);
        continue;
      }
      Expr origin_expr = simplify(outer + lo, ranges_);
      int64_t extent = hi - lo + 1;
      auto bound = const_bound(origin_expr, ranges_);
      region.lo.push_back(origin_expr);
      region.extent.push_back(extent);
      region.may_leave_bounds.push_back(!bound || bound->lo < 0 || bound->hi + extent > shape[d]);
    }
    return region;
  }

  static std::string loop_var_name(const Stage& s, const std::string& leaf) { return s.tensor->name + "." + leaf; }

  Expr loop_var(const Stage& s, const std::string& leaf) const { return var(loop_var_name(s, leaf)); }

  static int leaf_position(const Stage& s, const std::string& name) {
    for (size_t p = 0; p < s.leaves.size(); ++p)
      if (s.leaves[p].name == name) return int(p);
    return -1;
  }

  static std::string leaf_names(const Stage& s) {
    std::vector<std::string> names;
    for (const Leaf& l : s.leaves) names.push_back(l.name);
    return join(names);
  }

  int require_leaf(const Stage& s, const std::string& name) const {
    int p = leaf_position(s, name);
    if (p < 0) fail("stage '" + s.tensor->name + "' has no loop '" + name + "' (loops: " + leaf_names(s) + ")");
    return p;
  }

  void annotate(Stage& s, const std::string& axis, LoopKind kind) {
    Leaf& l = s.leaves[require_leaf(s, axis)];
    if (l.annotated && l.kind != kind)
      fail("loop '" + axis + "' is already " + loop_kind_name(l.kind) + "; it cannot also be " + loop_kind_name(kind));
    // A vectorized reduction loop (innermost, checked with the final order) is a reassociated reduction: the
    // C++ printer makes it an OpenMP simd reduction.
    if (l.reduce && kind != LoopKind::kUnrolled && kind != LoopKind::kSerial && kind != LoopKind::kVectorized) {
      if (kind == LoopKind::kParallel)
        fail("cannot run reduction axis '" + axis + "' in parallel: its iterations write the same elements");
      fail(std::string("cannot bind reduction axis '") + axis + "' to " + loop_kind_name(kind) +
           ": its iterations write the same elements");
    }
    l.kind = kind;
    l.annotated = true;
  }

  void apply(Stage& s, const Decision& d) {
    switch (d.kind) {
      case DecisionKind::kSplit: {
        int p = require_leaf(s, d.axes[0]);
        Leaf parent = s.leaves[p];
        if (parent.annotated)
          fail("loop '" + parent.name + "' is already " + loop_kind_name(parent.kind) + "; split it first");
        if (parent.explicit_lanes) fail("loop '" + parent.name + "' already has explicit vectors; split it first");
        if (d.factor < 1) fail("split factor must be positive");
        if (shifted_outer(s, parent.name))
          fail("loop '" + parent.name + "' is a shifted split's outer loop, which lowering peels: it cannot be split");
        std::string where = " of '" + parent.name + "' (extent " + std::to_string(parent.extent) +
                            (s.attach_stage.empty() ? "" : ", the region computed at '" + s.attach_stage + "'") + ")";
        if (d.factor > parent.extent && d.tail != SplitTail::kGuard)
          fail("split factor " + std::to_string(d.factor) + " exceeds the extent" + where);
        if (parent.extent % d.factor != 0 && d.tail == SplitTail::kExact)
          fail("split factor " + std::to_string(d.factor) + " does not divide the extent" + where +
               "; use tail=guard to guard the tail, or tail=shift to shift the last block back");
        const bool shift = d.tail == SplitTail::kShift && parent.extent % d.factor != 0;
        if (shift && parent.reduce)
          fail("a shifted tail computes the elements where the last two blocks overlap twice: reduction axis '" +
               parent.name + "' would sum them twice");
        Leaf outer{parent.name + ".o", (parent.extent + d.factor - 1) / d.factor, parent.reduce};
        Leaf inner{parent.name + ".i", std::min(d.factor, parent.extent), parent.reduce};
        if (d.tail == SplitTail::kGuard) inner.extent = d.factor;
        s.leaves[p] = outer;
        s.leaves.insert(s.leaves.begin() + p + 1, inner);
        s.splits.push_back(SplitRelation{parent.name, outer.name, inner.name, inner.extent, parent.extent,
                                         d.tail == SplitTail::kGuard && parent.extent % inner.extent != 0, shift,
                                         parent.reduce});
        return;
      }
      case DecisionKind::kReorder: {
        std::vector<int> positions;
        std::set<std::string> seen;
        for (const std::string& a : d.axes) {
          if (!seen.insert(a).second) fail("reorder names loop '" + a + "' twice");
          positions.push_back(require_leaf(s, a));
        }
        std::vector<int> slots = positions;
        std::sort(slots.begin(), slots.end());
        std::vector<Leaf> before = s.leaves;
        for (size_t n = 0; n < slots.size(); ++n) s.leaves[slots[n]] = before[positions[n]];
        return;
      }
      case DecisionKind::kFuse: {
        if (d.axes.size() != 2) fail("fuse takes two loops, outer then inner");
        int a = require_leaf(s, d.axes[0]), b = require_leaf(s, d.axes[1]);
        if (b != a + 1)
          fail("loops '" + d.axes[0] + "' and '" + d.axes[1] + "' are not adjacent (outer, inner); reorder first");
        Leaf outer = s.leaves[a], inner = s.leaves[b];
        if (outer.reduce != inner.reduce) fail("cannot fuse a reduction axis with a spatial axis");
        if (outer.annotated || inner.annotated || outer.explicit_lanes || inner.explicit_lanes)
          fail("cannot fuse annotated loops; fuse before annotating");
        for (const std::string& loop : {outer.name, inner.name})
          if (shifted_outer(s, loop))
            fail("loop '" + loop + "' is a shifted split's outer loop, which lowering peels: it cannot be fused");
        Leaf fused{outer.name + "+" + inner.name, outer.extent * inner.extent, outer.reduce};
        s.leaves[a] = fused;
        s.leaves.erase(s.leaves.begin() + b);
        s.fuses.push_back(FuseRelation{outer.name, inner.name, fused.name, inner.extent});
        return;
      }
      case DecisionKind::kParallel: annotate(s, d.axes[0], LoopKind::kParallel); return;
      case DecisionKind::kVectorize: annotate(s, d.axes[0], LoopKind::kVectorized); return;
      case DecisionKind::kUnroll: annotate(s, d.axes[0], LoopKind::kUnrolled); return;
      case DecisionKind::kBind:
        if (!is_gpu_block(d.bind) && !is_gpu_thread(d.bind)) fail("bind needs a blockIdx or threadIdx kind");
        annotate(s, d.axes[0], d.bind);
        return;
      case DecisionKind::kComputeAt: return;  // handled by attach() before the loops exist
      case DecisionKind::kComputeInline: return;
      case DecisionKind::kPack: return;   // a buffer's layout, taken before the stages
      case DecisionKind::kPad: return;    // the buffer's, taken before the stages
      case DecisionKind::kBatch: return;  // applied to the program before lowering
      case DecisionKind::kCacheWrite: {
        if (!s.cache_write_axis.empty()) fail("stage already has a cache_write at '" + s.cache_write_axis + "'");
        require_leaf(s, d.axes[0]);
        s.cache_write_axis = d.axes[0];
        return;
      }
      case DecisionKind::kExplicitVectors: {
        Leaf& l = s.leaves[require_leaf(s, d.axes[0])];
        if (!is_explicit_vector_width(d.factor))
          fail("explicit vectors of " + std::to_string(d.factor) +
               " lanes: the C++ printer writes 16-lane (AVX-512) and 8-lane (AVX2) vectors only");
        l.explicit_lanes = d.factor;
        return;
      }
      case DecisionKind::kCacheRead: {
        require_leaf(s, d.axes[0]);
        if (!reads_in_loop_vars_exists(s, d.tensor))
          fail("stage '" + s.tensor->name + "' does not read '" + d.tensor + "'");
        for (const CacheRead& c : s.cache_reads)
          if (c.tensor == d.tensor) fail("'" + d.tensor + "' is already cached for this stage");
        if (d.scope == MemoryScope::kGlobal) fail("cache_read needs a shared or local scope");
        s.cache_reads.push_back(CacheRead{d.tensor, d.scope, d.axes[0], nullptr, {}});
        return;
      }
    }
  }

  // Checks the rules that depend on the final loop order (see ir/stmt.h and the printers' contract).
  void validate_loop_kinds(const Stage& s) const {
    const std::string& name = s.tensor->name;
    bool root = s.attach_stage.empty();
    bool outer_prefix = true;
    for (size_t p = 0; p < s.leaves.size(); ++p) {
      const Leaf& l = s.leaves[p];
      if (l.explicit_lanes && l.kind != LoopKind::kVectorized)
        fail("stage '" + name + "': loop '" + l.name + "' has explicit vectors but is " + loop_kind_name(l.kind) +
             "; vectorize it");
      bool outer_kind = l.kind == LoopKind::kParallel || is_gpu_block(l.kind);
      if (outer_kind && (!outer_prefix || !root))
        fail("stage '" + name + "': " + loop_kind_name(l.kind) + " loop '" + l.name +
             "' must be among the outermost loops of a root stage (it is loop #" + std::to_string(p) +
             (root ? "" : " of a stage computed at '" + s.attach_stage + "'") + ")");
      outer_prefix &= outer_kind;
      if (l.kind == LoopKind::kParallel && p != 0)
        fail("stage '" + name + "': parallel loop '" + l.name + "' must be the outermost loop");
      // A register tile: unrolled spatial loops inside a vectorized reduction loop fold into one accumulator per
      // element, the printer's multi-accumulator simd reduction. A bf16 stage without reduction (a tensor of bf16
      // pairs, workloads/bf16_products.h) may vectorize a loop around unrolled spatial loops too: each lane writes
      // their elements, a pixel's pair of channels side by side.
      const bool only_unrolled_inside = std::all_of(s.leaves.begin() + p + 1, s.leaves.end(), [](const Leaf& inner) {
        return !inner.reduce && inner.kind == LoopKind::kUnrolled;
      });
      const bool bf16_elementwise = !s.tensor->reduction() && s.tensor->dtype == DType::kBFloat16;
      if (l.kind == LoopKind::kVectorized && p + 1 != s.leaves.size() &&
          !(only_unrolled_inside && (l.reduce || bf16_elementwise)))
        fail("stage '" + name + "': vectorized loop '" + l.name +
             "' must be the innermost loop (or a loop with only unrolled spatial loops inside: a reduction loop, or "
             "any loop of a bf16 stage without reduction)");
      if (is_gpu_thread(l.kind)) {
        bool block_before = false;
        for (size_t q = 0; q < p; ++q) block_before |= is_gpu_block(s.leaves[q].kind);
        if (!block_before && root)
          fail("stage '" + name + "': thread loop '" + l.name + "' must be inside a blockIdx loop");
      }
    }
    // A shifted split's last block is peeled off its outer loop and recomputes where it overlaps the block before: the
    // loop stays serial, the block's own loops run in one thread (two threads would compute an overlapping element at
    // once), a reduction's blocks each start their sums (the loop outside every reduction loop), and no cache_write
    // tile holds more than one block (its write-back would mix them).
    const int write_at = s.cache_write_axis.empty() ? -1 : leaf_position(s, s.cache_write_axis);
    for (const SplitRelation& r : s.splits) {
      if (!r.shift) continue;
      const int p = leaf_position(s, r.outer);
      if (s.leaves[p].kind != LoopKind::kSerial)
        fail("stage '" + name + "': loop '" + r.outer + "' has a shifted tail, which lowering peels off the loop: it " +
             "cannot be " + loop_kind_name(s.leaves[p].kind));
      const Expr inner = axis_value(s, r.inner);
      for (const Leaf& l : s.leaves)
        if ((l.kind == LoopKind::kParallel || is_gpu_block(l.kind) || is_gpu_thread(l.kind)) &&
            uses_var(inner, loop_var_name(s, l.name)))
          fail("stage '" + name + "': loop '" + l.name + "' runs the blocks of a shifted tail ('" + r.parent +
               "') in parallel, where two threads would compute the elements the last block overlaps at once");
      if (s.reduction() && std::any_of(s.leaves.begin(), s.leaves.begin() + p, [](const Leaf& l) { return l.reduce; }))
        fail("stage '" + name + "': loop '" + r.outer + "' has a shifted tail inside a reduction loop, where its " +
             "overlapping elements would be summed twice");
      if (write_at >= 0 && write_at < p)
        fail("stage '" + name + "': cache_write at '" + s.cache_write_axis +
             "' holds the blocks of the shifted tail of '" + r.parent + "', which overlap: put it inside '" + r.outer +
             "'");
    }
    if (!s.cache_write_axis.empty()) {
      int p = leaf_position(s, s.cache_write_axis);
      for (size_t q = 0; q < s.leaves.size(); ++q) {
        if (int(q) > p && is_gpu_thread(s.leaves[q].kind))
          fail("stage '" + name + "': cache_write at '" + s.cache_write_axis + "' must be inside every thread loop ('" +
               s.leaves[q].name + "' is inside it)");
      }
      if (s.leaves[p].kind == LoopKind::kVectorized)
        fail("stage '" + name + "': cache_write at vectorized loop '" + s.cache_write_axis + "'");
    }
    for (const CacheRead& c : s.cache_reads) {
      int p = leaf_position(s, c.axis);
      if (p < 0)
        fail("stage '" + name + "': cache_read of '" + c.tensor + "' at '" + c.axis + "', which is no longer a loop");
      if (s.leaves[p].kind == LoopKind::kVectorized)
        fail("stage '" + name + "': cache_read at vectorized loop '" + c.axis + "'");
    }
  }

  // The split whose last block is shifted back and whose outer loop is `loop`, or null.
  static const SplitRelation* shifted_outer(const Stage& s, const std::string& loop) {
    for (const SplitRelation& r : s.splits)
      if (r.shift && r.outer == loop) return &r;
    return nullptr;
  }

  // A shifted split's block start: outer * factor in every block but the last, extent - factor in the last (peeled
  // off by emit_stage, which substitutes the variable in each).
  static std::string shift_base_name(const Stage& s, const SplitRelation& r) {
    return loop_var_name(s, r.outer) + ".base";
  }

  // Value of an axis (root or intermediate) in terms of the stage's loop variables.
  Expr axis_value(const Stage& s, const std::string& axis) const {
    if (leaf_position(s, axis) >= 0) return loop_var(s, axis);
    for (const SplitRelation& r : s.splits) {
      if (r.parent != axis) continue;
      if (r.shift) return var(shift_base_name(s, r)) + axis_value(s, r.inner);
      return axis_value(s, r.outer) * r.factor + axis_value(s, r.inner);
    }
    for (const FuseRelation& r : s.fuses) {
      if (r.outer == axis) return axis_value(s, r.fused) / r.inner_extent;
      if (r.inner == axis) return axis_value(s, r.fused) % r.inner_extent;
    }
    fail("internal: axis '" + axis + "' of '" + s.tensor->name + "' has no value");
  }

  // Domain coordinate per spatial dimension, in loop variables.
  std::vector<Expr> domain_index(const Stage& s) const {
    std::vector<Expr> index;
    for (const IterVar& a : s.tensor->axes) index.push_back(axis_value(s, a.name()));
    return index;
  }

  // Body variables -> their values: spatial axes become global indices (origin + coordinate).
  std::unordered_map<std::string, Expr> global_index_map(const Stage& s) const {
    std::unordered_map<std::string, Expr> vars;
    std::vector<Expr> dom = domain_index(s);
    for (size_t d = 0; d < dom.size(); ++d) vars[s.tensor->axes[d].name()] = s.origin[d] + dom[d];
    if (auto* r = s.body.as<ReduceNode>())
      for (const IterVar& k : r->axes) vars[k.name()] = axis_value(s, k.name());
    return vars;
  }

  // Conditions under which the current loop iteration is a real element (tail guards, region bounds). The bounds
  // of a dimension that no loop of the stage moves are left out: nest_guards tests them once around the nest.
  std::vector<Expr> guards(const Stage& s, bool spatial_only) const {
    std::vector<Expr> conds;
    for (const SplitRelation& r : s.splits) {
      if (!r.guard || (spatial_only && r.reduce)) continue;
      conds.push_back(lt(axis_value(s, r.parent), r.parent_extent));
    }
    std::vector<Expr> dom = domain_index(s);
    for (size_t d = 0; d < dom.size(); ++d) {
      if (!s.origin_may_leave[d] || nest_invariant(s, dom[d])) continue;
      Expr g = s.origin[d] + dom[d];
      conds.push_back(ge(g, 0));
      conds.push_back(lt(g, s.tensor->shape[d]));
    }
    return conds;
  }

  // Whether no loop of the stage with more than one iteration moves e (a shifted split's block start included).
  bool nest_invariant(const Stage& s, const Expr& e) const {
    return std::none_of(
               s.leaves.begin(), s.leaves.end(),
               [&](const Leaf& leaf) { return leaf.extent > 1 && uses_var(e, loop_var_name(s, leaf.name)); }) &&
           std::none_of(s.splits.begin(), s.splits.end(),
                        [&](const SplitRelation& r) { return r.shift && uses_var(e, shift_base_name(s, r)); });
  }

  // The region bounds of a stage computed at a reader that no loop of the stage moves (a halo row of a band: the
  // row above the map's first): tested once around the stage's nest, which then holds the register tiles it would
  // hold without the halo, rather than in each store.
  std::vector<Expr> nest_guards(const Stage& s) const {
    std::vector<Expr> conds;
    std::vector<Expr> dom = domain_index(s);
    std::unordered_map<std::string, Expr> single_iterations;
    for (const Leaf& leaf : s.leaves)
      if (leaf.extent == 1) single_iterations[loop_var_name(s, leaf.name)] = int_imm(0);
    for (size_t d = 0; d < dom.size(); ++d) {
      if (!s.origin_may_leave[d] || !nest_invariant(s, dom[d])) continue;
      Expr g = simplify(substitute(s.origin[d] + dom[d], single_iterations), ranges_);
      conds.push_back(ge(g, 0));
      conds.push_back(lt(g, s.tensor->shape[d]));
    }
    return conds;
  }

  static Stmt guarded(const std::vector<Expr>& conds, Stmt body) {
    if (conds.empty()) return body;
    Expr all = conds[0];
    for (size_t n = 1; n < conds.size(); ++n) all = logical_and(all, conds[n]);
    return if_then_else(all, std::move(body));
  }

  // Rewrites tensor reads of stage s into buffer loads: through s's caches, the local buffers of stages
  // computed inside s, or the global buffers.
  Expr to_loads(const Stage& s, const Expr& e) const {
    struct Rewriter : ExprMutator {
      const Lowering& self;
      const Stage& s;
      Rewriter(const Lowering& l, const Stage& st) : self(l), s(st) {}
      Expr mutate(const Expr& x) override {
        Expr y = mutate_children(x);
        auto* r = y.as<TensorReadNode>();
        if (!r) return y;
        const std::string& name = r->tensor->name;
        for (const CacheRead& c : s.cache_reads)
          if (c.tensor == name) return self.load_at(c.buffer, r->indices, c.lo);
        auto it = self.stages_.find(name);
        if (it != self.stages_.end() && !it->second.attach_stage.empty())
          return self.load_at(it->second.buffer, r->indices, it->second.origin, it->second.storage_order);
        return self.load_global(self.buffers_.at(name), r->indices);
      }
    } rewriter(*this, s);
    return rewriter.mutate(e);
  }

  Expr load_at(const Buffer& b, const std::vector<Expr>& index, const std::vector<Expr>& origin,
               const std::vector<size_t>& storage_order = {}) const {
    std::vector<Expr> local = index;
    for (size_t d = 0; d < origin.size(); ++d) local[d] = local[d] - origin[d];
    return load(b, flat_index(in_storage_order(local, storage_order), b->shape));
  }

  // The flat index of domain coordinates in s's own buffer: a root stage's global buffer through its packed layout
  // when it has one, a local buffer in its storage order.
  Expr own_index(const Stage& s, const std::vector<Expr>& coords) const {
    auto pack = packs_.find(s.tensor->name);
    if (s.attach_stage.empty() && pack != packs_.end())
      return flat_index(pack->second.packed_index(coords), s.buffer->shape);
    return flat_index(in_storage_order(coords, s.storage_order), s.buffer->shape);
  }

  // The dimensions of s's domain that its vectorized loop moves (none without one).
  std::set<size_t> vector_dims(const Stage& s, const std::vector<std::vector<Expr>>& indices) const {
    std::set<size_t> dims;
    for (const Leaf& leaf : s.leaves) {
      if (leaf.kind != LoopKind::kVectorized) continue;
      for (const std::vector<Expr>& index : indices)
        for (size_t d = 0; d < index.size(); ++d)
          if (uses_var(index[d], loop_var_name(s, leaf.name))) dims.insert(d);
    }
    return dims;
  }

  // How a stage computed at `reader` lays out its local buffer: in its dimensions' order, but for a dimension that both
  // its own vectorized loop and the reader's move along alone, which goes innermost. A channel tile's accumulators
  // are vectors of output channels; an epilogue that runs along the channels too then loads and stores whole vectors of
  // [pixel][channel], where [channel][pixel] would scatter and gather them element by element.
  std::vector<size_t> storage_order(const Stage& s, const Stage& reader) const {
    const std::set<size_t> own = vector_dims(s, {domain_index(s)});
    if (own.size() != 1 || vector_dims(reader, reads_in_loop_vars(reader, s.tensor->name)) != own) return {};
    const size_t moving = *own.begin();
    bool inner_dims = false;
    for (size_t d = moving + 1; d < s.domain.size(); ++d) inner_dims = inner_dims || s.domain[d] > 1;
    if (!inner_dims) return {};
    std::vector<size_t> order;
    for (size_t d = 0; d < s.domain.size(); ++d)
      if (d != moving) order.push_back(d);
    order.push_back(moving);
    return order;
  }

  // A nest of serial loops over a box, innermost vectorizable, calling body(coordinates).
  Stmt box_nest(const std::string& prefix, const std::vector<int64_t>& extent, bool vectorize_inner,
                const std::function<Stmt(const std::vector<Expr>&)>& body) {
    std::vector<Expr> coords;
    for (size_t d = 0; d < extent.size(); ++d) {
      std::string name = prefix + ".r" + std::to_string(d);
      ranges_[name] = IntRange{0, extent[d] - 1};
      coords.push_back(var(name));
    }
    Stmt stmt = body(coords);
    for (size_t d = extent.size(); d-- > 0;) {
      LoopKind kind =
          vectorize_inner && d + 1 == extent.size() && extent[d] > 1 ? LoopKind::kVectorized : LoopKind::kSerial;
      stmt = for_loop(coords[d], extent[d], kind, stmt);
    }
    return stmt;
  }

  // A loop over every element of a box spread over the block's threads (GPU shared-memory fills).
  Stmt box_thread_loop(const std::string& prefix, const std::vector<int64_t>& extent,
                       const std::function<Stmt(const std::vector<Expr>&)>& body) {
    int64_t total = 1;
    for (int64_t e : extent) total *= e;
    std::string name = prefix + ".t";
    ranges_[name] = IntRange{0, total - 1};
    Expr f = var(name);
    std::vector<Expr> coords(extent.size());
    int64_t stride = 1;
    for (size_t d = extent.size(); d-- > 0;) {
      coords[d] = (f / stride) % extent[d];
      stride *= extent[d];
    }
    return for_loop(f, total, LoopKind::kThreadX, body(coords));
  }

  Stmt emit_stage(Stage& s, Context ctx) {
    const std::string& name = s.tensor->name;
    std::vector<Expr> dom = domain_index(s);
    auto vars = global_index_map(s);
    const ReduceNode* red = s.body.as<ReduceNode>();
    int n = int(s.leaves.size());
    int write_at = s.cache_write_axis.empty() ? -1 : leaf_position(s, s.cache_write_axis);

    // Stages computed inside this one get their buffers first: loads in this stage's body refer to them.
    std::vector<Context> leaf_ctx(n);
    Context c = ctx;
    for (int p = 0; p < n; ++p) {
      c.under_block |= is_gpu_block(s.leaves[p].kind);
      c.under_thread |= is_gpu_thread(s.leaves[p].kind);
      leaf_ctx[p] = c;
    }
    for (const std::string& child_name : s.attached) {
      Stage& child = stages_.at(child_name);
      int p = leaf_position(s, child.attach_axis);
      MemoryScope scope =
          leaf_ctx[p].under_block && !leaf_ctx[p].under_thread ? MemoryScope::kShared : MemoryScope::kLocal;
      if (scope == MemoryScope::kLocal) child.storage_order = storage_order(child, s);
      child.buffer =
          make_buffer(child_name, child.tensor->dtype, in_storage_order(child.domain, child.storage_order), scope);
    }
    for (CacheRead& cr : s.cache_reads) {
      int p = leaf_position(s, cr.axis);
      Tensor t = program_.find(cr.tensor);
      Region region = infer_region(reads_in_loop_vars(s, cr.tensor), inner_loop_vars(s, p), t->shape);
      cr.lo = region.lo;
      cr.buffer =
          make_buffer(cr.tensor + "." + memory_scope_name(cr.scope) + "." + name, t->dtype, region.extent, cr.scope);
      cache_regions_[name + "/" + cr.tensor] = region;
    }

    int first_reduce = n;
    for (int p = 0; p < n; ++p)
      if (s.leaves[p].reduce) {
        first_reduce = p;
        break;
      }
    // A cache_write tile inside (or at) a reduction loop holds partial sums: it starts from the output's current
    // value, and the output itself starts from the identity before the first reduction loop.
    bool accumulate = red && write_at >= first_reduce;

    Buffer acc;
    Region acc_region;
    if (write_at >= 0) {
      VarRanges inner = inner_loop_vars(s, write_at);
      try {
        acc_region = infer_region({dom}, inner, s.domain, /*whole_dimension_ok=*/false);
      } catch (const ScheduleError& e) {
        fail("stage '" + name + "': cache_write at '" + s.cache_write_axis + "': " + e.what());
      }
      // The tile is written back whole, so it must be exactly the elements the loops inside compute: a split axis
      // whose outer part runs inside (rows r, r + 256, r + 512 of stacked gates) spans a box with holes that belong
      // to other iterations.
      int64_t points = 1, volume = 1;
      for (const auto& [v, range] : inner)
        if (std::any_of(dom.begin(), dom.end(), [&](const Expr& index) { return uses_var(index, v); }))
          points *= range.hi - range.lo + 1;
      for (int64_t extent : acc_region.extent) volume *= extent;
      if (points != volume)
        fail("stage '" + name + "': cache_write at '" + s.cache_write_axis + "': the loops inside compute " +
             std::to_string(points) + " elements spread over a box of " + std::to_string(volume) +
             "; a tile must be dense (put the cache_write at an inner loop)");
      acc = make_buffer(name + ".acc", s.tensor->dtype, acc_region.extent, MemoryScope::kLocal);
    }
    auto store_target = [&]() -> std::pair<Buffer, Expr> {
      if (acc) {
        std::vector<Expr> local = dom;
        for (size_t d = 0; d < local.size(); ++d) local[d] = local[d] - acc_region.lo[d];
        return {acc, flat_index(local, acc->shape)};
      }
      return {s.buffer, own_index(s, dom)};
    };

    Stmt core;
    auto [target, index] = store_target();
    if (red) {
      Expr source = to_loads(s, substitute(red->source, vars));
      Expr old = load(target, index);
      Expr updated = red->op == ReduceOp::kSum   ? old + source
                     : red->op == ReduceOp::kMax ? maximum(old, source)
                                                 : minimum(old, source);
      core = store(target, index, updated);
    } else {
      core = store(target, index, to_loads(s, substitute(s.body, vars)));
    }
    Stmt stmt = guarded(guards(s, false), core);

    for (int p = n - 1; p >= 0; --p) {
      const Leaf& leaf = s.leaves[p];
      if (p == write_at) stmt = wrap_cache_write(s, acc, acc_region, red, accumulate, stmt);
      for (auto it = s.cache_reads.rbegin(); it != s.cache_reads.rend(); ++it)
        if (it->axis == leaf.name) stmt = wrap_cache_read(s, *it, leaf_ctx[p], stmt);
      for (auto it = s.attached.rbegin(); it != s.attached.rend(); ++it) {
        Stage& child = stages_.at(*it);
        if (child.attach_axis != leaf.name) continue;
        Stmt child_nest = emit_stage(child, leaf_ctx[p]);
        if (child.buffer->scope == MemoryScope::kShared)
          stmt = allocate(child.buffer,
                          seq({child_nest, barrier(BarrierKind::kBlock), stmt, barrier(BarrierKind::kBlock)}));
        else
          stmt = allocate(child.buffer, seq({child_nest, stmt}));
      }
      if (const SplitRelation* shift = shifted_outer(s, leaf.name))
        stmt = peel_shifted_block(s, *shift, leaf, stmt);
      else
        stmt = for_loop(loop_var(s, leaf.name), leaf.extent, leaf.kind, stmt, leaf.explicit_lanes);
      if (red && (write_at < 0 || accumulate) && p == first_reduce)
        stmt = seq({init_nest(s, p, s.buffer, own_index(s, dom), red), stmt});
    }
    if (red && first_reduce == n) fail("internal: reduction '" + name + "' has no reduce loop");
    return guarded(nest_guards(s), stmt);
  }

  // A shifted split's outer loop over `body`: the blocks but the last as a loop, each starting at outer * factor, then
  // the last block after it, starting at extent - factor, so that each is a whole block of affine indices.
  Stmt peel_shifted_block(const Stage& s, const SplitRelation& r, const Leaf& leaf, const Stmt& body) const {
    const Expr outer = loop_var(s, leaf.name);
    const std::string base = shift_base_name(s, r);
    const std::unordered_map<std::string, Expr> blocks = {{base, outer * r.factor}},
                                                last = {{base, Expr(r.parent_extent - r.factor)},
                                                        {loop_var_name(s, leaf.name), Expr(leaf.extent - 1)}};
    // The buffers allocated in the body outside its loops and conditions (stages computed at the loop, its caches)
    // serve both copies: one allocation each, around them, so that the pair stays one statement.
    std::vector<Buffer> buffers;
    std::function<Stmt(const Stmt&)> unwrap = [&](const Stmt& stmt) -> Stmt {
      if (auto* a = as<AllocateNode>(stmt)) {
        buffers.push_back(a->buffer);
        return unwrap(a->body);
      }
      if (auto* q = as<SeqNode>(stmt)) {
        std::vector<Stmt> parts;
        for (const Stmt& part : q->stmts) parts.push_back(unwrap(part));
        return seq(parts);
      }
      return stmt;
    };
    const Stmt inner = unwrap(body);
    auto with = [&](const std::unordered_map<std::string, Expr>& vars) {
      return map_exprs(inner, [&](const Expr& e) { return substitute(e, vars); });
    };
    Stmt peeled = seq({for_loop(outer, leaf.extent - 1, leaf.kind, with(blocks), leaf.explicit_lanes), with(last)});
    for (auto b = buffers.rbegin(); b != buffers.rend(); ++b) peeled = allocate(*b, peeled);
    return peeled;
  }

  // Before the first reduction loop: sets every element the loops below will accumulate into to the identity.
  Stmt init_nest(const Stage& s, int first_reduce, const Buffer& target, const Expr& index, const ReduceNode* red) {
    Stmt stmt = guarded(guards(s, true), store(target, index, identity_element(red->op, s.tensor->dtype)));
    for (int q = int(s.leaves.size()) - 1; q > first_reduce; --q) {
      const Leaf& l = s.leaves[q];
      if (l.reduce) continue;
      LoopKind kind = l.kind == LoopKind::kVectorized || l.kind == LoopKind::kUnrolled || is_gpu_thread(l.kind)
                          ? l.kind
                          : LoopKind::kSerial;
      stmt = for_loop(loop_var(s, l.name), l.extent, kind, stmt);
    }
    return stmt;
  }

  Stmt wrap_cache_write(const Stage& s, const Buffer& acc, const Region& region, const ReduceNode* red, bool accumulate,
                        const Stmt& inner) {
    const std::string prefix = s.tensor->name + ".acc";
    auto acc_index = [&](const std::vector<Expr>& r) { return flat_index(r, acc->shape); };
    // The tile's element r is the stage's element origin + r, which a tail may push past the domain.
    auto in_domain = [&](const std::vector<Expr>& r, std::vector<Expr>& coord) {
      std::vector<Expr> conds;
      for (size_t d = 0; d < r.size(); ++d) {
        coord.push_back(region.lo[d] + r[d]);
        auto b = const_bound(region.lo[d], ranges_);
        if (!b || b->hi + region.extent[d] > s.domain[d]) conds.push_back(lt(coord.back(), s.domain[d]));
      }
      return conds;
    };
    Stmt init;
    if (red)
      init = box_nest(prefix + ".init", region.extent, true, [&](const std::vector<Expr>& r) {
        Expr identity = identity_element(red->op, s.tensor->dtype);
        if (!accumulate) return store(acc, acc_index(r), identity);
        std::vector<Expr> coord;
        std::vector<Expr> conds = in_domain(r, coord);
        Expr current = load(s.buffer, own_index(s, coord));
        for (const Expr& c : conds) current = select(c, current, identity);
        return store(acc, acc_index(r), current);
      });
    Stmt writeback = box_nest(prefix + ".out", region.extent, true, [&](const std::vector<Expr>& r) {
      std::vector<Expr> coord;
      std::vector<Expr> conds = in_domain(r, coord);
      return guarded(conds, store(s.buffer, own_index(s, coord), load(acc, acc_index(r))));
    });
    return allocate(acc, seq({init, inner, writeback}));
  }

  Stmt wrap_cache_read(const Stage& s, const CacheRead& cr, const Context& ctx, const Stmt& inner) {
    const Region& region = cache_regions_.at(s.tensor->name + "/" + cr.tensor);
    Tensor t = program_.find(cr.tensor);
    Buffer source = buffers_.count(cr.tensor) ? buffers_.at(cr.tensor) : stages_.at(cr.tensor).buffer;
    const bool attached_source = stages_.count(cr.tensor) && !stages_.at(cr.tensor).attach_stage.empty();
    const std::vector<Expr> source_origin = attached_source ? stages_.at(cr.tensor).origin : std::vector<Expr>{};
    const std::vector<size_t> source_order =
        attached_source ? stages_.at(cr.tensor).storage_order : std::vector<size_t>{};
    bool any_guard =
        std::any_of(region.may_leave_bounds.begin(), region.may_leave_bounds.end(), [](bool b) { return b; });
    auto copy = [&](const std::vector<Expr>& r) {
      std::vector<Expr> index, conds;
      for (size_t d = 0; d < r.size(); ++d) {
        index.push_back(region.lo[d] + r[d]);
        if (region.may_leave_bounds[d]) {
          conds.push_back(ge(index.back(), 0));
          conds.push_back(lt(index.back(), t->shape[d]));
        }
      }
      return guarded(conds, store(cr.buffer, flat_index(r, cr.buffer->shape),
                                  attached_source ? load_at(source, index, source_origin, source_order)
                                                  : load_global(source, index)));
    };
    std::string prefix = cr.buffer->name;
    if (ctx.under_block && !ctx.under_thread)
      return allocate(cr.buffer, seq({box_thread_loop(prefix, region.extent, copy), barrier(BarrierKind::kBlock), inner,
                                      barrier(BarrierKind::kBlock)}));
    return allocate(cr.buffer, seq({box_nest(prefix, region.extent, !any_guard, copy), inner}));
  }

  static void collect_global_access(const Stmt& s, std::set<std::string>& reads, std::set<std::string>& writes) {
    auto note_loads = [&](const Expr& e) {
      for_each_node(e, [&](const Expr& x) {
        if (auto* l = x.as<BufferLoadNode>())
          if (l->buffer->scope == MemoryScope::kGlobal) reads.insert(l->buffer->name);
      });
    };
    for_each_stmt(s, [&](const Stmt& st) {
      if (auto* st_node = as<StoreNode>(st)) {
        if (st_node->buffer->scope == MemoryScope::kGlobal) writes.insert(st_node->buffer->name);
        note_loads(st_node->index);
        note_loads(st_node->value);
      } else if (auto* i = as<IfThenElseNode>(st)) {
        note_loads(i->cond);
      }
    });
  }

  const Program& program_;
  const StageLayout& layout_;
  std::map<std::string, Stage> stages_;
  std::map<std::string, Buffer> buffers_;
  std::map<std::string, Region> cache_regions_;
  std::map<std::string, PackedLayout> packs_;                // input or stored compute -> its packed layout
  std::map<std::string, std::pair<int64_t, int64_t>> pads_;  // stored compute -> (dimension, elements added)
  std::map<std::string, std::set<std::string>> reads_;       // stage -> tensors its inlined body reads
  std::map<std::string, std::set<std::string>> readers_;     // tensor -> stages whose inlined bodies read it
  VarRanges ranges_;
};

}  // namespace

LoopFunction lower(const Program& program, const Schedule& schedule) {
  std::optional<Program> batched;
  if (!batch_groups_of(schedule).empty()) batched = batched_program(program, schedule);
  LoopFunction f = Lowering(batched ? *batched : program, schedule).run();
  // Explicit vectors are checked on the loops as lowered: the tile's shape comes from every decision of the stage
  // and of the stages computed inside it.
  if (std::vector<std::string> problems = explicit_vector_problems(f.body); !problems.empty())
    throw ScheduleError("explicit_vectors: " + problems.front());
  if (batched) {
    // Callers pass the inputs in the program's order; the batched program may first read them in another.
    std::vector<Buffer> inputs;
    for (const Tensor& t : program.placeholders())
      for (const Buffer& b : f.inputs)
        if (b->name == t->name) inputs.push_back(b);
    if (inputs.size() != f.inputs.size()) throw ScheduleError("batch: the batched program reads other inputs");
    f.inputs = std::move(inputs);
  }
  return f;
}

}  // namespace ingot
