#include "lower/merge_parallel_stages.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>

#include "ir/affine.h"
#include "ir/functor.h"

namespace ingot {

namespace {

// A global buffer access inside a stage body, with the loops around it that are not the parallel chain.
struct Access {
  Expr index;
  std::map<std::string, int64_t> loop_extents;  // enclosing inner loop variable -> extent
  bool guarded = false;                         // under an `if`: not every point of the loops is accessed
};

struct StageAccesses {
  std::map<std::string, std::vector<Access>> stores, loads;  // by buffer name
};

void collect(const Stmt& s, std::map<std::string, int64_t>& loops, StageAccesses& out, bool guarded = false) {
  auto loads_in = [&](const Expr& e) {
    for_each_node(e, [&](const Expr& node) {
      if (auto* load = node.as<BufferLoadNode>(); load && load->buffer->scope == MemoryScope::kGlobal)
        out.loads[load->buffer->name].push_back({load->index, loops, guarded});
    });
  };
  switch (s->kind) {
    case StmtKind::kSeq:
      for (const Stmt& c : as<SeqNode>(s)->stmts) collect(c, loops, out, guarded);
      return;
    case StmtKind::kFor: {
      auto* loop = as<ForNode>(s);
      loops[loop->name()] = loop->extent;
      collect(loop->body, loops, out, guarded);
      loops.erase(loop->name());
      return;
    }
    case StmtKind::kStore: {
      auto* store = as<StoreNode>(s);
      if (store->buffer->scope == MemoryScope::kGlobal)
        out.stores[store->buffer->name].push_back({store->index, loops, guarded});
      loads_in(store->index);
      loads_in(store->value);
      return;
    }
    case StmtKind::kAllocate: collect(as<AllocateNode>(s)->body, loops, out, guarded); return;
    case StmtKind::kIfThenElse: {
      auto* branch = as<IfThenElseNode>(s);
      loads_in(branch->cond);
      collect(branch->then_case, loops, out, true);
      if (branch->else_case) collect(branch->else_case, loops, out, true);
      return;
    }
    case StmtKind::kBarrier:
    case StmtKind::kPrefetch: return;  // reads no value
  }
}

// The terms of an index that only the chain's variables decide and that are not affine (a fused chain's `v / 32` and
// `v % 32`), as variables named by their text: the same term in a read and in a write has the same value in one
// iteration of the chain, so the coverage test below treats it as one more chain variable.
class ChainTerms : public ExprMutator {
 public:
  explicit ChainTerms(const std::set<std::string>& chain) : chain_(chain) {}
  Expr mutate(const Expr& e) override {
    if (auto* b = e.as<BinaryNode>();
        b && b->op != BinaryOp::kAdd && b->op != BinaryOp::kSub && b->op != BinaryOp::kMul && decided_by_chain(e)) {
      std::string name = "chain term " + to_string(e);
      names.insert(name);
      return var(name, e.dtype());
    }
    return mutate_children(e);
  }
  std::set<std::string> names;

