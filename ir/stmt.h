// Loop IR: the statements that lowering produces and the printers consume. Loops run over [0, extent) and
// carry a kind (serial, parallel, vectorized, unrolled, GPU block or thread); buffers have memory scopes;
// barriers separate the stages of one kernel (block-level: __syncthreads; grid-level: a whole-grid sync on
// the GPU, an OpenMP barrier on the CPU) and end one kernel where the next begins (kernel-level); a prefetch asks
// for a global buffer to be brought into cache ahead of the stage that reads it.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ir/expr.h"
#include "ir/packed_layout.h"

namespace ingot {

enum class LoopKind : uint8_t {
  kSerial,
  kParallel,
  kVectorized,
  kUnrolled,
  kBlockX,
  kBlockY,
  kBlockZ,
  kThreadX,
  kThreadY,
  kThreadZ
};
// kKernel ends a kernel: everything before it completes before anything after it starts, as between two
// kernel launches (CPU: the parallel region ends and a new one begins). It only separates top-level stages.
enum class BarrierKind : uint8_t { kBlock, kGrid, kKernel };
const char* barrier_kind_name(BarrierKind k);  // "block", "grid", "kernel"
enum class StmtKind : uint8_t { kFor, kSeq, kStore, kAllocate, kIfThenElse, kBarrier, kPrefetch };

const char* loop_kind_name(LoopKind k);             // "serial", "parallel", "vectorized", "unrolled", "blockIdx.x", ...
LoopKind parse_loop_kind(const std::string& name);  // throws std::invalid_argument
inline bool is_gpu_block(LoopKind k) {
  return k == LoopKind::kBlockX || k == LoopKind::kBlockY || k == LoopKind::kBlockZ;
}
inline bool is_gpu_thread(LoopKind k) {
  return k == LoopKind::kThreadX || k == LoopKind::kThreadY || k == LoopKind::kThreadZ;
}

class StmtNode {
 public:
  const StmtKind kind;
  virtual ~StmtNode() = default;

 protected:
  explicit StmtNode(StmtKind k) : kind(k) {}
};
using Stmt = std::shared_ptr<const StmtNode>;

template <class T>
const T* as(const Stmt& s) {
  return s && s->kind == T::kKind ? static_cast<const T*>(s.get()) : nullptr;
}

struct ForNode final : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kFor;
  ForNode(Expr v, int64_t e, LoopKind k, Stmt b, int64_t lanes)
      : StmtNode(kKind), var(std::move(v)), extent(e), loop_kind(k), body(std::move(b)), explicit_lanes(lanes) {}
  const Expr var;  // a VarNode, i64
  const int64_t extent;
  const LoopKind loop_kind;
  const Stmt body;
  // A vectorized loop's register tile held in explicit vectors of this many fp32 lanes (a schedule's
  // explicit_vectors decision, validated by lowering; docs/loop_semantics.md); 0 for every other loop.
  const int64_t explicit_lanes;
  const std::string& name() const { return var.as<VarNode>()->name; }
};
struct SeqNode final : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kSeq;
  explicit SeqNode(std::vector<Stmt> s) : StmtNode(kKind), stmts(std::move(s)) {}
  const std::vector<Stmt> stmts;
};
struct StoreNode final : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kStore;
  StoreNode(Buffer b, Expr i, Expr v)
      : StmtNode(kKind), buffer(std::move(b)), index(std::move(i)), value(std::move(v)) {}
  const Buffer buffer;
  const Expr index;  // flat, row-major
  const Expr value;
};
// A shared or local buffer that lives for the duration of body.
struct AllocateNode final : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kAllocate;
  AllocateNode(Buffer b, Stmt s) : StmtNode(kKind), buffer(std::move(b)), body(std::move(s)) {}
  const Buffer buffer;
  const Stmt body;
};
struct IfThenElseNode final : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kIfThenElse;
  IfThenElseNode(Expr c, Stmt t, Stmt e)
      : StmtNode(kKind), cond(std::move(c)), then_case(std::move(t)), else_case(std::move(e)) {}
  const Expr cond;
  const Stmt then_case;
  const Stmt else_case;  // may be null
};
struct BarrierNode final : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kBarrier;
  explicit BarrierNode(BarrierKind k) : StmtNode(kKind), barrier_kind(k) {}
  const BarrierKind barrier_kind;
};

// A hint with no effect on values: every thread of the kernel fetches its share of the buffer's cache lines into
// cache (GPU: the L2, the lines split over the whole grid; CPU: its L2, the lines split over the threads as a
// static schedule splits the rows of a stage). Only between top-level stages of a kernel.
struct PrefetchNode final : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kPrefetch;
  explicit PrefetchNode(Buffer b) : StmtNode(kKind), buffer(std::move(b)) {}
  const Buffer buffer;
};

// Builders; they check what they can (positive extents, integer indices, matching value types).
// explicit_lanes > 0 only on a kVectorized loop (std::invalid_argument otherwise).
Stmt for_loop(Expr var, int64_t extent, LoopKind kind, Stmt body, int64_t explicit_lanes = 0);
// The same loop (variable, extent, kind, explicit lanes) around another body.
Stmt with_body(const ForNode* loop, Stmt body);
Stmt seq(std::vector<Stmt> stmts);  // flattens nested sequences, drops nulls; one statement stays itself
Stmt store(Buffer buffer, Expr index, Expr value);
Stmt allocate(Buffer buffer, Stmt body);
Stmt if_then_else(Expr cond, Stmt then_case, Stmt else_case = nullptr);
Stmt barrier(BarrierKind kind);
Stmt prefetch(Buffer buffer);  // buffer must be global

// Rebuilds s with every expression (indices, values, conditions) passed through fn; shares unchanged parts.
Stmt map_exprs(const Stmt& s, const std::function<Expr(const Expr&)>& fn);
// Calls fn on every statement, parents first.
void for_each_stmt(const Stmt& s, const std::function<void(const Stmt&)>& fn);

bool structural_equal(const Stmt& a, const Stmt& b);

// One kernel as a function: arguments are the global input and output buffers; workspace buffers are global
// scratch the caller provides (intermediates between stages); body holds the stages and their barriers.
struct LoopFunction {
  std::string name;
  std::vector<Buffer> inputs;
  std::vector<Buffer> outputs;
  std::vector<Buffer> workspace;
  Stmt body;
  // Inputs passed packed (a schedule's pack decisions): their buffers have the packed shape, and callers pack the
  // program's data once before the runs (PackedLayout::pack).
  std::vector<PackedLayout> packed_inputs = {};
};

std::string to_string(const Stmt& s, int indent = 0);
std::string to_string(const LoopFunction& f);

}  // namespace ingot
