// Ansor-style stage features of a LoopFunction: one walk over the stores keys each structurally and featurizes the
// first of each key (counts, loops, buffer footprints and reuse, intensity, context). See docs/costmodel.md.
#include "costmodel/features.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <iterator>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "ir/affine.h"
#include "ir/bound.h"
#include "ir/functor.h"
#include "lower/guard_bound.h"

namespace ingot {

namespace {

// ---- The columns ----

constexpr int kBufferSlots = 5;
constexpr int kCurvePoints = 10;
constexpr double kCacheLineBytes = 64;

// Features that are one number per store, in column order.
enum Scalar : int {
  kFloatAddSub,
  kFloatMul,
  kFloatFma,
  kFloatDiv,
  kFloatMathCalls,
  kFloatCompareSelect,
  kFloatMinMax,
  kFloatOps,
  kIntAddSub,
  kIntMul,
  kIntDivMod,
  kIntCompareLogic,
  kVectorizedFloatOps,
  kVectorLanes,
  kUnrolledFloatOps,
  kParallelFloatOps,
  kVectorizedLoops,
  kVectorizedExtentProduct,
  kVectorizedInnermostExtent,
  kVectorizedPosition,
  kUnrolledLoops,
  kUnrolledExtentProduct,
  kUnrolledInnermostExtent,
  kUnrolledPosition,
  kParallelLoops,
  kParallelExtentProduct,
  kParallelInnermostExtent,
  kParallelPosition,
  kGpuBlockLoops,
  kGpuBlockExtentProduct,
  kGpuBlockInnermostExtent,
  kGpuBlockPosition,
  kGpuThreadLoops,
  kGpuThreadExtentProduct,
  kGpuThreadInnermostExtent,
  kGpuThreadPosition,
  kSerialLoops,
  kSerialExtentProduct,
  kReductionLoops,
  kReductionExtentProduct,
  kLoopCount,
  kExecutions,
  kStageIndex,
  kKernelIndex,
  kGridBarriersBefore,
  kBlockBarriersBefore,
  kIsReductionInit,
  kStoreScope,
  kLocalBuffers,
  kLocalBufferBytes,
  kSharedBuffers,
  kSharedBufferBytes,
  kTargetIsGpu,
  kTargetThreads,
  kTargetSimdFp32Lanes,
  kTargetL1Bytes,
  kTargetL2Bytes,
  kTargetL3Bytes,
  kTargetPeakGflops,
  kTargetBandwidthGbS,
  kGpuThreadsPerBlock,
  kGpuBlocks,
  kGpuRegistersPerThread,
  kGpuSharedBytesPerBlock,
  kLaneLoopExtent,
  kLaneContiguousStreams,
  kLaneBroadcastStreams,
  kLaneStridedStreams,
  kLaneLoopIsReduction,
  kReductionChains,
  kLaneWidth,
  kL1MissLines,
  kL2MissLines,
  kL3MissLines,
  kEstimatedCycles,
  kScalarCount
};
constexpr const char* kScalarNames[] = {
    "float_add_sub",
    "float_mul",
    "float_fma",
    "float_div",
    "float_math_calls",
    "float_compare_select",
    "float_min_max",
    "float_ops",
    "int_add_sub",
    "int_mul",
    "int_div_mod",
    "int_compare_logic",
    "vectorized_float_ops",
    "vector_lanes",
    "unrolled_float_ops",
    "parallel_float_ops",
    "vectorized_loops",
    "vectorized_extent_product",
    "vectorized_innermost_extent",
    "vectorized_position",
    "unrolled_loops",
    "unrolled_extent_product",
    "unrolled_innermost_extent",
    "unrolled_position",
    "parallel_loops",
    "parallel_extent_product",
    "parallel_innermost_extent",
    "parallel_position",
    "gpu_block_loops",
    "gpu_block_extent_product",
    "gpu_block_innermost_extent",
    "gpu_block_position",
    "gpu_thread_loops",
    "gpu_thread_extent_product",
    "gpu_thread_innermost_extent",
    "gpu_thread_position",
    "serial_loops",
    "serial_extent_product",
    "reduction_loops",
    "reduction_extent_product",
    "loop_count",
    "executions",
    "stage_index",
    "kernel_index",
    "grid_barriers_before",
    "block_barriers_before",
    "is_reduction_init",
    "store_scope",
    "local_buffers",
    "local_buffer_bytes",
    "shared_buffers",
    "shared_buffer_bytes",
    "target_is_gpu",
    "target_threads",
    "target_simd_fp32_lanes",
    "target_l1_bytes",
    "target_l2_bytes",
    "target_l3_bytes",
    "target_peak_gflops",
    "target_bandwidth_gb_s",
    "gpu_threads_per_block",
    "gpu_blocks",
    "gpu_registers_per_thread",
    "gpu_shared_bytes_per_block",
    "lane_loop_extent",
    "lane_contiguous_streams",
    "lane_broadcast_streams",
    "lane_strided_streams",
    "lane_loop_is_reduction",
    "reduction_chains",
    "lane_width",
    "l1_miss_lines",
    "l2_miss_lines",
    "l3_miss_lines",
    "estimated_cycles",
};
static_assert(std::size(kScalarNames) == kScalarCount, "one name per scalar feature");

// Features of one buffer slot (buf0_ ... buf4_), in column order.
enum BufferField : int {
  kBufRead,
  kBufWrite,
  kBufScope,
  kBufBytes,
  kBufUniqueBytes,
  kBufLines,
  kBufUniqueLines,
  kBufStride,
  kBufReuseType,
  kBufReuseDistanceIters,
  kBufReuseDistanceBytes,
  kBufReuseCount,
  kBufBytesPerReuse,
  kBufferFieldCount
};
constexpr const char* kBufferFieldNames[] = {
    "read",
    "write",
    "scope",
    "bytes",
    "unique_bytes",
    "lines",
    "unique_lines",
    "stride",
    "reuse_type",
    "reuse_distance_iters",
    "reuse_distance_bytes",
    "reuse_count",
    "bytes_per_reuse",
};
static_assert(std::size(kBufferFieldNames) == kBufferFieldCount, "one name per buffer feature");

constexpr int kColumnCount = kScalarCount + kBufferSlots * kBufferFieldCount + kCurvePoints;

int buffer_column(int slot, BufferField field) { return kScalarCount + slot * kBufferFieldCount + field; }
int curve_column(int point) { return kScalarCount + kBufferSlots * kBufferFieldCount + point; }

// Codes of the small-integer features (docs/costmodel.md).
double scope_code(MemoryScope scope) {
  switch (scope) {
    case MemoryScope::kGlobal: return 1;
    case MemoryScope::kShared: return 2;
    case MemoryScope::kLocal: return 3;
  }
  return 0;
}
constexpr double kReuseLoopMultipleRead = 1;
constexpr double kReuseSerialMultipleReadWrite = 2;
constexpr double kPositionInnermost = 1, kPositionMiddle = 2, kPositionOutermost = 3;

// log2(1 + x), sign-preserving for negative x.
float signed_log2(double x) { return static_cast<float>(x >= 0 ? std::log2(1 + x) : -std::log2(1 - x)); }

// ---- Expressions ----

// Calls fn on e and every node below it, parents first, without std::function's indirection (the walk runs over
// every store of a whole model).
template <class Fn>
void walk(const Expr& e, Fn& fn) {
  if (!e) return;
  fn(e);
  switch (e.kind()) {
    case ExprKind::kBinary: {
      auto* n = e.as<BinaryNode>();
      walk(n->a, fn);
      walk(n->b, fn);
      break;
    }
    case ExprKind::kCompare: {
      auto* n = e.as<CompareNode>();
      walk(n->a, fn);
      walk(n->b, fn);
      break;
    }
    case ExprKind::kLogical: {
      auto* n = e.as<LogicalNode>();
      walk(n->a, fn);
      walk(n->b, fn);
      break;
    }
    case ExprKind::kNot: walk(e.as<NotNode>()->a, fn); break;
    case ExprKind::kSelect: {
      auto* n = e.as<SelectNode>();
      walk(n->cond, fn);
      walk(n->true_value, fn);
      walk(n->false_value, fn);
      break;
    }
    case ExprKind::kCast: walk(e.as<CastNode>()->value, fn); break;
    case ExprKind::kCall:
      for (const Expr& a : e.as<CallNode>()->args) walk(a, fn);
      break;
    case ExprKind::kBufferLoad: walk(e.as<BufferLoadNode>()->index, fn); break;
    case ExprKind::kTensorRead:
      for (const Expr& i : e.as<TensorReadNode>()->indices) walk(i, fn);
      break;
    case ExprKind::kReduce: walk(e.as<ReduceNode>()->source, fn); break;
    case ExprKind::kIntImm:
    case ExprKind::kFloatImm:
    case ExprKind::kVar: break;
  }
}

bool is_float_mul(const Expr& e) {
  auto* n = e.as<BinaryNode>();
  return n && n->op == BinaryOp::kMul && is_float(n->dtype);
}

// Operations of one evaluation, by kind.
struct OpCounts {
  double float_add_sub = 0, float_mul = 0, float_fma = 0, float_div = 0, float_math_calls = 0;
  double float_compares = 0, float_selects = 0, float_min_max = 0;
  double int_add_sub = 0, int_mul = 0, int_div_mod = 0, int_compare_logic = 0;