 private:
  bool decided_by_chain(const Expr& e) const {
    bool only_chain = true, any = false;
    for_each_node(e, [&](const Expr& node) {
      if (auto* v = node.as<VarNode>()) {
        any = true;
        only_chain = only_chain && chain_.count(v->name) > 0;
      } else if (node.kind() == ExprKind::kBufferLoad) {
        only_chain = false;
      }
    });
    return any && only_chain;
  }
  const std::set<std::string>& chain_;
};

// Whether every element `read` touches is one that `write` touches in the same iteration of the parallel chain:
// the read's affine terms are the write's terms (same coefficient on the same chain variable or chain term; same
// coefficient on an inner loop of at most the write's extent, each write loop used once), and the difference of the
// constants is a point of the write's remaining inner loops (gates stacked in one tensor: the read's + 256 is the
// write's gate loop at 1).
bool covered(const Access& read, const Access& write, const std::set<std::string>& chain_vars) {
  if (write.guarded) return false;  // a guard may skip the very point that holds the read's element
  ChainTerms terms(chain_vars);
  std::optional<AffineForm> r = as_affine(terms.mutate(read.index)), w = as_affine(terms.mutate(write.index));
  std::set<std::string> chain = chain_vars;
  chain.insert(terms.names.begin(), terms.names.end());
  if (!r || !w) return false;
  std::set<std::string> used_write_loops;
  for (const auto& [var, coeff] : r->coeffs) {
    if (chain.count(var)) {
      auto it = w->coeffs.find(var);
      if (it == w->coeffs.end() || it->second != coeff) return false;
      continue;
    }
    auto extent = read.loop_extents.find(var);
    if (extent == read.loop_extents.end()) return false;  // not a loop variable of the read
    bool matched = false;
    for (const auto& [wvar, wcoeff] : w->coeffs) {
      auto wextent = write.loop_extents.find(wvar);
      if (wcoeff != coeff || wextent == write.loop_extents.end() || wextent->second < extent->second ||
          used_write_loops.count(wvar))
        continue;
      used_write_loops.insert(wvar);
      matched = true;
      break;
    }
    if (!matched) return false;
  }
  // Chain variables the write uses must appear in the read with the same coefficient (checked above from the
  // read's side; here from the write's).
  for (const auto& [var, coeff] : w->coeffs)
    if (chain.count(var) && (!r->coeffs.count(var) || r->coeffs.at(var) != coeff)) return false;
  // The constant difference as a mixed-radix point of the unused write loops, largest coefficient first.
  std::vector<std::pair<int64_t, int64_t>> free_loops;  // (coefficient, extent)
  for (const auto& [wvar, wcoeff] : w->coeffs) {
    auto extent = write.loop_extents.find(wvar);
    if (!chain.count(wvar) && !used_write_loops.count(wvar) && extent != write.loop_extents.end() && wcoeff > 0)
      free_loops.push_back({wcoeff, extent->second});
  }
  std::sort(free_loops.rbegin(), free_loops.rend());
  int64_t rest = r->constant - w->constant;
  for (const auto& [coeff, extent] : free_loops) {
    if (rest <= 0) break;
    rest -= std::min(rest / coeff, extent - 1) * coeff;
  }
  return rest == 0;
}

// The chain of parallel loops a stage starts with (outermost first), or empty.
std::vector<const ForNode*> parallel_chain(const Stmt& s) {
  std::vector<const ForNode*> chain;
  for (auto* loop = as<ForNode>(s); loop && loop->loop_kind == LoopKind::kParallel; loop = as<ForNode>(loop->body))
    chain.push_back(loop);
  return chain;
}

// A global buffer at least this large streams through the cache in tiles rather than staying in it: a GEMM's
// weight. Two independent stages that each stream their own such operand are not merged: each iteration would
// then hold a tile of every one of them (Q, K and V of a BERT layer, three 64-row tiles of 2.25 MB weights, with the
// activations did not fit a 1 MB L2, and the merged loop ran 25% slower than three loops one after the other).
constexpr int64_t kStreamedOperandBytes = 256 * 1024;

class Merger {
 public:
  explicit Merger(const LoopFunction& function) {
    for (const auto* list : {&function.inputs, &function.outputs, &function.workspace})
      for (const Buffer& b : *list) buffer_bytes_[b->name] = b->num_elements() * dtype_bytes(b->dtype);
  }

  Stmt run(const Stmt& body) {
    auto* top = as<SeqNode>(body);
    if (!top) return body;
    const std::vector<Stmt>& stmts = top->stmts;
    for (size_t i = 0; i < stmts.size(); ++i) {
      const Stmt& s = stmts[i];
      if (as<PrefetchNode>(s) && !group_.empty()) {
        pending_prefetches_.push_back(s);  // after the group, unless the stage it is for joins the group
        continue;
      }
      if (auto* b = as<BarrierNode>(s); b && b->barrier_kind == BarrierKind::kGrid && !group_.empty()) {
        pending_barrier_ = true;  // dropped if the next stage joins the group
        continue;
      }
      if (auto* b = as<BarrierNode>(s); b && b->barrier_kind == BarrierKind::kKernel) {
        flush(/*kernel_ends=*/true);  // the end of a kernel waits for all of it
        out_.push_back(s);
        clear_unsynced();
        continue;
      }
      std::vector<const ForNode*> chain = parallel_chain(s);
      if (!chain.empty() && !group_.empty() && joins(chain)) {
        add(chain);
        continue;
      }
      flush();
      if (!chain.empty()) {
        add(chain);
      } else {
        out_.push_back(s);
        if (auto* b = as<BarrierNode>(s); b && b->barrier_kind == BarrierKind::kGrid) {
          clear_unsynced();
        } else if (!as<BarrierNode>(s)) {
          StageAccesses accesses;
          std::map<std::string, int64_t> loops;
          collect(s, loops, accesses);
          note_unsynced(accesses);
        }
      }
    }
    flush(/*kernel_ends=*/true);
    return seq(out_);
  }

 private:
  bool joins(const std::vector<const ForNode*>& chain) {
    if (chain.size() != group_chain_.size()) return false;
    for (size_t d = 0; d < chain.size(); ++d)
      if (chain[d]->extent != group_chain_[d].second) return false;
    StageAccesses accesses = accesses_of(chain);
    for (const auto& [buffer, sites] : accesses.stores)
      if (group_accesses_.stores.count(buffer) || group_accesses_.loads.count(buffer)) return false;
    if (streams_its_own_operand(accesses, group_accesses_) && streams_its_own_operand(group_accesses_, accesses) &&
        std::none_of(accesses.loads.begin(), accesses.loads.end(),
                     [&](const auto& load) { return group_accesses_.stores.count(load.first) > 0; }))
      return false;
    // Nor touch what stages outside the group wrote or read since the last barrier kept: only a barrier the merge
    // drops (before this stage or between earlier members) ordered those accesses before this stage's.
    for (const auto& [buffer, reads] : accesses.loads)
      if (unsynced_.count(buffer)) return false;
    for (const auto& [buffer, sites] : accesses.stores)
      if (unsynced_.count(buffer) || unsynced_reads_.count(buffer)) return false;
    for (const auto& [buffer, reads] : accesses.loads) {
      auto writes = group_accesses_.stores.find(buffer);
      if (writes == group_accesses_.stores.end()) continue;
      for (const Access& read : reads)
        if (std::none_of(writes->second.begin(), writes->second.end(),
                         [&](const Access& write) { return covered(read, write, chain_vars_); }))
          return false;
    }
    return true;
  }

