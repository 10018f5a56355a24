#include "lower/stage_intervals.h"

#include <algorithm>
#include <set>

#include "ir/flops.h"
#include "lower/kernels.h"

namespace ingot {

namespace {

// Float operations a statement executes.
int64_t executed_flops(const Stmt& s) {
  if (!s) return 0;
  switch (s->kind) {
    case StmtKind::kFor: {
      auto* loop = as<ForNode>(s);
      return loop->extent * executed_flops(loop->body);
    }
    case StmtKind::kSeq: {
      int64_t sum = 0;
      for (const Stmt& c : as<SeqNode>(s)->stmts) sum += executed_flops(c);
      return sum;
    }
    case StmtKind::kStore: return flops_per_evaluation(as<StoreNode>(s)->value);
    case StmtKind::kAllocate: return executed_flops(as<AllocateNode>(s)->body);
    case StmtKind::kIfThenElse: {
      auto* branch = as<IfThenElseNode>(s);
      return std::max(executed_flops(branch->then_case), executed_flops(branch->else_case));
    }
    case StmtKind::kBarrier:
    case StmtKind::kPrefetch: return 0;
  }
  return 0;
}

class IntervalCollector {
 public:
  explicit IntervalCollector(size_t kernel) { open(kernel); }

  void walk(const Stmt& s) {
    if (auto* list = as<SeqNode>(s)) {
      for (const Stmt& c : list->stmts) walk(c);
    } else if (auto* allocation = as<AllocateNode>(s)) {
      walk(allocation->body);
    } else if (auto* barrier = as<BarrierNode>(s); barrier && barrier->barrier_kind == BarrierKind::kGrid) {
      open(intervals_.back().kernel);
    } else {
      account(s);
    }
  }

  std::vector<StageInterval> take() { return std::move(intervals_); }

 private:
  void open(size_t kernel) {
    intervals_.push_back({});
    intervals_.back().kernel = kernel;
    touched_.clear();
  }

  void account(const Stmt& s) {
    StageInterval& interval = intervals_.back();
    interval.flops += executed_flops(s);
    StmtBuffers buffers = stmt_buffers(s);
    for (const Buffer& b : buffers.used) {
      if (b->scope != MemoryScope::kGlobal) continue;
      if (touched_.insert(b->name).second) interval.bytes += b->num_elements() * dtype_bytes(b->dtype);
      if (buffers.written.count(b->name) &&
          std::find(interval.stores.begin(), interval.stores.end(), b->name) == interval.stores.end())
        interval.stores.push_back(b->name);
    }
  }

  std::vector<StageInterval> intervals_;
  std::set<std::string> touched_;  // the current interval's global buffers
};

}  // namespace

std::vector<StageInterval> stage_intervals(const LoopFunction& f) {
  std::vector<StageInterval> all;
  std::vector<Stmt> kernels = kernel_bodies(f.body);
  for (size_t k = 0; k < kernels.size(); ++k) {
    IntervalCollector collector(k);
    collector.walk(kernels[k]);
    for (StageInterval& interval : collector.take()) all.push_back(std::move(interval));
  }
  return all;
}

}  // namespace ingot