  // Instructions: an FMA is one.
  double float_ops() const { return flops() - float_fma + float_selects; }
  // Arithmetic as peak figures count it: an FMA is two, a select (a move) none.
  double flops() const {
    return float_add_sub + float_mul + 2 * float_fma + float_div + float_math_calls + float_compares + float_min_max;
  }
  void add(const OpCounts& o, double times) {
    float_add_sub += o.float_add_sub * times;
    float_mul += o.float_mul * times;
    float_fma += o.float_fma * times;
    float_div += o.float_div * times;
    float_math_calls += o.float_math_calls * times;
    float_compares += o.float_compares * times;
    float_selects += o.float_selects * times;
    float_min_max += o.float_min_max * times;
    int_add_sub += o.int_add_sub * times;
    int_mul += o.int_mul * times;
    int_div_mod += o.int_div_mod * times;
    int_compare_logic += o.int_compare_logic * times;
  }
};

void count_ops(const Expr& e, OpCounts& c) {
  if (!e) return;
  switch (e.kind()) {
    case ExprKind::kBinary: {
      auto* n = e.as<BinaryNode>();
      if (is_float(n->dtype)) {
        if (n->op == BinaryOp::kAdd || n->op == BinaryOp::kSub) {
          // a + b * c (or a - b * c, b * c - a) is one fused multiply-add, not an add and a multiply.
          const Expr* product = is_float_mul(n->a) ? &n->a : is_float_mul(n->b) ? &n->b : nullptr;
          if (product) {
            c.float_fma += 1;
            auto* mul = product->as<BinaryNode>();
            count_ops(mul->a, c);
            count_ops(mul->b, c);
            count_ops(product == &n->a ? n->b : n->a, c);
            return;
          }
          c.float_add_sub += 1;
        } else if (n->op == BinaryOp::kMul) {
          c.float_mul += 1;
        } else if (n->op == BinaryOp::kDiv) {
          c.float_div += 1;
        } else {
          c.float_min_max += 1;  // min, max (% is not allowed on floats)
        }
      } else {
        switch (n->op) {
          case BinaryOp::kAdd:
          case BinaryOp::kSub: c.int_add_sub += 1; break;
          case BinaryOp::kMul: c.int_mul += 1; break;
          case BinaryOp::kDiv:
          case BinaryOp::kMod: c.int_div_mod += 1; break;
          case BinaryOp::kMin:
          case BinaryOp::kMax: c.int_compare_logic += 1; break;
        }
      }
      count_ops(n->a, c);
      count_ops(n->b, c);
      return;
    }
    case ExprKind::kCompare: {
      auto* n = e.as<CompareNode>();
      (is_float(n->a.dtype()) ? c.float_compares : c.int_compare_logic) += 1;
      count_ops(n->a, c);
      count_ops(n->b, c);
      return;
    }
    case ExprKind::kLogical: {
      auto* n = e.as<LogicalNode>();
      c.int_compare_logic += 1;
      count_ops(n->a, c);
      count_ops(n->b, c);
      return;
    }
    case ExprKind::kNot:
      c.int_compare_logic += 1;
      count_ops(e.as<NotNode>()->a, c);
      return;
    case ExprKind::kSelect: {
      auto* n = e.as<SelectNode>();
      (is_float(n->dtype) ? c.float_selects : c.int_compare_logic) += 1;
      count_ops(n->cond, c);
      count_ops(n->true_value, c);
      count_ops(n->false_value, c);
      return;
    }
    case ExprKind::kCall: {
      auto* n = e.as<CallNode>();
      // Math on integers (abs) is a compare and a select.
      (is_float(n->dtype) ? c.float_math_calls : c.int_compare_logic) += 1;
      for (const Expr& a : n->args) count_ops(a, c);
      return;
    }
    case ExprKind::kCast: count_ops(e.as<CastNode>()->value, c); return;
    case ExprKind::kBufferLoad: count_ops(e.as<BufferLoadNode>()->index, c); return;
    case ExprKind::kTensorRead:
    case ExprKind::kReduce:
      throw std::invalid_argument("extract_stage_features: a tensor read or reduction is left in the loop IR: " +
                                  to_string(e));
    case ExprKind::kIntImm:
    case ExprKind::kFloatImm:
    case ExprKind::kVar: return;
  }
}

int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

// The value of an integer index with the loop variables at `values` (by loop depth), or nullopt where it reads
// memory, divides by zero or is not integer arithmetic.
std::optional<int64_t> evaluate_index(const Expr& e, const std::vector<const ForNode*>& loops,
                                      const std::vector<int64_t>& values) {
  switch (e.kind()) {
    case ExprKind::kIntImm: return e.as<IntImmNode>()->value;
    case ExprKind::kVar: {
      const std::string& name = e.as<VarNode>()->name;
      for (size_t d = 0; d < loops.size(); ++d)
        if (loops[d]->name() == name) return values[d];
      return std::nullopt;
    }
    case ExprKind::kBinary: {
      auto* n = e.as<BinaryNode>();
      if (!is_int(n->dtype)) return std::nullopt;
      std::optional<int64_t> a = evaluate_index(n->a, loops, values), b = evaluate_index(n->b, loops, values);
      if (!a || !b) return std::nullopt;
      switch (n->op) {
        case BinaryOp::kAdd: return *a + *b;
        case BinaryOp::kSub: return *a - *b;
        case BinaryOp::kMul: return *a * *b;
        case BinaryOp::kDiv:
          if (*b == 0) return std::nullopt;
          return floor_div(*a, *b);
        case BinaryOp::kMod:
          if (*b == 0) return std::nullopt;
          return *a - *b * floor_div(*a, *b);
        case BinaryOp::kMin: return std::min(*a, *b);
        case BinaryOp::kMax: return std::max(*a, *b);
      }
      return std::nullopt;
    }
    case ExprKind::kCompare: {
      auto* n = e.as<CompareNode>();
      std::optional<int64_t> a = evaluate_index(n->a, loops, values), b = evaluate_index(n->b, loops, values);
      if (!a || !b) return std::nullopt;
      switch (n->op) {
        case CompareOp::kLT: return *a < *b;
        case CompareOp::kLE: return *a <= *b;
        case CompareOp::kGT: return *a > *b;
        case CompareOp::kGE: return *a >= *b;
        case CompareOp::kEQ: return *a == *b;
        case CompareOp::kNE: return *a != *b;
      }
      return std::nullopt;
    }
    case ExprKind::kLogical: {
      auto* n = e.as<LogicalNode>();
      std::optional<int64_t> a = evaluate_index(n->a, loops, values), b = evaluate_index(n->b, loops, values);
      if (!a || !b) return std::nullopt;
      return n->op == LogicalOp::kAnd ? (*a && *b) : (*a || *b);
    }
    case ExprKind::kNot: {
      std::optional<int64_t> a = evaluate_index(e.as<NotNode>()->a, loops, values);
      if (!a) return std::nullopt;
      return !*a;
    }
    case ExprKind::kSelect: {
      auto* n = e.as<SelectNode>();
      std::optional<int64_t> cond = evaluate_index(n->cond, loops, values);
      if (!cond) return std::nullopt;
      return evaluate_index(*cond ? n->true_value : n->false_value, loops, values);
    }
    case ExprKind::kCast: {
      auto* n = e.as<CastNode>();
      if (!is_int(n->dtype) && n->dtype != DType::kBool) return std::nullopt;
      return evaluate_index(n->value, loops, values);
    }
    default: return std::nullopt;
  }
}

// ---- One access of a buffer over the store's loop nest ----

constexpr double kUnknownStride = -1;

// An index as a function of the enclosing loops (depth 0 = outermost).
struct IndexModel {
  Expr index;
  bool affine = false;
  std::vector<int64_t> coefficient;  // per depth (affine only)
  int64_t constant = 0;              // affine only
  std::vector<bool> varies;          // per depth: the loop's variable appears and its extent is above 1
  std::vector<double> stride;        // per depth, elements per iteration; kUnknownStride where it cannot be told
  std::vector<double> period;        // per depth, iterations before the index first moves (p / 32 moves every 32th)
};

size_t loop_depth(const std::vector<const ForNode*>& loops, const std::string& name) {
  for (size_t d = loops.size(); d-- > 0;)
    if (loops[d]->name() == name) return d;
  throw std::invalid_argument("extract_stage_features: variable '" + name + "' is not bound by an enclosing loop");
}

IndexModel model_index(const Expr& index, const std::vector<const ForNode*>& loops) {
  const size_t n = loops.size();
  IndexModel m;
  m.index = index;
  m.varies.assign(n, false);
  m.stride.assign(n, 0);
  m.period.assign(n, 1);
  auto mark = [&](const Expr& x) {
    if (auto* v = x.as<VarNode>()) {
      size_t d = loop_depth(loops, v->name);
      m.varies[d] = loops[d]->extent > 1;
    }
  };
  walk(index, mark);
  if (std::optional<AffineForm> form = as_affine(index)) {
    m.affine = true;
    m.coefficient.assign(n, 0);
    m.constant = form->constant;
    for (const auto& [name, coefficient] : form->coeffs) m.coefficient[loop_depth(loops, name)] = coefficient;
    for (size_t d = 0; d < n; ++d) m.stride[d] = m.varies[d] ? std::abs(double(m.coefficient[d])) : 0;
    return m;
  }
  // Not affine (floor division, modulo, min, select, a gather): the stride is the first change of the index as the
  // loop moves from 0 with every other loop at 0, averaged over the iterations it took (a / 4 moves every 4th).
  std::vector<int64_t> values(n, 0);
  std::optional<int64_t> base = evaluate_index(index, loops, values);
  for (size_t d = 0; d < n; ++d) {
    if (!m.varies[d]) continue;
    if (!base) {
      m.stride[d] = kUnknownStride;
      continue;
    }
    const int64_t last = std::min<int64_t>(loops[d]->extent - 1, 64);
    for (int64_t k = 1; k <= last; ++k) {
      values[d] = k;
      std::optional<int64_t> moved = evaluate_index(index, loops, values);
      if (!moved) {
        m.stride[d] = kUnknownStride;
        break;
      }
      if (*moved != *base) {
        m.stride[d] = std::abs(double(*moved - *base)) / double(k);
        m.period[d] = double(k);
        break;
      }
    }
    values[d] = 0;
  }
  return m;
}

bool same_stream(const IndexModel& a, const IndexModel& b) {
  if (a.affine && b.affine) return a.coefficient == b.coefficient && a.constant == b.constant;
  return structural_equal(a.index, b.index);
}

// Every access of one buffer by one store.
struct BufferUse {
  Buffer buffer;
  int64_t accesses = 0;  // load and store nodes
  bool read = false, written = false;
  std::vector<IndexModel> streams;  // distinct indices
};

// Elements a buffer's accesses touch while the loops at depth >= level run (the outer ones fixed at 0), and the span
// between the lowest and highest of them; both capped by the buffer's size.
struct Footprint {
  double elements = 0;
  double span = 0;
};

Footprint footprint(const BufferUse& use, const std::vector<const ForNode*>& loops, size_t level) {
  const double buffer_elements = double(use.buffer->num_elements());
  struct Piece {
    double elements, lo, hi;
    bool bounded;
  };
  std::vector<Piece> pieces;
  // Affine streams with the same coefficients on the moving loops are one shape at several offsets: their union is
  // at most the shape once per offset and at most its span stretched by the offsets.
  std::vector<bool> grouped(use.streams.size(), false);
  for (size_t s = 0; s < use.streams.size(); ++s) {
    const IndexModel& m = use.streams[s];
    if (grouped[s]) continue;
    grouped[s] = true;
    if (m.affine) {
      double product = 1, reach_up = 0, reach_down = 0;
      for (size_t d = level; d < loops.size(); ++d) {
        if (m.coefficient[d] == 0) continue;
        double extent = double(loops[d]->extent);
        product *= extent;
        double step = double(m.coefficient[d]) * (extent - 1);
        (step > 0 ? reach_up : reach_down) += step;
      }
      double shape = std::min(product, reach_up - reach_down + 1);
      int64_t lowest = m.constant, highest = m.constant;
      double offsets = 1;
      std::vector<int64_t> seen = {m.constant};
      for (size_t t = s + 1; t < use.streams.size(); ++t) {
        const IndexModel& o = use.streams[t];
        if (grouped[t] || !o.affine) continue;
        bool same_shape = true;
        for (size_t d = level; d < loops.size() && same_shape; ++d) same_shape = o.coefficient[d] == m.coefficient[d];
        if (!same_shape) continue;
        grouped[t] = true;
        if (std::find(seen.begin(), seen.end(), o.constant) != seen.end()) continue;
        seen.push_back(o.constant);
        offsets += 1;
        lowest = std::min(lowest, o.constant);
        highest = std::max(highest, o.constant);
      }
      double stretch = double(highest - lowest);
      pieces.push_back({std::min(shape * offsets, reach_up - reach_down + 1 + stretch), double(lowest) + reach_down,
                        double(highest) + reach_up, true});
      continue;
    }
    double product = 1;
    VarRanges ranges;
    for (size_t d = 0; d < loops.size(); ++d) {
      bool moving = d >= level;
      if (moving && m.varies[d]) product *= double(loops[d]->extent);
      ranges[loops[d]->name()] = IntRange{0, moving ? loops[d]->extent - 1 : 0};
    }
    std::optional<IntRange> bound = const_bound(m.index, ranges);
    if (bound) {
      double span = double(bound->hi) - double(bound->lo) + 1;
      pieces.push_back({std::min(product, span), double(bound->lo), double(bound->hi), true});
    } else {
      pieces.push_back({product, 0, 0, false});
    }
  }
  Footprint f;
  bool all_bounded = true;
  double lo = 0, hi = 0;
  for (size_t p = 0; p < pieces.size(); ++p) {
    f.elements += pieces[p].elements;
    all_bounded = all_bounded && pieces[p].bounded;
    lo = p == 0 ? pieces[p].lo : std::min(lo, pieces[p].lo);
    hi = p == 0 ? pieces[p].hi : std::max(hi, pieces[p].hi);
  }
  f.span = all_bounded ? std::min(hi - lo + 1, buffer_elements) : buffer_elements;
  f.elements = std::min({f.elements, f.span, buffer_elements});
  return f;
}

// Elements a stream reads one after another before it jumps while the loops at depth >= level run: strides of the
// moving loops, smallest first, that continue the run (a stride of 1 over 64 iterations, then 64 over the next loop).
double contiguous_run(const IndexModel& m, const std::vector<const ForNode*>& loops, size_t level = 0) {
  std::vector<std::pair<double, double>> steps;  // stride, extent
  for (size_t d = level; d < loops.size(); ++d) {
    if (!m.varies[d]) continue;
    if (m.stride[d] == kUnknownStride) return 1;
    if (m.stride[d] > 0) steps.emplace_back(m.stride[d], double(loops[d]->extent));
  }
  std::sort(steps.begin(), steps.end());
  double run = 1;
  for (const auto& [stride, extent] : steps) {
    if (stride > run) break;
    run += stride * (extent - 1);
  }
  return run;
}

// ---- The structural key of a store ----

// Where the store sits: its enclosing loops, guards and allocations, outermost first.
struct Guard {
  const IfThenElseNode* node;
  bool in_else;
  size_t loops_outside;
};
struct EnclosingAllocation {
  const AllocateNode* node;
  size_t loops_outside;
};
enum class ScopeKind : uint8_t { kLoop, kGuard, kAllocation };

// Facts about the whole stage and kernel a store is in that its features use.
struct StoreContext {
  int64_t local_buffers = 0, local_bytes = 0, shared_buffers = 0, shared_bytes = 0;
  int64_t gpu_threads_per_block = 0, gpu_blocks = 0;
  CompiledKernelFigures figures;
};

// A canonical byte string of everything a store's features depend on except its position: loop variables become
// their depth, buffers the order of their first use (with dtype, shape and scope), and the constant offset of each
// access is taken relative to the first access of its buffer, so that the cells of an unrolled model, which differ
// in names and in the step they read, give one key.
class KeyWriter {
 public:
  explicit KeyWriter(const std::vector<const ForNode*>& loops) : loops_(loops) { key_.reserve(512); }

