// A schedule is a replayable list of decisions about how to run a program's computes (split, reorder, fuse,
// parallel, vectorize, unroll, bind, compute_at, compute_inline, cache_write, cache_read, explicit_vectors, pack,
// batch, pad), and optionally the stage layout a partition plan fixes (the order of stages, their barriers and
// kernels). It is plain data with a canonical JSON form: the tuner samples it, the database stores it, lowering
// replays it. What each decision means and the rules it must keep: docs/schedules.md; lowering (lower/lower.h) checks
// every rule.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "ir/expr.h"
#include "ir/hash.h"
#include "ir/stmt.h"

namespace ingot {

enum class DecisionKind : uint8_t {
  kSplit,
  kReorder,
  kFuse,
  kParallel,
  kVectorize,
  kUnroll,
  kBind,
  kComputeAt,
  kComputeInline,
  kCacheWrite,
  kCacheRead,
  kExplicitVectors,
  kPack,
  kBatch,
  kPad
};
const char* decision_kind_name(DecisionKind k);  // "split", "reorder", ... as in the JSON

// How a split covers an extent its factor does not divide (lowering's rules: docs/loop_semantics.md, "Split tails").
enum class SplitTail : uint8_t {
  kExact,  // the factor must divide the extent
  kGuard,  // the last block runs past the extent, its iterations there skipped by a guard
  kShift,  // the last block is moved back to end at the extent: it computes again what the block before it computed
           // where they overlap, and every block stays whole (a spatial axis; lowering peels the last block off)
};
const char* split_tail_name(SplitTail t);  // "exact", "guard", "shift", as in the JSON

// One decision. Axis names: a compute's axes are named by the compute (i, j, ... and its reduce axes);
// split of x makes x.o and x.i; fuse of a and b makes a+b.
struct Decision {
  DecisionKind kind = DecisionKind::kSplit;
  std::string stage;              // the compute this decision is about; pack: the placeholder; batch: the new compute
  std::vector<std::string> axes;  // split/parallel/vectorize/unroll/bind/compute_at/cache_write/cache_read: one
                                  // axis; reorder: the new order; fuse: outer then inner; batch: the members
  int64_t factor = 0;             // split: extent of the inner axis; explicit_vectors: fp32 lanes per vector;
                                  // pack: the block; pad: the elements added
  int64_t dim = 0;                // pack: the placeholder's dimension cut into blocks; pad: the dimension padded
  SplitTail tail = SplitTail::kExact;       // split: how a factor that does not divide the extent covers it
  std::string target;                       // compute_at: the reader stage whose loop `axes[0]` hosts this stage
  std::string tensor;                       // cache_read: the tensor read through the cache; batch: the stacked read
  MemoryScope scope = MemoryScope::kLocal;  // cache_read
  LoopKind bind = LoopKind::kSerial;        // bind: a blockIdx / threadIdx kind
  bool operator==(const Decision& o) const;
  std::string to_string() const;  // one line, for messages
};

// A decision of a kind about a stage's axes, every other field at its default (the builders' and the mutations').
Decision make_decision(DecisionKind kind, const std::string& stage, std::vector<std::string> axes);

// Thrown for a decision that cannot be applied; the message names the decision and why.
class ScheduleError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Where a partition plan puts the computes: steps in order, each a list of computes lowered side by side (no
// barrier between them unless one reads another), with a grid barrier or a new kernel before the step.
// Lowering emits the computes in this order; an empty layout means the program's topological order in one
// kernel.
struct LayoutStep {
  std::vector<std::string> computes;
  bool barrier_before = false;
  bool kernel_before = false;  // the step starts a new kernel (its own parallel region / kernel launch)
  // Input tensors of the function (placeholders) the step reads, fetched into cache while the step before it
  // finishes: lowering puts a prefetch at the end of the previous step, before the barrier.
  std::vector<std::string> prefetch = {};
  bool operator==(const LayoutStep&) const = default;
};
using StageLayout = std::vector<LayoutStep>;

class Schedule {
 public:
  Schedule() = default;
  explicit Schedule(std::vector<Decision> decisions) : decisions_(std::move(decisions)) {}
  const std::vector<Decision>& decisions() const { return decisions_; }
  bool empty() const { return decisions_.empty(); }

  // Builders append one decision each and return *this.
  Schedule& split(const std::string& stage, const std::string& axis, int64_t factor,
                  SplitTail tail = SplitTail::kExact);
  Schedule& reorder(const std::string& stage, std::vector<std::string> order);
  Schedule& fuse(const std::string& stage, const std::string& outer, const std::string& inner);
  Schedule& parallel(const std::string& stage, const std::string& axis);
  Schedule& vectorize(const std::string& stage, const std::string& axis);
  Schedule& unroll(const std::string& stage, const std::string& axis);
  Schedule& bind(const std::string& stage, const std::string& axis, LoopKind kind);
  Schedule& compute_at(const std::string& stage, const std::string& reader, const std::string& axis);
  Schedule& compute_inline(const std::string& stage);
  Schedule& cache_write(const std::string& stage, const std::string& axis);
  Schedule& cache_read(const std::string& stage, const std::string& tensor, MemoryScope scope, const std::string& axis);
  // The register tile of the vectorized loop `axis` (a reduction's folds inside it, or the accumulators of a spatial
  // tile it ends) is held in explicit vectors of `lanes` fp32 lanes (docs/schedules.md says which tiles qualify).
  Schedule& explicit_vectors(const std::string& stage, const std::string& axis, int64_t lanes);
  // The placeholder `tensor` is passed in a packed layout, made once before the runs (a weight's, as inference
  // runtimes prepack them): its dimension `dim` cut into blocks of `block`, the block index outermost and the offset
  // in a block innermost (ir/packed_layout.h). Every stage reading it reads the packed form. A compute stored in the
  // workspace may be packed alike (a blocked layout between stages): its stage writes the packed form.
  Schedule& pack(const std::string& tensor, int64_t dim, int64_t block);
  // The computes `members` become one compute `batched` with a leading axis over them, reading `stacked`, the read they
  // differ in (ir/horizontal_batch.h). Applied to the program before any other decision, which may name `batched`.
  Schedule& batch(const std::string& batched, std::vector<std::string> members, const std::string& stacked);
  // The buffer of `stage`, a compute stored in the workspace, has `elements` more elements along dimension `dim` than
  // the compute, never written or read: each index of the dimensions before it moves by that much more. Rows of 4 KB
  // read together at one column fall in one set of the L1 cache; a pad of one line spreads them.
  Schedule& pad(const std::string& stage, int64_t dim, int64_t elements);
  void append(Decision d) { decisions_.push_back(std::move(d)); }
  const StageLayout& layout() const { return layout_; }
  void set_layout(StageLayout layout) { layout_ = std::move(layout); }

  // Canonical JSON: {"decisions":[...],"version":1} with sorted keys and no white space, plus
  // "layout":[{"barrier":b,"computes":[...],"kernel":b[,"prefetch":[...]]},...] when there is a layout; equal
  // schedules give equal text. from_json throws ScheduleError naming the decision index and key for malformed input.
  std::string to_json() const;
  static Schedule from_json(const std::string& text);
  uint64_t hash() const { return fnv1a64(to_json()); }
  bool operator==(const Schedule& o) const { return decisions_ == o.decisions_ && layout_ == o.layout_; }

 private:
  std::vector<Decision> decisions_;
  StageLayout layout_;
};

}  // namespace ingot