  // Whether `a` reads a streamed operand (kStreamedOperandBytes or more, written by neither) that `b` does not read.
  bool streams_its_own_operand(const StageAccesses& a, const StageAccesses& b) const {
    return std::any_of(a.loads.begin(), a.loads.end(), [&](const auto& load) {
      auto bytes = buffer_bytes_.find(load.first);
      return bytes != buffer_bytes_.end() && bytes->second >= kStreamedOperandBytes && !b.loads.count(load.first) &&
             !a.stores.count(load.first) && !b.stores.count(load.first);
    });
  }

  // The accesses of the stage's body with its chain variables renamed to the group's.
  StageAccesses accesses_of(const std::vector<const ForNode*>& chain) {
    StageAccesses out;
    std::map<std::string, int64_t> loops;
    collect(renamed_body(chain), loops, out);
    return out;
  }

  Stmt renamed_body(const std::vector<const ForNode*>& chain) {
    Stmt body = chain.back()->body;
    if (group_chain_.empty()) return body;
    std::unordered_map<std::string, Expr> rename;
    for (size_t d = 0; d < chain.size(); ++d)
      if (chain[d]->name() != group_chain_[d].first) rename[chain[d]->name()] = group_vars_[d];
    if (rename.empty()) return body;
    return map_exprs(body, [&](const Expr& e) { return substitute(e, rename); });
  }

  void add(const std::vector<const ForNode*>& chain) {
    if (group_.empty()) {
      for (const ForNode* loop : chain) {
        group_chain_.push_back({loop->name(), loop->extent});
        group_vars_.push_back(loop->var);
        chain_vars_.insert(loop->name());
      }
      group_kinds_.clear();
      for (const ForNode* loop : chain) group_kinds_.push_back(loop->loop_kind);
    }
    merged_barrier_ |= pending_barrier_;
    pending_barrier_ = false;
    pending_prefetches_.clear();  // their reader runs in the same iteration as what they would have overlapped
    Stmt body = renamed_body(chain);
    std::map<std::string, int64_t> loops;
    collect(body, loops, group_accesses_);
    group_.push_back(body);
  }

  void flush(bool kernel_ends = false) {
    if (kernel_ends) merged_barrier_ = pending_barrier_ = false;
    if (!group_.empty()) {
      Stmt nest = seq(group_);
      for (size_t d = group_chain_.size(); d-- > 0;)
        nest = for_loop(group_vars_[d], group_chain_[d].second, group_kinds_[d], nest);
      out_.push_back(nest);
      out_.insert(out_.end(), pending_prefetches_.begin(), pending_prefetches_.end());
      // A later stage that stayed apart may rely on a barrier that merging removed: keep one after the group.
      if (merged_barrier_ || pending_barrier_) {
        out_.push_back(barrier(BarrierKind::kGrid));
        clear_unsynced();
      } else {
        note_unsynced(group_accesses_);
      }
    } else if (pending_barrier_) {
      out_.push_back(barrier(BarrierKind::kGrid));
      clear_unsynced();
    }
    group_.clear();
    group_chain_.clear();
    group_vars_.clear();
    group_kinds_.clear();
    chain_vars_.clear();
    group_accesses_ = {};
    pending_prefetches_.clear();
    merged_barrier_ = pending_barrier_ = false;
  }

  std::vector<Stmt> out_;
  std::vector<Stmt> group_;  // member bodies, chain variables renamed
  std::vector<std::pair<std::string, int64_t>> group_chain_;
  std::vector<Expr> group_vars_;
  std::vector<LoopKind> group_kinds_;
  std::set<std::string> chain_vars_;
  StageAccesses group_accesses_;
  bool pending_barrier_ = false;                 // a grid barrier after the group's last member, not yet emitted
  bool merged_barrier_ = false;                  // a grid barrier between two members was dropped
  std::vector<Stmt> pending_prefetches_;         // met after the group's last member
  std::map<std::string, int64_t> buffer_bytes_;  // global buffers of the function
  void note_unsynced(const StageAccesses& accesses) {
    for (const auto& [buffer, sites] : accesses.stores) unsynced_.insert(buffer);
    for (const auto& [buffer, sites] : accesses.loads) unsynced_reads_.insert(buffer);
  }
  void clear_unsynced() {
    unsynced_.clear();
    unsynced_reads_.clear();
  }

  // Written (unsynced_) and read (unsynced_reads_) by emitted statements since the last emitted barrier.
  std::set<std::string> unsynced_, unsynced_reads_;
};

}  // namespace

LoopFunction merge_parallel_stages(const LoopFunction& function) {
  LoopFunction out = function;
  // Each kernel merges on its own: a kernel barrier ends the group (it is not a grid barrier, so flush() keeps it).
  out.body = Merger(function).run(function.body);
  return out;
}

}  // namespace ingot