  std::string take() { return std::move(key_); }
  void integer(int64_t v) { key_.append(reinterpret_cast<const char*>(&v), sizeof v); }
  void tag(char c) { key_.push_back(c); }

  void buffer(const Buffer& b) { integer(buffer_id(b)); }

  void access(const Buffer& b, const Expr& index) {
    size_t id = buffer_id(b);
    integer(int64_t(id));
    const Expr* rest = &index;
    int64_t offset = 0;
    if (auto* imm = index.as<IntImmNode>()) {
      rest = nullptr;
      offset = imm->value;
    } else if (auto* n = index.as<BinaryNode>()) {
      if (n->op == BinaryOp::kAdd && n->b.as<IntImmNode>()) {
        rest = &n->a;
        offset = n->b.as<IntImmNode>()->value;
      } else if (n->op == BinaryOp::kAdd && n->a.as<IntImmNode>()) {
        rest = &n->b;
        offset = n->a.as<IntImmNode>()->value;
      } else if (n->op == BinaryOp::kSub && n->b.as<IntImmNode>()) {
        rest = &n->a;
        offset = -n->b.as<IntImmNode>()->value;
      }
    }
    if (!has_base_[id]) {
      has_base_[id] = true;
      base_offset_[id] = offset;
    }
    integer(offset - base_offset_[id]);
    if (rest) {
      expr(*rest);
    } else {
      tag('-');
    }
  }

  void expr(const Expr& e) {
    tag(char(e.kind()));
    tag(char(e.dtype()));
    switch (e.kind()) {
      case ExprKind::kIntImm: integer(e.as<IntImmNode>()->value); return;
      case ExprKind::kFloatImm: integer(std::bit_cast<int64_t>(e.as<FloatImmNode>()->value)); return;
      case ExprKind::kVar: integer(int64_t(loop_depth(loops_, e.as<VarNode>()->name))); return;
      case ExprKind::kBinary: {
        auto* n = e.as<BinaryNode>();
        tag(char(n->op));
        expr(n->a);
        expr(n->b);
        return;
      }
      case ExprKind::kCompare: {
        auto* n = e.as<CompareNode>();
        tag(char(n->op));
        expr(n->a);
        expr(n->b);
        return;
      }
      case ExprKind::kLogical: {
        auto* n = e.as<LogicalNode>();
        tag(char(n->op));
        expr(n->a);
        expr(n->b);
        return;
      }
      case ExprKind::kNot: expr(e.as<NotNode>()->a); return;
      case ExprKind::kSelect: {
        auto* n = e.as<SelectNode>();
        expr(n->cond);
        expr(n->true_value);
        expr(n->false_value);
        return;
      }
      case ExprKind::kCast: expr(e.as<CastNode>()->value); return;
      case ExprKind::kCall: {
        auto* n = e.as<CallNode>();
        tag(char(n->func));
        integer(int64_t(n->args.size()));
        for (const Expr& a : n->args) expr(a);
        return;
      }
      case ExprKind::kBufferLoad: {
        auto* n = e.as<BufferLoadNode>();
        access(n->buffer, n->index);
        return;
      }
      case ExprKind::kTensorRead:
      case ExprKind::kReduce:
        throw std::invalid_argument("extract_stage_features: a tensor read or reduction is left in the loop IR: " +
                                    to_string(e));
    }
  }

 private:
  size_t buffer_id(const Buffer& b) {
    for (size_t i = 0; i < names_.size(); ++i)
      if (*names_[i] == b->name) return i;
    names_.push_back(&b->name);
    has_base_.push_back(false);
    base_offset_.push_back(0);
    tag('B');
    tag(char(b->dtype));
    tag(char(b->scope));
    integer(int64_t(b->shape.size()));
    for (int64_t dim : b->shape) integer(dim);
    return names_.size() - 1;
  }

  const std::vector<const ForNode*>& loops_;
  std::string key_;
  std::vector<const std::string*> names_;
  std::vector<bool> has_base_;
  std::vector<int64_t> base_offset_;
};

// ---- The extractor ----

struct LoopKindStats {
  double count = 0, extent_product = 0, innermost_extent = 0, position = 0;
};

class StageFeatureExtractor {
 public:
  StageFeatureExtractor(const Target& target, const std::vector<CompiledKernelFigures>& kernel_figures)
      : target_(target), kernel_figures_(kernel_figures) {}

  std::vector<StageFeatures> run(const LoopFunction& function) {
    std::vector<Stmt> top;
    if (auto* s = as<SeqNode>(function.body)) {
      top = s->stmts;
    } else if (function.body) {
      top.push_back(function.body);
    }
    std::vector<std::vector<Stmt>> kernels(1);
    for (const Stmt& s : top) {
      auto* b = as<BarrierNode>(s);
      if (b && b->barrier_kind == BarrierKind::kKernel) {
        kernels.emplace_back();
      } else {
        kernels.back().push_back(s);
      }
    }
    if (!kernel_figures_.empty() && kernel_figures_.size() != kernels.size())
      throw std::invalid_argument("extract_stage_features: " + std::to_string(kernel_figures_.size()) +
                                  " kernel figures for a function of " + std::to_string(kernels.size()) +
                                  " kernels (give one per kernel, or none)");
    for (size_t k = 0; k < kernels.size(); ++k) {
      kernel_index_ = int64_t(k);
      stage_index_ = 0;
      grid_barriers_ = 0;
      block_barriers_ = 0;
      set_kernel_context(kernels[k], k);
      for (const Stmt& s : kernels[k]) {
        if (auto* b = as<BarrierNode>(s)) {
          if (b->barrier_kind == BarrierKind::kGrid) ++grid_barriers_;
          if (b->barrier_kind == BarrierKind::kBlock) ++block_barriers_;
          continue;
        }
        if (as<PrefetchNode>(s)) continue;
        scan_stage(s);
        store_ordinal_ = 0;
        visit(s);
        ++stage_index_;
      }
    }
    return std::move(rows_);
  }

 private:
  // The launch the kernel asks for (GPU: the widest thread and block loop of each dimension) and its figures.
  void set_kernel_context(const std::vector<Stmt>& kernel, size_t k) {
    kernel_context_ = StoreContext{};
    if (!kernel_figures_.empty()) kernel_context_.figures = kernel_figures_[k];
    if (target_.kind != TargetKind::kGpu) return;
    int64_t threads[3] = {1, 1, 1}, blocks[3] = {1, 1, 1};
    for (const Stmt& s : kernel) {
      for_each_stmt(s, [&](const Stmt& x) {
        auto* loop = as<ForNode>(x);
        if (!loop) return;
        switch (loop->loop_kind) {
          case LoopKind::kThreadX: threads[0] = std::max(threads[0], loop->extent); break;
          case LoopKind::kThreadY: threads[1] = std::max(threads[1], loop->extent); break;
          case LoopKind::kThreadZ: threads[2] = std::max(threads[2], loop->extent); break;
          case LoopKind::kBlockX: blocks[0] = std::max(blocks[0], loop->extent); break;
          case LoopKind::kBlockY: blocks[1] = std::max(blocks[1], loop->extent); break;
          case LoopKind::kBlockZ: blocks[2] = std::max(blocks[2], loop->extent); break;
          default: break;
        }
      });
    }
    kernel_context_.gpu_threads_per_block = threads[0] * threads[1] * threads[2];
    kernel_context_.gpu_blocks = blocks[0] * blocks[1] * blocks[2];
  }

  // One walk over a stage before its stores are keyed: its shared and local buffers, and which stores initialise a
  // buffer that a later store of the stage reads (a reduction's identity, before the loop that accumulates).
  void scan_stage(const Stmt& stage) {
    stage_context_ = kernel_context_;
    struct StoreSeen {
      const StoreNode* store;
      bool loads_nothing;
    };
    std::vector<StoreSeen> stores;
    std::unordered_map<std::string_view, size_t> last_read;  // buffer -> ordinal of the last store that loads it
    for_each_stmt(stage, [&](const Stmt& s) {
      if (auto* a = as<AllocateNode>(s)) {
        int64_t bytes = a->buffer->num_elements() * dtype_bytes(a->buffer->dtype);
        if (a->buffer->scope == MemoryScope::kLocal) {
          stage_context_.local_buffers += 1;
          stage_context_.local_bytes += bytes;
        } else if (a->buffer->scope == MemoryScope::kShared) {
          stage_context_.shared_buffers += 1;
          stage_context_.shared_bytes += bytes;
        }
      } else if (auto* st = as<StoreNode>(s)) {
        bool loads = false;
        const size_t ordinal = stores.size();
        auto note = [&](const Expr& e) {
          if (auto* l = e.as<BufferLoadNode>()) last_read[l->buffer->name] = ordinal;
        };
        auto any_load = [&](const Expr& e) { loads = loads || e.kind() == ExprKind::kBufferLoad; };
        walk(st->value, any_load);
        walk(st->value, note);
        walk(st->index, note);
        stores.push_back({st, !loads});
      }
    });
    init_stores_.assign(stores.size(), false);
    for (size_t i = 0; i < stores.size(); ++i) {
      auto it = last_read.find(stores[i].store->buffer->name);
      init_stores_[i] = stores[i].loads_nothing && it != last_read.end() && it->second > i;
    }
  }

  void visit(const Stmt& s) {
    if (!s) return;
    switch (s->kind) {
      case StmtKind::kFor: {
        auto* loop = as<ForNode>(s);
        loops_.push_back(loop);
        scopes_.push_back(ScopeKind::kLoop);
        visit(loop->body);
        scopes_.pop_back();
        loops_.pop_back();
        return;
      }
      case StmtKind::kSeq:
        for (const Stmt& c : as<SeqNode>(s)->stmts) visit(c);
        return;
      case StmtKind::kAllocate: {
        auto* a = as<AllocateNode>(s);
        allocations_.push_back({a, loops_.size()});
        scopes_.push_back(ScopeKind::kAllocation);
        visit(a->body);
        scopes_.pop_back();
        allocations_.pop_back();
        return;
      }
      case StmtKind::kIfThenElse: {
        auto* g = as<IfThenElseNode>(s);
        scopes_.push_back(ScopeKind::kGuard);
        guards_.push_back({g, false, loops_.size()});
        visit(g->then_case);
        guards_.back().in_else = true;
        visit(g->else_case);
        guards_.pop_back();
        scopes_.pop_back();
        return;
      }
      case StmtKind::kStore: on_store(as<StoreNode>(s)); return;
      case StmtKind::kBarrier: {
        // Inside a stage only block barriers, or grid barriers inside a top-level allocation.
        auto* b = as<BarrierNode>(s);
        if (b->barrier_kind == BarrierKind::kGrid) ++grid_barriers_;
        if (b->barrier_kind == BarrierKind::kBlock) ++block_barriers_;
        return;
      }
      case StmtKind::kPrefetch: return;
    }
  }

  std::string key_of(const StoreNode* store, bool is_init) {
    KeyWriter w(loops_);
    const StoreContext& c = stage_context_;
    for (int64_t v : {c.local_buffers, c.local_bytes, c.shared_buffers, c.shared_bytes, c.gpu_threads_per_block,
                      c.gpu_blocks, c.figures.registers_per_thread, c.figures.shared_bytes_per_block})
      w.integer(v);
    w.tag(is_init ? 'i' : 'n');
    size_t loop = 0, guard = 0, allocation = 0;
    for (ScopeKind kind : scopes_) {
      if (kind == ScopeKind::kLoop) {
        const ForNode* l = loops_[loop++];
        w.tag('L');
        w.tag(char(l->loop_kind));
        w.integer(l->extent);
        w.integer(l->explicit_lanes);
      } else if (kind == ScopeKind::kGuard) {
        const Guard& g = guards_[guard++];
        w.tag(g.in_else ? 'E' : 'T');
        w.expr(g.node->cond);
      } else {
        w.tag('A');
        w.buffer(allocations_[allocation++].node->buffer);
      }
    }
    w.tag('S');
    w.access(store->buffer, store->index);
    w.expr(store->value);
    return w.take();
  }

  void on_store(const StoreNode* store) {
    const bool is_init = init_stores_[store_ordinal_++];
    std::string key = key_of(store, is_init);
    auto [it, fresh] = row_of_key_.try_emplace(std::move(key), rows_.size());
    if (!fresh) {
      rows_[it->second].multiplicity += 1;
      return;
    }
    StageFeatures row;
    row.store = store->buffer->name;
    row.values = features_of(store, is_init);
    rows_.push_back(std::move(row));
  }

  std::vector<float> features_of(const StoreNode* store, bool is_init) const {
    const std::vector<const ForNode*>& loops = loops_;
    const size_t n = loops.size();
    std::vector<double> x(kColumnCount, 0.0);

    // Products of extents: inner_product[d] = extents of loops at depth >= d.
    std::vector<double> inner_product(n + 1, 1.0);
    for (size_t d = n; d-- > 0;) inner_product[d] = inner_product[d + 1] * double(loops[d]->extent);
    const double executions = inner_product[0];

    // Compute: the store's value and indices run once per execution; a guard's condition once per iteration of
    // the loops around it.
    auto flags_of = [&](size_t depth, bool& vectorized, bool& unrolled, bool& parallel) {
      vectorized = unrolled = parallel = false;
      for (size_t d = 0; d < depth; ++d) {
        LoopKind k = loops[d]->loop_kind;
        vectorized = vectorized || k == LoopKind::kVectorized;
        unrolled = unrolled || k == LoopKind::kUnrolled;
        parallel = parallel || k == LoopKind::kParallel || is_gpu_block(k) || is_gpu_thread(k);
      }
    };
    OpCounts per_execution, total;
    count_ops(store->value, per_execution);
    count_ops(store->index, per_execution);
    double vectorized_ops = 0, unrolled_ops = 0, parallel_ops = 0;
    auto add_ops = [&](const OpCounts& ops, size_t depth) {
      const double times = inner_product[0] / inner_product[depth];
      total.add(ops, times);
      bool vectorized, unrolled, parallel;
      flags_of(depth, vectorized, unrolled, parallel);
      if (vectorized) vectorized_ops += ops.float_ops() * times;
      if (unrolled) unrolled_ops += ops.float_ops() * times;
      if (parallel) parallel_ops += ops.float_ops() * times;
    };
    add_ops(per_execution, n);
    for (const Guard& g : guards_) {
      OpCounts ops;
      count_ops(g.node->cond, ops);
      add_ops(ops, g.loops_outside);
    }
    x[kFloatAddSub] = total.float_add_sub;
    x[kFloatMul] = total.float_mul;
    x[kFloatFma] = total.float_fma;
    x[kFloatDiv] = total.float_div;
    x[kFloatMathCalls] = total.float_math_calls;
    x[kFloatCompareSelect] = total.float_compares + total.float_selects;
    x[kFloatMinMax] = total.float_min_max;
    x[kFloatOps] = total.float_ops();
    x[kIntAddSub] = total.int_add_sub;
    x[kIntMul] = total.int_mul;
    x[kIntDivMod] = total.int_div_mod;
    x[kIntCompareLogic] = total.int_compare_logic;
    x[kVectorizedFloatOps] = vectorized_ops;
    x[kUnrolledFloatOps] = unrolled_ops;
    x[kParallelFloatOps] = parallel_ops;

    // Loop structure.
    auto kind_stats = [&](auto matches) {
      LoopKindStats s;
      for (size_t d = 0; d < n; ++d) {
        if (!matches(loops[d]->loop_kind)) continue;
        s.count += 1;
        s.extent_product = (s.count == 1 ? 1 : s.extent_product) * double(loops[d]->extent);
        s.innermost_extent = double(loops[d]->extent);
        s.position = d + 1 == n ? kPositionInnermost : d == 0 ? kPositionOutermost : kPositionMiddle;
      }
      return s;
    };
    auto put_stats = [&](const LoopKindStats& s, Scalar first) {
      x[first] = s.count;
      x[first + 1] = s.extent_product;
      x[first + 2] = s.innermost_extent;
      x[first + 3] = s.position;
    };
    put_stats(kind_stats([](LoopKind k) { return k == LoopKind::kVectorized; }), kVectorizedLoops);
    put_stats(kind_stats([](LoopKind k) { return k == LoopKind::kUnrolled; }), kUnrolledLoops);
    put_stats(kind_stats([](LoopKind k) { return k == LoopKind::kParallel; }), kParallelLoops);
    put_stats(kind_stats([](LoopKind k) { return is_gpu_block(k); }), kGpuBlockLoops);
    put_stats(kind_stats([](LoopKind k) { return is_gpu_thread(k); }), kGpuThreadLoops);
    for (size_t d = n; d-- > 0;) {
      if (loops[d]->loop_kind != LoopKind::kVectorized) continue;
      x[kVectorLanes] = double(loops[d]->explicit_lanes > 0 ? loops[d]->explicit_lanes : loops[d]->extent);
      break;
    }
    LoopKindStats serial = kind_stats([](LoopKind k) { return k == LoopKind::kSerial; });
    x[kSerialLoops] = serial.count;
    x[kSerialExtentProduct] = serial.extent_product;

    // Accesses, by buffer in order of first use: the store, then the loads of its value and of its index.
    std::vector<BufferUse> uses;
    auto use_of = [&](const Buffer& b) -> BufferUse& {
      for (BufferUse& u : uses)
        if (u.buffer->name == b->name) return u;
      BufferUse fresh;
      fresh.buffer = b;
      uses.push_back(std::move(fresh));
      return uses.back();
    };
    auto add_access = [&](const Buffer& b, const Expr& index, bool is_store) {
      BufferUse& u = use_of(b);
      u.accesses += 1;
      (is_store ? u.written : u.read) = true;
      IndexModel m = model_index(index, loops);
      for (const IndexModel& s : u.streams)
        if (same_stream(s, m)) return;
      u.streams.push_back(std::move(m));
    };
    add_access(store->buffer, store->index, true);
    auto on_load = [&](const Expr& e) {
      if (auto* l = e.as<BufferLoadNode>()) add_access(l->buffer, l->index, false);
    };
    walk(store->value, on_load);
    walk(store->index, on_load);

    // Reduction loops: the store reads its own buffer and the loop's variable is not in the store's index; only
    // loops inside the buffer's allocation count (a local accumulator starts afresh around them).
    const BufferUse& stored = uses.front();
    std::vector<bool> is_reduction(n, false);
    if (stored.read) {
      size_t first = 0;
      for (const EnclosingAllocation& a : allocations_)
        if (a.node->buffer->name == store->buffer->name) first = a.loops_outside;
      const IndexModel& written = stored.streams.front();
      for (size_t d = first; d < n; ++d) {
        if (loops[d]->extent <= 1 || written.varies[d]) continue;
        is_reduction[d] = true;
        x[kReductionLoops] += 1;
        x[kReductionExtentProduct] = (x[kReductionLoops] == 1 ? 1 : x[kReductionExtentProduct]) * loops[d]->extent;
      }
    }
    x[kLoopCount] = double(n);
    x[kExecutions] = executions;

    // Footprints at every level: level L lets the loops at depth >= L run.
    std::vector<std::vector<Footprint>> footprints(uses.size());
    std::vector<double> level_bytes(n + 1, 0.0);
    for (size_t b = 0; b < uses.size(); ++b) {
      footprints[b].resize(n + 1);
      const double element_bytes = dtype_bytes(uses[b].buffer->dtype);
      for (size_t level = 0; level <= n; ++level) {
        footprints[b][level] = footprint(uses[b], loops, level);
        level_bytes[level] += footprints[b][level].elements * element_bytes;
      }
    }

    // Per-buffer features, then the five with the most bytes.
    struct BufferRow {
      double bytes;
      std::vector<double> values;
    };
    std::vector<BufferRow> buffer_rows;
    for (size_t b = 0; b < uses.size(); ++b) {
      const BufferUse& u = uses[b];
      const double element_bytes = dtype_bytes(u.buffer->dtype);
      std::vector<double> v(kBufferFieldCount, 0.0);
      v[kBufRead] = u.read;
      v[kBufWrite] = u.written;
      v[kBufScope] = scope_code(u.buffer->scope);
      v[kBufBytes] = double(u.accesses) * executions * element_bytes;
      v[kBufUniqueBytes] = footprints[b][0].elements * element_bytes;
      // The innermost loop that moves any stream, and its smallest known stride.
      std::optional<size_t> moving;
      for (size_t d = n; d-- > 0 && !moving;)
        for (const IndexModel& m : u.streams)
          if (m.varies[d]) moving = d;
      double stride = kUnknownStride;
      if (moving) {
        for (const IndexModel& m : u.streams)
          if (m.varies[*moving] && m.stride[*moving] != kUnknownStride)
            stride = stride == kUnknownStride ? m.stride[*moving] : std::min(stride, m.stride[*moving]);
        const double line_share =
            stride == kUnknownStride ? 1.0 : std::min(1.0, stride * element_bytes / kCacheLineBytes);
        v[kBufStride] = stride == kUnknownStride ? 0 : stride;
        v[kBufLines] = double(u.streams.size()) * std::max(1.0, executions / inner_product[*moving + 1] * line_share);
      } else {
        v[kBufLines] = double(u.streams.size());
      }
      double run = std::numeric_limits<double>::infinity();
      for (const IndexModel& m : u.streams) run = std::min(run, contiguous_run(m, loops));
      const double run_bytes = std::min(kCacheLineBytes, run * element_bytes);
      v[kBufUniqueLines] = std::max(1.0, std::min(std::ceil(v[kBufUniqueBytes] / run_bytes),
                                                  std::ceil(footprints[b][0].span * element_bytes / kCacheLineBytes)));
      // Reuse: the innermost loop (of more than one iteration) whose variable no access of the buffer uses.
      for (size_t d = n; d-- > 0;) {
        if (loops[d]->extent <= 1) continue;
        bool used = false;
        for (const IndexModel& m : u.streams) used = used || m.varies[d];
        if (used) continue;
        v[kBufReuseType] =
            u.read && u.written && is_reduction[d] ? kReuseSerialMultipleReadWrite : kReuseLoopMultipleRead;
        v[kBufReuseCount] = double(loops[d]->extent);
        v[kBufReuseDistanceIters] = inner_product[d + 1];
        v[kBufReuseDistanceBytes] = level_bytes[d + 1];
        break;
      }
      v[kBufBytesPerReuse] = v[kBufReuseCount] > 0 ? v[kBufBytes] / v[kBufReuseCount] : v[kBufBytes];
      buffer_rows.push_back({v[kBufBytes], std::move(v)});
    }
    machine_estimates(uses, footprints, level_bytes, inner_product, is_reduction, total, x);

    std::stable_sort(buffer_rows.begin(), buffer_rows.end(),
                     [](const BufferRow& a, const BufferRow& b) { return a.bytes > b.bytes; });
    for (int slot = 0; slot < kBufferSlots && slot < int(buffer_rows.size()); ++slot)
      for (int f = 0; f < kBufferFieldCount; ++f) x[buffer_column(slot, BufferField(f))] = buffer_rows[slot].values[f];

    // Arithmetic intensity curve: FLOPs over the bytes the store's buffers touch, for the innermost loop, the two
    // innermost, ..., the whole nest, sampled at tenths of the whole nest's FLOPs.
    const double flops = per_execution.flops();
    if (flops > 0) {
      if (n == 0) {
        for (int i = 0; i < kCurvePoints; ++i) x[curve_column(i)] = flops / level_bytes[0];
      } else {
        std::vector<double> compute(n), memory(n);
        for (size_t p = 0; p < n; ++p) {
          compute[p] = flops * inner_product[n - 1 - p];
          memory[p] = level_bytes[n - 1 - p];
        }
        const double whole = compute[n - 1];
        size_t p = 0;
        for (int i = 0; i < kCurvePoints; ++i) {
          const double target_flops = whole * double(i + 1) / kCurvePoints;
          while (p + 1 < n && compute[p] < target_flops * (1 - 1e-12)) ++p;
          double intensity = compute[p] / memory[p];
          if (p > 0) {
            const double before = compute[p - 1] / memory[p - 1];
            intensity = before + (intensity - before) / (compute[p] - compute[p - 1]) * (target_flops - compute[p - 1]);
          }
          x[curve_column(i)] = intensity;
        }
      }
    }

    // The stage and kernel.
    x[kStageIndex] = double(stage_index_);
    x[kKernelIndex] = double(kernel_index_);
    x[kGridBarriersBefore] = double(grid_barriers_);
    x[kBlockBarriersBefore] = double(block_barriers_);
    x[kIsReductionInit] = is_init;
    x[kStoreScope] = scope_code(store->buffer->scope);
    x[kLocalBuffers] = double(stage_context_.local_buffers);
    x[kLocalBufferBytes] = double(stage_context_.local_bytes);
    x[kSharedBuffers] = double(stage_context_.shared_buffers);
    x[kSharedBufferBytes] = double(stage_context_.shared_bytes);

    // The target.
    if (target_.kind == TargetKind::kGpu) {
      const GpuLimits& g = target_.gpu;
      x[kTargetIsGpu] = 1;
      x[kTargetThreads] = double(g.sm_count * g.max_threads_per_sm);
      x[kTargetSimdFp32Lanes] = double(g.warp_size);
      x[kTargetL2Bytes] = double(g.l2_bytes);
      x[kGpuThreadsPerBlock] = double(stage_context_.gpu_threads_per_block);
      x[kGpuBlocks] = double(stage_context_.gpu_blocks);
    } else {
      const CpuLimits& c = target_.cpu;
      x[kTargetThreads] = double(c.threads);
      x[kTargetSimdFp32Lanes] = double(c.simd_fp32_lanes);
      x[kTargetL1Bytes] = double(c.l1d_bytes);
      x[kTargetL2Bytes] = double(c.l2_bytes);
      x[kTargetL3Bytes] = double(c.l3_bytes);
    }
    x[kTargetPeakGflops] = target_.peak_fp32_gflops;
    x[kTargetBandwidthGbS] = target_.memory_bandwidth_gb_s;
    x[kGpuRegistersPerThread] = double(stage_context_.figures.registers_per_thread);
    x[kGpuSharedBytesPerBlock] = double(stage_context_.figures.shared_bytes_per_block);

    std::vector<float> values(kColumnCount);
    for (int c = 0; c < kColumnCount; ++c) values[c] = signed_log2(x[c]);
    return values;
  }

  // What the core makes of the loop nest, for a model that learns from few samples: which loop the vector lanes run
  // along and how wide (a vectorized loop, also one with a register tile of unrolled loops inside it, or a loop the
  // compiler vectorizes unmarked because every stream is contiguous or invariant along it), how many independent
  // accumulations a reduction step carries (fewer than FMA latency x pipes leaves the core waiting), the loads and
  // stores left once a register tile keeps what its unrolled loops do not move, the cache lines each level of the
  // hierarchy brings in (the outermost loop level whose working set fits the cache is loaded once per iteration of
  // the loops outside it, except buffers those loops do not move), and the cycles all this implies on one core.
  void machine_estimates(const std::vector<BufferUse>& uses, const std::vector<std::vector<Footprint>>& footprints,
                         const std::vector<double>& level_bytes, const std::vector<double>& inner_product,
                         const std::vector<bool>& is_reduction, const OpCounts& total, std::vector<double>& x) const {
    const std::vector<const ForNode*>& loops = loops_;
    const size_t n = loops.size();
    const double executions = inner_product[0];
    auto moves = [&](const BufferUse& u, size_t d) {
      for (const IndexModel& m : u.streams)
        if (m.varies[d]) return true;
      return false;
    };
    // The register tile: the innermost loops that are unrolled or vectorized (or of one iteration).
    size_t tile = n;
    while (tile > 0 && (loops[tile - 1]->loop_kind == LoopKind::kUnrolled ||
                        loops[tile - 1]->loop_kind == LoopKind::kVectorized || loops[tile - 1]->extent == 1))
      --tile;
    std::optional<size_t> lane;
    for (size_t d = n; d-- > tile && !lane;)
      if (loops[d]->loop_kind == LoopKind::kVectorized) lane = d;
    for (size_t d = n; d-- > 0 && !lane;)
      if (loops[d]->extent > 1) lane = d;
    if (lane) tile = std::min(tile, *lane);

    double contiguous = 0, broadcast = 0, strided = 0;
    for (const BufferUse& u : uses)
      for (const IndexModel& m : u.streams) {
        if (!lane || !m.varies[*lane]) {
          broadcast += 1;
        } else if (m.stride[*lane] == 1) {
          contiguous += 1;
        } else {
          strided += 1;
        }
      }
    const double lanes = double(
        std::max<int64_t>(target_.kind == TargetKind::kCpu ? target_.cpu.simd_fp32_lanes : target_.gpu.warp_size, 1));
    double width = 1;
    bool simd_loop = false;  // marked vectorized: printed `omp simd`, where libmvec runs math calls in vectors
    if (lane) {
      const ForNode* loop = loops[*lane];
      // The C++ printer ends a vectorized loop where its guard's bound conjuncts fail (lower/guard_bound.h): only
      // what is left of that guard masks the lanes.
      const std::optional<GuardBound> bound = guard_bound(loop);
      bool guarded = false, lane_guarded = false;
      for (const Guard& g : guards_) {
        if (g.loops_outside <= *lane) continue;
        guarded = true;
        const Expr& tested = bound && g.node == bound->guard ? bound->remaining : g.node->cond;
        lane_guarded = lane_guarded || (tested && uses_var(tested, loop->name()));
      }
      // Under a condition that tests the lane, g++ (12) vectorizes only with masked loads and stores of contiguous
      // streams: a load the lanes share or a strided access under the mask, or a math call (libmvec's functions have
      // no masked forms, `declare simd notinbranch`), leaves the loop scalar, `omp simd` or not.
      const bool masked_scalar = lane_guarded && (total.float_math_calls > 0 || broadcast > 0 || strided > 0);
      if (loop->loop_kind == LoopKind::kVectorized && !masked_scalar) {
        simd_loop = true;
        width =
            double(loop->explicit_lanes > 0 ? loop->explicit_lanes : std::min<int64_t>(loop->extent, int64_t(lanes)));
      } else if (strided == 0 && !guarded && !is_reduction[*lane] && loop->extent >= 4) {
        width = std::min(double(loop->extent), lanes);
      }
      x[kLaneLoopExtent] = double(loop->extent);
      x[kLaneLoopIsReduction] = is_reduction[*lane];
    }
    x[kLaneContiguousStreams] = contiguous;
    x[kLaneBroadcastStreams] = broadcast;
    x[kLaneStridedStreams] = strided;
    x[kLaneWidth] = width;
    std::optional<size_t> deepest_reduction;
    for (size_t d = n; d-- > 0 && !deepest_reduction;)
      if (is_reduction[d]) deepest_reduction = d;
    if (deepest_reduction) {
      // Lanes of a vectorized reduction loop sum apart (and meet once at its end).
      x[kReductionChains] = inner_product[*deepest_reduction + 1] * (*deepest_reduction == lane ? width : 1);
    }

    // Loads and stores: in the register tile a stream is loaded once for all iterations of the tile's loops that do
    // not move it; along the lane loop a contiguous stream is one vector access per `width` lanes, a strided one an
    // access per lane (a gather). Local buffers live in registers.
    double memory_ops = 0;
    for (const BufferUse& u : uses) {
      if (u.buffer->scope == MemoryScope::kLocal) continue;
      const double per_stream = double(u.accesses) / double(std::max<size_t>(u.streams.size(), 1));
      for (const IndexModel& m : u.streams) {
        double kept = 1;
        for (size_t d = tile; d < n; ++d)
          if (!m.varies[d]) kept *= double(loops[d]->extent);
        const bool vector_access = lane && m.varies[*lane] && m.stride[*lane] == 1;
        memory_ops += per_stream * executions / kept / (vector_access ? width : 1);
      }
    }

    // Lines each cache level brings in: for each buffer, its lines over the loops from the fit level in, once per
    // iteration of the loops outside that move it. Local buffers live in registers or stay in L1. A store whose
    // whole footprint fits a cache finds it there again on the next run of the program (a measurement repeats it, a
    // model runs it again and again): no misses at that level.
    auto lines_at = [&](size_t b, size_t level) {
      const double element_bytes = dtype_bytes(uses[b].buffer->dtype);
      double run = std::numeric_limits<double>::infinity();
      for (const IndexModel& m : uses[b].streams) run = std::min(run, contiguous_run(m, loops, level));
      const double run_bytes = std::min(kCacheLineBytes, run * element_bytes);
      return std::max(1.0, std::min(std::ceil(footprints[b][level].elements * element_bytes / run_bytes),
                                    std::ceil(footprints[b][level].span * element_bytes / kCacheLineBytes)));
    };
    auto misses = [&](double capacity) {
      if (capacity <= 0 || level_bytes[0] <= capacity) return 0.0;
      size_t level = 0;
      while (level < n && level_bytes[level] > capacity) ++level;
      double lines = 0;
      for (size_t b = 0; b < uses.size(); ++b) {
        if (uses[b].buffer->scope == MemoryScope::kLocal) continue;
        // The innermost loop outside the fit level that moves the buffer brings its lines in again, each time it
        // moves it (a fused loop's p / 32 every 32 iterations), and so does every iteration of the loops around it.
        size_t moving = level;
        while (moving > 0 && !moves(uses[b], moving - 1)) --moving;
        double loads = executions / inner_product[moving];
        if (moving > 0) {
          double period = std::numeric_limits<double>::infinity();
          for (const IndexModel& m : uses[b].streams)
            if (m.varies[moving - 1]) period = std::min(period, m.period[moving - 1]);
          loads /= std::max(period, 1.0);
        }
        lines += loads * lines_at(b, level);
      }
      return lines;
    };
    const double threads = double(std::max<int64_t>(target_.cpu.threads, 1));
    const bool cpu = target_.kind == TargetKind::kCpu;
    x[kL1MissLines] = cpu ? misses(double(target_.cpu.l1d_bytes)) : 0;
    x[kL2MissLines] = cpu ? misses(double(target_.cpu.l2_bytes)) : 0;
    x[kL3MissLines] = cpu ? misses(double(target_.cpu.l3_bytes) / threads) : 0;

    // Cycles on one core: float instructions over two vector pipes (math calls about 10 cycles, per vector in a
    // vectorized loop: libmvec), loads and stores over two ports, a reduction step no shorter than an FMA's latency,
    // and lines from L2, L3 and memory at rough per-line costs; the largest bounds the store.
    constexpr double kFmaLatency = 4, kMathCallCycles = 10, kL2LineCycles = 2, kL3LineCycles = 6,
                     kMemoryLineCycles = 20;
    const double instructions = total.float_ops() - total.float_math_calls;
    const double compute = instructions / (2 * width) +
                           total.float_math_calls * kMathCallCycles / (simd_loop ? width : 1) +
                           total.int_div_mod * 2 / width;
    const double latency = deepest_reduction ? executions / std::max(x[kReductionChains], 1.0) * kFmaLatency : 0;
    const double memory =
        x[kL1MissLines] * kL2LineCycles + x[kL2MissLines] * kL3LineCycles + x[kL3MissLines] * kMemoryLineCycles;
    x[kEstimatedCycles] = std::max({compute, memory_ops / 2, latency, memory});
  }

  const Target& target_;
  const std::vector<CompiledKernelFigures>& kernel_figures_;

  // Where the walk is.
  int64_t kernel_index_ = 0, stage_index_ = 0, grid_barriers_ = 0, block_barriers_ = 0;
  StoreContext kernel_context_, stage_context_;
  std::vector<bool> init_stores_;
  size_t store_ordinal_ = 0;
  std::vector<const ForNode*> loops_;
  std::vector<Guard> guards_;
  std::vector<EnclosingAllocation> allocations_;
  std::vector<ScopeKind> scopes_;

  // What it found.
  std::unordered_map<std::string, size_t> row_of_key_;
  std::vector<StageFeatures> rows_;
};

}  // namespace

const std::vector<std::string>& stage_feature_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v(kScalarNames, kScalarNames + kScalarCount);
    for (int slot = 0; slot < kBufferSlots; ++slot)
      for (const char* field : kBufferFieldNames) v.push_back("buf" + std::to_string(slot) + "_" + field);
    for (int i = 0; i < kCurvePoints; ++i) v.push_back("arith_intensity_" + std::to_string(i));
    return v;
  }();
  return names;
}

std::vector<StageFeatures> extract_stage_features(const LoopFunction& function, const Target& target,
                                                  const std::vector<CompiledKernelFigures>& kernel_figures) {
  return StageFeatureExtractor(target, kernel_figures).run(function);
}

}  // namespace ingot
