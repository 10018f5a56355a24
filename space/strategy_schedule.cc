// The fixed strategy schedule (StrategyScheduler): a plan's fusion as compute_inline / compute_at and one loop
// template per root stage, its choices read from FixedScheduleOptions' knobs; and the knobs' ranges, sampling and
// mutation.
#include "space/strategy_schedule.h"

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <stdexcept>
#include <type_traits>
#include <unordered_map>
#include <utility>

#include "analysis/access.h"
#include "analysis/strategies.h"
#include "ir/affine.h"
#include "ir/flops.h"
#include "ir/functor.h"
#include "ir/simplify.h"
#include "lower/vector_tiles.h"
#include "space/explicit_vectors.h"
#include "space/gpu_binding.h"
#include "space/root_loop_nest.h"

namespace ingot {

namespace {

// A channel tile (StrategyScheduler::channel_tile) gathers and scatters its accumulators once per tile, element by
// element: over a short reduction that costs as much as the FMAs.
constexpr int64_t kMinChannelTileReduction = 128;
// With its epilogue along the channels, the accumulators are stored whole and only the result is scattered. SiLU
// expansions on 14 x 14 maps alone (Intel Xeon VM, 2 threads, 7-9 rounds side by side against plane tiles): 1.17x for
// 112 input channels, 1.09x for 80, 1.03x for 64, 0.94x for 40, 0.77x for 24; in EfficientNet's profile (three
// profiles of each, medians) 1.065x for 112 and 0.93-0.95x for 80.
constexpr int64_t kMinChannelTileReductionAlongChannels = 96;
// Stored in blocks of channels (StrategyScheduler::find_channel_blocks), nothing is scattered, and the depthwise
// convolution that reads the map runs with channels in its lanes: EfficientNet's three blocks that expand 80 channels
// on 14 x 14 maps took 0.82x their time in the profile so, rather than as plane tiles over NCHW (Zen 4, one profile
// each, the model 1.020x side by side, 9 rounds).
constexpr int64_t kMinChannelTileReductionInBlocks = 64;
// Fewer accumulators than this wait on the FMAs' latency.
constexpr int64_t kMinChannelTileAccumulators = 8;
// With AVX2, 7 (one vector of channels x 7 pixels), which keeps 7 of the 8 FMAs in flight (2 pipes x 4 cycles) but
// beats what ran where no channel tile of 8 fits: on 7 x 7 maps (two vectors would take one pixel) a stencil tile of 4
// accumulators, on 14 x 14 maps of 80 or 112 channels a plane tile of 2 channels x 28 pixels (4 vectors, the last half
// idle). AVX2 code on a Zen 4 (whose AVX2 and AVX-512 FMAs peak alike), 2 threads: ResNeXt's last stage, its three
// blocks' profile intervals, 39.9 -> 27.9 ms; EfficientNet's projections of stages 3 to 6 0.73-0.90x each (one
// profile), the model 1.06-1.12x (4 runs of each binary in turn). AVX-512 keeps 8 (not measured: there only 16 output
// channels would give such a tile).
constexpr int64_t kMinAvx2ChannelTileAccumulators = 7;

// Whether index e is the same for every c of a block of `block` channels starting at a multiple of it: c appears only
// as c / G (floor) with G a multiple of the block (a grouped convolution's group of input channels).
bool same_in_a_block(const Expr& e, const std::string& c, int64_t block) {
  if (!uses_var(e, c)) return true;
  if (auto* b = e.as<BinaryNode>()) {
    if (b->op == BinaryOp::kDiv)
      if (auto* v = b->a.as<VarNode>(); v && v->name == c)
        if (auto* g = b->b.as<IntImmNode>()) return g->value % block == 0;
    return same_in_a_block(b->a, c, block) && same_in_a_block(b->b, c, block);
  }
  return false;  // c itself, or under another node
}

int64_t largest_divisor_up_to(int64_t n, int64_t cap) {
  for (int64_t d = std::min(n, cap); d > 1; --d)
    if (n % d == 0) return d;
  return 1;
}

// Whether only t's last axis has more than one iteration: a GEMV. An ONNX model's out[1, n] is one, as the built-in
// models' out[n] is (the LSTM's input projections ran 2x slower as 2-D GEMMs of 4-row tiles than as GEMVs).
bool one_output_axis(const Tensor& t) {
  if (t->axes.empty()) return false;
  for (size_t d = 0; d + 1 < t->axes.size(); ++d)
    if (t->axes[d].extent != 1) return false;
  return true;
}

// The roles of the TEs around a depthwise convolution whose maps are stored in blocks of channels
// (StrategyScheduler::find_channel_blocks).
enum class ChannelBlockRole {
  kExpanded,   // a channel tile's epilogue along the channels, stored in blocks, whose readers all read blocks
  kDepthwise,  // a depthwise convolution of it, computed inside its epilogue's blocks, channels in the lanes
  kEpilogue,   // that convolution's stored epilogue
  kPool,       // a pooling over the plane of a map in blocks
  kMap,        // an elementwise map of a map in blocks, of its shape (the squeeze-excitation's scaling)
};

// An expansion computed inside the bands of the depthwise convolution that reads it (StrategyScheduler's
// depthwise_band): the depthwise convolution's stored epilogue, the convolution, the expanded map and the expansion.
struct DepthwiseBand {
  Tensor epilogue, depthwise, expanded, expansion;
  int64_t rows = 1;  // output rows per band
  // The register tiles of the expansion and of the depthwise convolution: channels x pixels of one row.
  struct RowTile {
    int64_t channels = 0, pixels = 0;
  };
  RowTile expansion_tile, depthwise_tile;
};

class StrategyScheduler {
 public:
  StrategyScheduler(const Program& program, const PartitionPlan& plan, const FixedScheduleOptions& options)
      : program_(program), plan_(plan), options_(options) {
    int stage = 0;
    for (size_t k = 0; k < plan.kernels.size(); ++k)
      for (const PlanStage& s : plan.kernels[k].stages) {
        for (const std::string& te : s.tes) stage_of_[te] = stage;
        stage_tes_.push_back(s.tes);
        kernel_of_stage_.push_back(int(k));
        ++stage;
      }
  }

  Schedule run() {
    std::vector<Tensor> computes = program_.computes();
    for (const Tensor& t : computes)
      if (!stage_of_.count(t->name))
        throw std::invalid_argument("strategy_schedule: compute '" + t->name + "' is in no stage of the plan");
    find_bands();
    find_channel_blocks();
    // Readers first: a reduction computed inside its reader needs the reader's loop names.
    for (auto it = computes.rbegin(); it != computes.rend(); ++it) decide(*it);
    Schedule out;
    for (const auto& [tensor, layout] : packs_) out.pack(tensor, layout.first, layout.second);
    for (const auto& [tensor, elements] : pads_)
      out.pad(tensor, int64_t(program_.find(tensor)->shape.size()) - 1, elements);
    for (const Tensor& t : computes)
      for (const Decision& d : per_stage_[t->name]) out.append(d);
    StageLayout layout = merge_band_steps(plan_layout(plan_));
    if (!knobs().prefetch)
      for (LayoutStep& step : layout) step.prefetch.clear();
    out.set_layout(std::move(layout));
    return options_.gpu ? out : with_explicit_vectors(program_, std::move(out), options_.simd_fp32_lanes);
  }

 private:
  bool fused_into_its_stage(const Tensor& t) {
    if (program_.is_output(t)) return false;
    std::vector<Tensor> readers = program_.readers(t);
    return !readers.empty() && std::all_of(readers.begin(), readers.end(), [&](const Tensor& r) {
      return stage_of_.at(r->name) == stage_of_.at(t->name);
    });
  }

  // The stages that read t, looking through inlined readers.
  std::map<std::string, Tensor> root_readers(const Tensor& t) {
    std::map<std::string, Tensor> readers;
    std::vector<Tensor> frontier = {t};
    while (!frontier.empty()) {
      Tensor cur = frontier.back();
      frontier.pop_back();
      for (const Tensor& c : program_.readers(cur)) {
        if (inlined_.count(c->name))
          frontier.push_back(c);
        else
          readers.emplace(c->name, c);
      }
    }
    return readers;
  }

  // The only root stage that reads t, looking through inlined readers; "" when several do.
  std::string sole_root_reader(const Tensor& t) {
    std::map<std::string, Tensor> readers = root_readers(t);
    return readers.size() == 1 ? readers.begin()->first : "";
  }

  // The reads e makes once the computes named in `folded` are substituted into it: (tensor, indices); and, when
  // asked, the conditions of its selects (padded borders).
  void folded_reads(const Expr& e, const std::set<std::string>& folded,
                    std::vector<std::pair<Tensor, std::vector<Expr>>>& reads, std::vector<Expr>* conditions = nullptr) {
    for_each_node(e, [&](const Expr& node) {
      if (auto* select = node.as<SelectNode>(); select && conditions) conditions->push_back(select->cond);
      auto* read = node.as<TensorReadNode>();
      if (!read) return;
      if (!folded.count(read->tensor->name)) {
        reads.emplace_back(read->tensor, read->indices);
        return;
      }
      std::unordered_map<std::string, Expr> at;
      for (size_t d = 0; d < read->tensor->axes.size(); ++d) at[read->tensor->axes[d].name()] = read->indices[d];
      folded_reads(substitute(read->tensor->body, at), folded, reads, conditions);
    });
  }
  // The reads t makes once the computes folded into it are substituted (folded_reads of its body).
  std::vector<std::pair<Tensor, std::vector<Expr>>> reads_of(const Tensor& t) {
    std::vector<std::pair<Tensor, std::vector<Expr>>> reads;
    folded_reads(t->body, folded_into(t), reads);
    return reads;
  }

  // Whether folding the data movement t into its readers leaves a reduction reading memory through an index that
  // is not affine: a transpose and a reshape that merges the transposed axis (BERT's attention heads back into
  // rows: k / 64 and k % 64) put div and mod on the reduction's vectorized loop, and that GEMM ran 2.7 times
  // slower than its twins. Stored instead, t costs one copy.
  bool breaks_a_reduction_load(const Tensor& t) {
    std::set<std::string> without(inlined_.begin(), inlined_.end()), with = without;
    with.insert(t->name);
    auto non_affine_reads = [&](const Tensor& reader, const std::set<std::string>& folded) {
      std::vector<std::pair<Tensor, std::vector<Expr>>> reads;
      folded_reads(reader->body, folded, reads);
      int count = 0;
      for (const auto& [tensor, indices] : reads)
        count += classify_read(reader, tensor, indices) == AccessKind::kNonAffine;
      return count;
    };
    for (const auto& [name, reader] : root_readers(t))
      if (reader->reduction() && non_affine_reads(reader, with) > non_affine_reads(reader, without)) return true;
    return false;
  }

  // Whether a reader makes more reads of t than t has elements (a broadcast, a GEMM operand, a stencil; not a
  // row sum, which reads each element once). Fusing t into such a reader computes t once per read:
  // EfficientNet's squeeze-excitation gate (a sigmoid per channel), inlined into the scaling of a 112 x 112
  // feature map, ran 12 544 sigmoids per channel, and a LayerNorm mean computed inside its reader's tiles ran
  // once per tile.
  // Reads at the same indices count once: the compiler computes them once (a SiLU's x * sigmoid(x) over a batch
  // norm; stored instead, EfficientNet wrote and read back every expanded and depthwise map once more).
  bool reread_by_a_reader(const Tensor& t) {
    for (const Tensor& reader : program_.readers(t)) {
      int64_t iterations = reader->num_elements();
      if (const ReduceNode* r = reader->reduction())
        for (const IterVar& k : r->axes) iterations *= k.extent;
      std::vector<std::vector<Expr>> distinct;
      for_each_node(reader->body, [&](const Expr& node) {
        auto* read = node.as<TensorReadNode>();
        if (!read || !read->tensor.same_as(t)) return;
        auto same = [&](const std::vector<Expr>& indices) {
          return std::equal(indices.begin(), indices.end(), read->indices.begin(), read->indices.end(),
                            [](const Expr& a, const Expr& b) { return structural_equal(a, b); });
        };
        if (std::none_of(distinct.begin(), distinct.end(), same)) distinct.push_back(read->indices);
      });
      if (iterations * int64_t(distinct.size()) > t->num_elements()) return true;
    }
    return false;
  }

  // Fused when its readers are all in its stage, unless that recomputes arithmetic for every reread element
  // (pure data movement, a transpose or a reshape, is still folded into its readers' indices) or leaves a
  // reduction loading through a non-affine index.
  bool kept_fused(const Tensor& t) {
    // A tensor of bf16 pairs or rows (workloads/bf16_products.h) is what its reader's pair tiles load: folded, the
    // reader would round x lane by lane instead.
    if (is_bf16_rounding(t)) return false;
    bool moves_only = !t->reduction() && flops_per_element(t) == 0;
    bool recomputed = !moves_only && reread_by_a_reader(t);
    return fused_into_its_stage(t) && !recomputed && !(moves_only && breaks_a_reduction_load(t));
  }

  void decide(const Tensor& t) {
    Schedule s;
    if (band_of_.count(t->name)) {
      band_decisions(t, bands_[band_of_.at(t->name)], s);
      adopt(t, s);
      return;
    }
    if (kept_fused(t)) {
      if (!t->reduction()) {
        s.compute_inline(t->name);
        inlined_.insert(t->name);
        adopt(t, s);
        return;
      }
      std::string reader = options_.gpu ? "" : sole_root_reader(t);
      if (!reader.empty() && attach_loop_.count(reader)) {
        s.compute_at(t->name, reader, attach_loop_.at(reader));
        attached_loops(t, s);
        adopt(t, s);
        return;
      }
    }
    if (options_.gpu)
      gpu_root(t, s);
    else
      cpu_root(t, s);
    adopt(t, s);
  }

  void adopt(const Tensor& t, const Schedule& s) {
    for (const Decision& d : s.decisions()) per_stage_[t->name].push_back(d);
  }

  // How the innermost loops of a reduction go. Along memory, with the innermost reduction axis contiguous and
  // long enough: spatial axes, then the reduction axes, the last one vectorized (a simd reduction, one dot
  // product per output: the paper LSTM and BERT ran 4 to 7 times faster than with unrolled scalar rows). Otherwise
  // the reduction axes, then the innermost spatial axis vectorized, or unrolled where the reduction runs along
  // memory in some other axis.
  enum class InnerLoops { kVectorizeSpatial, kVectorizeReduction, kUnrollSpatial };
  InnerLoops inner_loops(const Tensor& t) const {
    std::set<std::string> contiguous = reduction_axes_along_memory(t);
    if (contiguous.empty() || panel_packed_.count(t->name)) return InnerLoops::kVectorizeSpatial;
    const IterVar& innermost = t->reduction()->axes.back();
    if (contiguous.count(innermost.name()) && innermost.extent >= knobs().min_reduction_lanes)
      return InnerLoops::kVectorizeReduction;
    return InnerLoops::kUnrollSpatial;
  }

  // A reduction computed inside its reader's parallel loop keeps the root template's inner loops. Left in
  // their natural order, a GEMM fused with its epilogue ran scalar and made BERT 1.75 times slower than unfused.
  void attached_loops(const Tensor& t, Schedule& s) {
    const ReduceNode* r = t->reduction();
    if (!r || t->axes.empty()) return;
    // Where the last axis has one iteration, only a reduction along memory has loops to arrange (a GEMV written as a
    // 1 x 1 convolution of a 1 x 1 map: EfficientNet's squeeze-excitation layers reduced one scalar at a time).
    if (auto blocked = channel_blocked_.find(t->name); blocked != channel_blocked_.end()) {
      if (blocked->second == ChannelBlockRole::kDepthwise) return channel_block_depthwise_loops(t, s);
      if (blocked->second == ChannelBlockRole::kPool) return channel_block_root(t, blocked->second, s, false);
    }
    if (t->axes.back().extent < 2 && inner_loops(t) != InnerLoops::kVectorizeReduction) return;
    if (auto plane = hosted_planes_.find(t->name); plane != hosted_planes_.end())
      return hosted_tile_loops(t, plane_loops(t, plane->second, s), s);
    if (auto channel = hosted_channels_.find(t->name); channel != hosted_channels_.end())
      return channel_reduction_loops(t, channel_loops(t, channel->second, s), false, s);
    if (auto stencil = hosted_stencils_.find(t->name); stencil != hosted_stencils_.end()) {
      TileLoops loops = stencil_loops(t, stencil->second, s);
      hosted_tile_loops(t, loops, s, stencil->second.k_block);
      if (!stencil->second.packed.empty() && stencil->second.pack_dim < 0)
        s.cache_read(t->name, stencil->second.packed, MemoryScope::kLocal, loops.outer[0]);
      return;
    }
    InnerLoops inner = inner_loops(t);
    std::vector<std::string> order;
    auto rows = hosted_rows_.find(t->name);
    std::string row_axis = rows == hosted_rows_.end() ? "" : t->axes[rows->second].name();
    for (size_t n = 0; n + 1 < t->axes.size(); ++n)
      if (t->axes[n].name() != row_axis) order.push_back(t->axes[n].name());
    if (inner == InnerLoops::kVectorizeReduction) {
      // The tile divides the extent computed per iteration of the reader's loop, known when t is read at the
      // reader's own coordinates (hosted_reduction_along_memory); otherwise one dot product at a time. The reader's
      // rows (hosted_rows_) go inside the reduction too: a 2-D register tile.
      auto hosted = hosted_tile_.find(t->name);
      std::string tile;
      if (hosted != hosted_tile_.end() && t->axes.back().extent > 1)
        tile = register_tile(t, t->axes.back().name(), hosted->second, !row_axis.empty(), s, order);
      else
        order.push_back(t->axes.back().name());
      for (const IterVar& k : r->axes) order.push_back(k.name());
      if (!row_axis.empty()) order.push_back(row_axis);
      if (!tile.empty()) order.push_back(tile);
      s.reorder(t->name, order);
      s.vectorize(t->name, r->axes.back().name());
      if (!row_axis.empty()) s.unroll(t->name, row_axis);
      if (!tile.empty()) s.unroll(t->name, tile);
      return;
    }
    if (!row_axis.empty()) order.push_back(row_axis);
    for (const IterVar& k : r->axes) order.push_back(k.name());
    order.push_back(t->axes.back().name());
    s.reorder(t->name, order);
    if (inner == InnerLoops::kUnrollSpatial)
      s.unroll(t->name, t->axes.back().name());
    else
      s.vectorize(t->name, t->axes.back().name());
  }

  // A vectorized reduction computes knobs.register_tile (a GEMV knobs.gemv_rows) outputs of its innermost spatial loop
  // `axis` at once, one accumulator each (the printer's register tile): `axis` is split so that its inner part,
  // returned, goes inside the reduction loops and is unrolled; its outer part, if any, is appended to `order`.
  // By default a GEMV (one output axis) computes 8 rows at once, each load of x shared by 8 rows of W. The paper LSTM
  // (global, interleaved runs) took 12.6 ms with 2 rows, 11.1 with 4, 9.8 with 8 and 10.9 with 16, since the printer
  // loads each operand of an explicit-vector tile once into a register; before that, as `omp simd` reductions, 4
  // rows had been slower than 2 (13.7 against 12.9 ms).
  // An extent with no divisor up to the tile (Swin's 49 keys of a 7 x 7 window) takes one up to twice it where no rows
  // of the other operand share the registers (beside_rows false): 7 dot products at once instead of one ran Swin's
  // window attention logits 1.5x faster (stage 0, Zen 5).
  std::string register_tile(const Tensor& t, const std::string& axis, int64_t extent, bool beside_rows, Schedule& s,
                            std::vector<std::string>& order) {
    const int64_t cap = one_output_axis(t) ? knobs().gemv_rows : knobs().register_tile;
    int64_t rows = largest_divisor_up_to(extent, cap);
    if (rows == 1 && cap > 1 && !beside_rows) rows = largest_divisor_up_to(extent, 2 * cap);
    if (rows == 1) {
      order.push_back(axis);
      return "";
    }
    if (rows == extent) return axis;
    s.split(t->name, axis, rows);
    order.push_back(axis + ".o");
    return axis + ".i";
  }

  Tensor hosted_reduction_along_memory(const Tensor& t) { return hosted_reduction(t, InnerLoops::kVectorizeReduction); }

  // The elementwise TEs of t's stage that t reads (a bias add under a residual add), folded as inlining would (not a
  // tensor of bf16 pairs or rows, which kept_fused stores).
  std::set<std::string> folded_into(const Tensor& t) {
    std::set<std::string> folded;
    std::vector<Tensor> frontier{t};
    while (!frontier.empty()) {
      Tensor cur = frontier.back();
      frontier.pop_back();
      for_each_node(cur->body, [&](const Expr& node) {
        auto* read = node.as<TensorReadNode>();
        if (!read || read->tensor->is_placeholder() || read->tensor->reduction() || is_bf16_rounding(read->tensor) ||
            stage_of_.at(read->tensor->name) != stage_of_.at(t->name) || !folded.insert(read->tensor->name).second)
          return;
        frontier.push_back(read->tensor);
      });
    }
    return folded;
  }

  // The reduction with inner loops of the given kind whose loops t's parallel loop hosts: t itself, or a producer in
  // t's plan stage that only t's stage reads, read at t's own coordinates (a GEMM or a convolution under its
  // epilogue; predicted, as producers are decided after their readers). Null when there is none.
  Tensor hosted_reduction(const Tensor& t, InnerLoops kind) {
    return hosted_reduction_where(t, [&](const Tensor& r) { return inner_loops(r) == kind; });
  }

  // The same for a reduction whose weight its stencil tile would pack in panels (packs_weight_panels).
  Tensor hosted_panel_reduction(const Tensor& t) {
    return hosted_reduction_where(t, [&](const Tensor& r) { return packs_weight_panels(r); });
  }

  Tensor hosted_reduction_where(const Tensor& t, const std::function<bool(const Tensor&)>& wanted) {
    if (t->reduction()) return wanted(t) ? t : Tensor();
    std::set<std::string> folded = folded_into(t);
    std::vector<std::pair<Tensor, std::vector<Expr>>> reads;
    folded_reads(t->body, folded, reads);
    // With t's axis ranges: a reshape that splits and merges the same extent (Swin's last stage, one 7 x 7 window,
    // reverses its windows with (j / 7) * 7 + l / 7 and j % 7) reads at t's own coordinates.
    const VarRanges ranges = axis_ranges(t);
    auto at_own_coordinates = [&](const std::vector<Expr>& indices) {
      for (size_t d = 0; d < t->axes.size(); ++d) {
        Expr index = simplify(indices[d], ranges);
        if (!structural_equal(index, t->axes[d].var) &&
            !(t->axes[d].extent == 1 && is_const_int(index, 0)))  // Swin's [0, j, l, m]
          return false;
      }
      return true;
    };
    for (const auto& [p, indices] : reads) {
      if (!p->reduction() || p->axes.size() != t->axes.size() || stage_of_.at(p->name) != stage_of_.at(t->name) ||
          !fused_into_its_stage(p) || reread_by_a_reader(p) || !wanted(p))
        continue;
      // Every read of p, not just this one: p + transpose(p) needs more of p per iteration than the tile.
      bool everywhere = std::all_of(reads.begin(), reads.end(), [&](const auto& read) {
        return !read.first.same_as(p) || at_own_coordinates(read.second);
      });
      if (everywhere) return p;
    }
    return Tensor();
  }

  // The spatial axes (by position) that index r's largest operand among those its innermost spatial axis moves: a
  // GEMM's weight B[j, k] under C[i, j], or K[h, j, k] under a batched product. A tile of that operand is reused by
  // the iterations of the other axes, so the parallel loop visits those innermost: a BERT FFN GEMM whose 64-row
  // slices of its 9.4 MB weight otherwise streamed from memory once per row of activations ran 2x faster.
  static std::vector<bool> axes_of_the_reused_operand(const Tensor& r) {
    std::vector<bool> best;
    int64_t best_elements = 0;
    const std::string& last = r->axes.back().name();
    for_each_node(r->body, [&](const Expr& node) {
      auto* read = node.as<TensorReadNode>();
      if (!read || read->tensor->num_elements() <= best_elements) return;
      std::vector<bool> used(r->axes.size());
      bool uses_last = false;
      for (size_t d = 0; d < r->axes.size(); ++d)
        for (const Expr& index : read->indices) {
          used[d] = used[d] || uses_var(index, r->axes[d].name());
          uses_last = uses_last || uses_var(index, last);
        }
      if (!uses_last) return;
      best = used;
      best_elements = read->tensor->num_elements();
    });
    return best;
  }

  // The extent E of the 1-D readers of a 1-D GEMV t (or [1, E] readers of a [1, n] one) when they all sit in the
  // next stage of t's kernel, are root stages, and read t only at j + c * E (j their axis, 0 <= c < extent(t) / E <=
  // 8): an LSTM cell's gates, stacked in one [4H] tensor and read at j, j + H, j + 2H, j + 3H; `reader` is one of
  // them. 0 otherwise.
  int64_t gate_period(const Tensor& t, Tensor& reader) {
    int stage = stage_of_.at(t->name);
    std::map<std::string, Tensor> readers = root_readers(t);  // through inlined readers (the last step's c)
    if (readers.empty() || program_.is_output(t) || !same_kernel(stage, stage + 1)) return 0;
    std::set<std::string> folded(inlined_.begin(), inlined_.end());
    int64_t period = 0;
    const int64_t extent = t->axes.back().extent;
    for (const auto& [name, r] : readers) {
      if (stage_of_.at(name) != stage + 1 || r->reduction() || !one_output_axis(r) || r->axes.size() != t->axes.size())
        return 0;
      if (period && r->axes.back().extent != period) return 0;
      period = r->axes.back().extent;
      reader = r;
      const std::string& j = r->axes.back().name();
      // The reader's axes of one iteration index the GEMV's (all of one iteration too) at 0.
      std::unordered_map<std::string, Expr> single;
      for (size_t d = 0; d + 1 < r->axes.size(); ++d) single[r->axes[d].name()] = Expr(int64_t(0));
      std::vector<std::pair<Tensor, std::vector<Expr>>> reads;
      folded_reads(r->body, folded, reads);
      for (const auto& [tensor, indices] : reads) {
        if (!tensor.same_as(t)) continue;
        for (size_t d = 0; d + 1 < indices.size(); ++d)
          if (!structural_equal(simplify(substitute(indices[d], single)), Expr(int64_t(0)))) return 0;
        std::optional<AffineForm> form = as_affine(simplify(indices.back()));
        if (!form || form->coeffs.size() != 1 || !form->coeffs.count(j) || form->coeffs.at(j) != 1 ||
            form->constant < 0 || form->constant % period != 0 || form->constant >= extent)
          return 0;
      }
    }
    int64_t multiple = extent / period;
    return extent % period == 0 && multiple >= 2 && multiple <= 8 ? period : 0;
  }

  bool same_kernel(int a, int b) const {
    int first = 0;
    for (const PlanKernel& kernel : plan_.kernels) {
      int end = first + int(kernel.stages.size());
      if (a >= first && a < end) return b >= first && b < end;
      first = end;
    }
    return false;
  }

  // A GEMV over stacked gates laid out like its readers (gate_period): its parallel loop runs over the same chunks
  // of j as theirs and computes every gate of its chunk, so each reader iteration reads only what the same
  // iteration wrote and codegen merges them with no barrier between (lower/merge_parallel_stages.h): one barrier
  // per LSTM step, as Souffle's persistent kernel has. Inner loops as every GEMV's: gates, then knobs.gemv_rows rows at
  // once inside the vectorized reduction.
  void gate_aligned_gemv(const Tensor& t, int64_t period, const Tensor& reader, Schedule& s) {
    const std::string& name = t->name;
    const std::string g = t->axes.back().name();
    const int64_t chunk =
        last_axis_chunk(reader);  // the readers' (one chunk: the whole period, where they run it whole)
    s.split(name, g, period);
    std::string parallel = g + ".i", rows;
    int64_t rows_extent = 0;
    if (chunk > 1) {
      s.split(name, g + ".i", chunk);
      parallel = g + ".i.o";
      rows = g + ".i.i";
      rows_extent = chunk;
    }
    // Axes of one iteration (an ONNX model's batch of 1) go outside and fuse into the parallel loop, as the readers'.
    std::vector<std::string> order;
    for (size_t d = 0; d + 1 < t->axes.size(); ++d) order.push_back(t->axes[d].name());
    const size_t unit_axes = order.size();
    order.push_back(parallel);
    order.push_back(g + ".o");
    std::string tile = rows.empty() ? "" : register_tile(t, rows, rows_extent, false, s, order);
    for (const IterVar& k : t->reduction()->axes) order.push_back(k.name());
    if (!tile.empty()) order.push_back(tile);
    s.reorder(name, order);
    for (size_t d = unit_axes; d-- > 0;) {
      s.fuse(name, order[d], parallel);
      parallel = order[d] + "+" + parallel;
    }
    s.parallel(name, parallel);
    attach_loop_[name] = parallel;
    if (knobs().cache_write)
      s.cache_write(name, g + ".o");  // one gate's rows: a dense tile (the chunk's gates are not)
    s.vectorize(name, t->reduction()->axes.back().name());
    if (!tile.empty()) s.unroll(name, tile);
  }

  // A reduction that vectorizes a spatial axis over an NCHW map (a 1 x 1 convolution: a GEMM whose spatial operand
  // X[c, h, w] is contiguous over the whole plane) runs its last two axes as one loop over whole rows of the plane
  // and computes a few output channels at once: `rows` rows of the register tile, each load of X shared by them, all
  // `rows` x lanes accumulators in registers. One row of a 14 x 14 map at a time, a ResNeXt 1 x 1 convolution of
  // 1024 channels ran at 20 GFLOP/s; over the whole plane with 2 channels at once, at 125 (2 cores, AVX-512).
  struct PlaneTile {
    size_t row_axis = 0;  // the axis of the channels computed together
    int64_t rows = 1;
    int64_t lanes = 0;  // elements of the plane per iteration: whole rows of it
    // Per axis, whether the operand read once (reused_operand_axes) is indexed by it (the last two: by the plane).
    // The outer loops over those axes go first (knobs.reuse_operand_order), and the other operand is read again in
    // each of their iterations.
    std::vector<bool> reused_axes;
  };
  // Of the vector registers (32 with AVX-512's 16 lanes, 16 with narrower vectors), those the accumulators may take,
  // leaving the rest for operands (knobs.accumulator_vectors, when set, instead).
  int64_t accumulator_vectors() const {
    if (knobs().accumulator_vectors > 0) return knobs().accumulator_vectors;
    return options_.simd_fp32_lanes >= 16 ? 28 : 12;
  }

  // The accumulators of a GEMM panel's outer-product tile of `vectors` vectors per row: the registers left when its
  // row of B and the broadcast element of A are loaded, at most accumulator_vectors(). Swin's 4-vector x 7-row tiles
  // (28 accumulators, 33 registers) kept one accumulator on the stack, stored and reloaded every k, and 2 x 14 made
  // Swin 1.022x (side by side, 7 rounds). Plane and channel tiles keep their 4 x 7 (which spill the same way): capped
  // so, powers-of-two channel counts leave them 2 x 7, and ResNeXt ran 0.87x and 0.98x.
  // With AVX2 a tile of one or two vectors may take 14 (max_plain_operand_tile_accumulators: the printer reads a second
  // vector from memory in each of its FMAs): Swin's GEMMs on 14-token rows take 2 vectors x 7 rows where they took 4 x
  // 2, and its AVX2 program ran 1.115x (5 rounds side by side, Zen 4).
  int64_t outer_product_accumulators(int64_t vectors) const {
    const int64_t lanes = options_.simd_fp32_lanes;
    if (lanes == kAvx2VectorLanes && vectors <= 2 && knobs().accumulator_vectors == 0)
      return max_plain_operand_tile_accumulators(lanes);
    return std::min(accumulator_vectors(), vector_registers(options_.simd_fp32_lanes) - vectors - 1);
  }

  // Rows of a 2-D register tile (rows x knobs.register_tile columns, each a vector accumulator): knobs.register_tile,
  // or with AVX2's 8-lane vectors as many as its registers hold with their operands (lower/vector_tiles.h: 8
  // accumulators; its 4 x 4 tile, a simd reduction, ran a BERT FFN GEMM no faster than that). AVX-512's square tiles
  // stay as they are, the knob's 8 x 8 (a simd reduction) included.
  int64_t tile_rows() const {
    if (options_.simd_fp32_lanes != kAvx2VectorLanes) return knobs().register_tile;
    const int64_t columns = std::max(1, knobs().register_tile);
    return std::min<int64_t>(knobs().register_tile,
                             std::max<int64_t>(1, int64_t(max_vector_accumulators(kAvx2VectorLanes)) / columns));
  }

  // Whether t's last two axes (h, w) can run as one loop: every read indexes them, if at all, as [..., h + f, w]
  // (f free of both) of a tensor whose last dimension is as wide as w, no other index uses them, and no select
  // condition (a padded border) does. The plane's flat index is then the loop's.
  bool plane_is_contiguous(const Tensor& t) {
    if (pads_.count(t->name)) return false;  // its rows padded (pad_rows_in_one_l1_set)
    size_t n = t->axes.size();
    const std::string& h = t->axes[n - 2].name();
    const std::string& w = t->axes[n - 1].name();
    std::vector<std::pair<Tensor, std::vector<Expr>>> reads;
    std::vector<Expr> conditions;
    folded_reads(t->body, folded_into(t), reads, &conditions);
    auto uses_plane = [&](const Expr& e) { return uses_var(e, h) || uses_var(e, w); };
    if (std::any_of(conditions.begin(), conditions.end(), uses_plane)) return false;
    // Loops of one iteration are 0: a 1 x 1 convolution reads X[n, rc, h + ry, w + rx] with ry, rx < 1.
    std::unordered_map<std::string, Expr> single;
    for (const IterVar& a : t->axes)
      if (a.extent == 1) single[a.name()] = Expr(int64_t(0));
    if (t->reduction())
      for (const IterVar& k : t->reduction()->axes)
        if (k.extent == 1) single[k.name()] = Expr(int64_t(0));
    for (auto [tensor, indices] : reads) {
      for (Expr& index : indices) index = simplify(substitute(index, single));
      if (std::none_of(indices.begin(), indices.end(), uses_plane)) continue;
      if (pads_.count(tensor->name)) return false;
      // A tensor of bf16 pairs ([.., h, w, 2], workloads/bf16_products.h): its pixels are pairs side by side.
      const bool pairs = is_bf16_pairs(tensor) && !uses_plane(indices.back());
      if (pairs) indices.pop_back();
      size_t d = indices.size() - 1;
      if (d == 0 || !structural_equal(indices[d], t->axes[n - 1].var) || tensor->shape[d] != t->axes[n - 1].extent ||
          uses_plane(simplify(indices[d - 1] - t->axes[n - 2].var)))
        return false;
      for (size_t other = 0; other + 1 < d; ++other)
        if (uses_plane(indices[other])) return false;
    }
    return true;
  }

  // A tensor of bf16 pairs of a 1 x 1 convolution's input channels (workloads/bf16_products.h): a bf16 compute whose
  // last dimension is a pair.
  static bool is_bf16_pairs(const Tensor& t) {
    return !t->is_placeholder() && !t->reduction() && t->dtype == DType::kBFloat16 && !t->shape.empty() &&
           t->shape.back() == 2;
  }
  // A tensor of values the bf16 rewrite rounds once for the products that read them (pairs, or a GEMM's rows): a bf16
  // cast that only sums read.
  bool is_bf16_rounding(const Tensor& t) const {
    if (t->is_placeholder() || t->reduction() || t->dtype != DType::kBFloat16 || !t->body.as<CastNode>()) return false;
    const std::vector<Tensor> readers = program_.readers(t);
    return !readers.empty() &&
           std::all_of(readers.begin(), readers.end(), [](const Tensor& r) { return r->reduction() != nullptr; });
  }
  static bool reads_bf16_pairs(const Tensor& r) {
    bool pairs = false;
    for_each_node(r->body, [&](const Expr& e) {
      if (auto* read = e.as<TensorReadNode>()) pairs = pairs || is_bf16_pairs(read->tensor);
    });
    return pairs;
  }

  // Output channels of an AMX plane tile of `chunks` chunks of pixels over `channels`: two AMX tiles of rows (32)
  // where their accumulators fit the 8 tile registers beside both row tiles and the weight tiles (2 chunks), else one
  // (16); fewer than all channels (a tile splits them). ResNeXt's 1024 -> 1024 convolutions on 14 x 14 maps (2 chunks
  // of 28 pixels) ran 0.39 -> 0.29 ms alone so, the model (bf16) about 64 -> 60 ms (3 runs).
  static int64_t amx_tile_rows(int64_t chunks, int64_t channels) {
    const int64_t two_tiles = chunks <= 2 ? largest_divisor_up_to(channels, 2 * kAmxTileRows) : 0;
    if (two_tiles > kAmxTileRows && two_tiles % 2 == 0 && two_tiles < channels) return two_tiles;
    return largest_divisor_up_to(channels, kAmxTileRows);  // two tiles of equal rows, or one
  }

  // Whether a tensor of bf16 pairs [.., h, w, 2] reads its input's pixels at [.., h, w] of a map as wide as w (not a
  // strided convolution's [.., 2 h, 2 w]): the plane is one loop.
  static bool pairs_plane_is_contiguous(const Tensor& pairs) {
    const size_t n = pairs->axes.size();
    bool contiguous = false;
    for_each_node(pairs->body, [&](const Expr& e) {
      auto* read = e.as<TensorReadNode>();
      if (!read || read->indices.size() < 2) return;
      const size_t d = read->indices.size();
      contiguous = structural_equal(read->indices[d - 2], pairs->axes[n - 3].var) &&
                   structural_equal(read->indices[d - 1], pairs->axes[n - 2].var) &&
                   read->tensor->shape[d - 1] == pairs->axes[n - 2].extent;
    });
    return contiguous;
  }

  // The pixels of a plane of height x width that an AMX pair tile's columns take (the printer's AMX tile: at most
  // kMaxAmxTileChunks chunks of 16 pixels, the last one partial or not): whole rows, the most of its chunks' columns
  // used, then the most pixels; where a row is wider than that, the largest part of a row that fits. 56 x 56 and 28 x
  // 28 maps: 56 pixels (3.5 chunks); 14 x 14: 28; 7 x 7: 49; 112 x 112: half rows of 56.
  static int64_t amx_plane_pixels(int64_t height, int64_t width) {
    auto chunks = [](int64_t pixels) { return (pixels + kAvx512VectorLanes - 1) / kAvx512VectorLanes; };
    int64_t best = 0;
    double best_use = 0;
    for (int64_t rows = 1; rows <= height; ++rows) {
      const int64_t pixels = rows * width;
      if (height % rows != 0 || chunks(pixels) > kMaxAmxTileChunks) continue;
      const double use = double(pixels) / double(chunks(pixels) * kAvx512VectorLanes);
      if (use > best_use + 1e-9 || (use > best_use - 1e-9 && pixels > best)) {
        best = pixels;
        best_use = use;
      }
    }
    for (int64_t part = width - 1; part > 1 && best == 0; --part)
      if (width % part == 0 && chunks(part) <= kMaxAmxTileChunks) best = part;
    return best;
  }

  // Whether a hosted reduction r has its host t's axes: a tile splits both alike, and a larger r (read through a
  // slice) would not divide.
  static bool same_extents(const Tensor& t, const Tensor& r) {
    if (r->axes.size() != t->axes.size()) return false;
    for (size_t d = 0; d < t->axes.size(); ++d)
      if (r->axes[d].extent != t->axes[d].extent) return false;
    return true;
  }

  // The tile for root t hosting reduction r (or r == t), when both run over a contiguous plane.
  std::optional<PlaneTile> plane_tile(const Tensor& t, const Tensor& r) {
    size_t n = t->axes.size();
    if (n < 3 || !knobs().plane_tiles) return std::nullopt;
    const int64_t lanes = options_.simd_fp32_lanes, height = t->axes[n - 2].extent, width = t->axes[n - 1].extent;
    // With AVX-512, at most a quarter of the accumulator registers per row (7 vectors), so that four channels share
    // each load of X: the paper ResNeXt ran in 181 ms so against 199 with half (whole 14 x 14 planes, two channels).
    // Elsewhere half, so that two rows fit. knobs.plane_row_share, when set, instead.
    const int64_t share = knobs().plane_row_share > 0 ? knobs().plane_row_share : lanes >= 16 ? 4 : 2;
    const int64_t cap = accumulator_vectors() / share * lanes;
    // A 1 x 1 convolution in bf16 on AMX: 16 or 32 output channels (one or two AMX tiles of rows) times whole rows of
    // the plane (the columns), each step of 32 input channels one tdpbf16ps per 16 pixels, where the printer's AMX
    // tile takes it (input channels a multiple of 32, rows of at most 5 chunks); else the registers' tile below.
    const int64_t amx_pixels = amx_plane_pixels(height, width);
    const bool amx = options_.amx_bf16 && lanes == kAvx512VectorLanes && r->reduction() && reads_bf16_pairs(r) &&
                     r->reduction()->axes.back().extent % kAmxTileK == 0 && amx_pixels > 0;
    int64_t pixels = amx ? amx_pixels : 0;
    for (int64_t d = height; d >= 1 && !pixels; --d)
      if (height % d == 0 && d * width <= cap) pixels = d * width;
    if (pixels < lanes || !plane_is_contiguous(t) || (!r.same_as(t) && !plane_is_contiguous(r)) || !same_extents(t, r))
      return std::nullopt;
    PlaneTile tile;
    tile.lanes = pixels;
    // The channels: the innermost other axis that no read moving along the plane indexes, so rows share those loads.
    // Only a split one: all of its rows in one iteration would leave the parallel loop few iterations or one.
    const std::vector<std::pair<Tensor, std::vector<Expr>>> reads = reads_of(r);
    // Only where the operands do not fit half of one core's L2: in cache, the loops in their own order write the
    // output contiguously and split it by channels as the next stage reads it. Over plane blocks first, EfficientNet's
    // 16 -> 96 channel expansions on 112 x 112 maps (X 0.8 MB) ran 3x slower in the model while their batch norm was
    // stored beside the SiLU, and the model within noise once it was not (0.95-1.04x); ResNeXt's 1 x 1 convolutions
    // of 1.6 to 3.2 MB maps with 256 or more channels ran 1.7-2.5x faster. Half, not all of it: EfficientNet's
    // projections to 16 and 24 channels (X 1.6-1.8 MB on a 2 MB L2, read again per 4 output channels) took 0.108-0.178
    // ms with the channels first and 0.083-0.119 with the plane first (Intel Xeon VM, 2 threads, one profile each);
    // its ONNX file 1.028x, built in 1.047x (9 rounds side by side), bf16 1.034x.
    std::map<std::string, ReadOperand> operands;
    int64_t operand_bytes = 0;
    for (const auto& [tensor, indices] : reads) {
      ReadOperand& operand = operands[tensor->name];
      if (operand.axes.empty()) {
        operand.bytes = tensor->num_elements() * dtype_bytes(tensor->dtype);
        operand.axes.assign(n, false);
        operand_bytes += operand.bytes;
      }
      for (size_t d = 0; d < n; ++d)
        for (const Expr& index : indices) operand.axes[d] = operand.axes[d] || uses_var(index, r->axes[d].name());
      operand.axes[n - 2] = operand.axes[n - 1] = operand.axes[n - 2] || operand.axes[n - 1];
    }
    for (size_t d = n - 2; d-- > 0;) {
      bool shared = std::all_of(reads.begin(), reads.end(), [&](const auto& read) {
        bool on_plane = false, on_axis = false;
        for (const Expr& index : read.second) {
          on_plane = on_plane || uses_var(index, r->axes[n - 1].name());
          on_axis = on_axis || uses_var(index, r->axes[d].name());
        }
        return !on_plane || !on_axis;
      });
      int64_t vectors = (tile.lanes + lanes - 1) / lanes;
      int64_t rows = largest_divisor_up_to(
          t->axes[d].extent, amx ? amx_tile_rows(vectors, t->axes[d].extent)
                                 : std::min<int64_t>(knobs().register_tile, accumulator_vectors() / vectors));
      if (shared && rows > 1 && rows < t->axes[d].extent) {
        tile.row_axis = d;
        tile.rows = rows;
        break;
      }
    }
    if (operand_bytes > options_.l2_bytes / 2 && options_.l2_bytes > 0)
      tile.reused_axes = reused_operand_axes(r, tile, operands);
    return tile;
  }

  // Of a plane tile's two largest operands, the axes of the one its outer loops should visit first: the other is read
  // again in each of their blocks (those of the axes it does not share), and the order that moves fewer bytes wins,
  // the larger operand on a tie. By size alone, ResNeXt's 512 -> 1024 convolution on a 28 x 28 map (X 1.6 MB, W 2 MB)
  // read X once per four output channels, 410 MB, where the plane's 7 blocks first read W 7 times, 14 MB.
  struct ReadOperand {
    int64_t bytes = 0;
    std::vector<bool> axes;  // of the reduction, the plane's two as one
  };
  std::vector<bool> reused_operand_axes(const Tensor& r, const PlaneTile& tile,
                                        const std::map<std::string, ReadOperand>& operands) const {
    const size_t n = r->axes.size();
    std::vector<const ReadOperand*> largest;
    for (const auto& [name, operand] : operands) largest.push_back(&operand);
    std::stable_sort(largest.begin(), largest.end(),
                     [](const ReadOperand* a, const ReadOperand* b) { return a->bytes > b->bytes; });
    if (largest.empty()) return {};
    if (largest.size() == 1) return largest[0]->axes;
    auto outer_blocks = [&](size_t d) {
      if (d == n - 1) return int64_t(1);
      if (d == n - 2) return r->axes[n - 2].extent * r->axes[n - 1].extent / tile.lanes;
      return d == tile.row_axis ? r->axes[d].extent / tile.rows : r->axes[d].extent;
    };
    auto traffic = [&](const ReadOperand& reused, const ReadOperand& other) {
      int64_t blocks = 1;
      for (size_t d = 0; d < n; ++d)
        if (reused.axes[d] && !other.axes[d]) blocks *= outer_blocks(d);
      return reused.bytes + other.bytes * blocks;
    };
    const ReadOperand &first = *largest[0], &second = *largest[1];
    return traffic(second, first) < traffic(first, second) ? second.axes : first.axes;
  }

  // The loops of a plane or stencil tile: outer ones (fused and parallel in a root), the tile's (unrolled inside the
  // reduction) and the vectorized lanes.
  struct TileLoops {
    std::vector<std::string> outer, tile;
    std::string lanes;
  };

  // A 1 x 1 convolution over an NCHW map, Y[.., c, h, w] = sum W[c, k] X[.., k, h, w], whose weight is packed by
  // output channel ([c / B, k, B]) runs the other way round from a plane tile: a few vectors of output channels (lanes
  // along c, each step's weights one contiguous load) times a few pixels of the plane (X's element broadcast), every
  // accumulator in a register across the whole reduction, gathered and scattered once per tile (the printer's strided
  // accumulators). The plane tile loads a row of X per step and broadcasts W, with a row of a 14 x 14 map in 7 vectors
  // of which the last holds 2 lanes. ResNeXt's 1 x 1 convolution of 1024 channels on a 14 x 14 map, with its batch
  // norm and ReLU (Zen 5, 2 cores, interleaved): 1.13 ms as a plane tile (4 channels x 98 pixels), 0.85 ms as 2
  // vectors of channels x 14 pixels (483 GFLOP/s, 88% of the FMA peak), 0.98 ms as 4 vectors x 7 pixels.
  struct ChannelTile {
    int64_t vectors = 0;     // output channels per tile, in vectors
    int64_t pixels = 0;      // of the fused plane per tile, each one broadcast per step
    std::string weight;      // packed along weight_dim by vectors x lanes
    int64_t weight_dim = 0;  // the weight's dimension the output channel indexes
    bool map_first = false;  // the parallel loop visits the plane's blocks outside the channels'
    // The plane's blocks run inside each block of channels, a serial loop of the reduction, which its host computes for
    // the whole plane of the block (registers_tile_of_shifted_pixels); `pixels` then need not divide a row or the
    // plane: the last block is shifted back (pixels_tail).
    bool plane_inside = false;
    SplitTail pixels_tail = SplitTail::kExact;
  };

  std::optional<ChannelTile> channel_tile(const Tensor& t, const Tensor& r,
                                          int64_t min_reduction = kMinChannelTileReduction) {
    const size_t n = t->axes.size();
    const int64_t lanes = options_.simd_fp32_lanes;
    if (n < 3 || !knobs().channel_tiles || !knobs().pack_weights || !is_explicit_vector_width(lanes) ||
        !r->reduction() || !same_extents(t, r) || (!r.same_as(t) && !plane_is_contiguous(t)))
      return std::nullopt;
    int64_t reduction = 1;
    for (const IterVar& k : r->reduction()->axes) reduction *= k.extent;
    // Its lanes are output channels; a tensor of bf16 pairs holds pixels side by side (a plane tile's lanes).
    // An epilogue along the channels (channel_root) stores the accumulators whole, so a shorter reduction pays.
    if (!r.same_as(t) && epilogue_along_channels(t))
      min_reduction = std::min(min_reduction, short_expansions_.count(t->name) ? kMinChannelTileReductionInBlocks
                                                                               : kMinChannelTileReductionAlongChannels);
    if (reduction < min_reduction || reads_bf16_pairs(r)) return std::nullopt;
    const std::string& c = r->axes[n - 3].name();
    auto is_plane = [&](const std::string& v) { return v == r->axes[n - 2].name() || v == r->axes[n - 1].name(); };
    const std::vector<std::pair<Tensor, std::vector<Expr>>> reads = reads_of(r);
    ChannelTile tile;
    // Reads inside the reduction that use c other than as the weight's channel: a grouped convolution's X[c / G *
    // G + k, ...], the same for every channel of a tile within one group (checked per tile below).
    std::vector<Expr> grouped_indices;
    auto in_reduction = [&](const std::vector<Expr>& indices) {
      return std::any_of(r->reduction()->axes.begin(), r->reduction()->axes.end(), [&](const IterVar& k) {
        return std::any_of(indices.begin(), indices.end(), [&](const Expr& i) { return uses_var(i, k.name()); });
      });
    };
    for (const auto& [tensor, indices] : reads) {
      int64_t c_dim = -1;
      bool plane = false, plain_channel = true;
      for (size_t d = 0; d < indices.size(); ++d) {
        if (uses_var(indices[d], c)) {
          const auto* v = indices[d].as<VarNode>();
          plain_channel = plain_channel && v && v->name == c && c_dim < 0;
          c_dim = int64_t(d);
        }
        for_each_node(indices[d], [&](const Expr& e) {
          if (auto* v = e.as<VarNode>()) plane = plane || is_plane(v->name);
        });
      }
      if (c_dim < 0) continue;               // X of a plain convolution
      if (!in_reduction(indices)) continue;  // the batch norm's per-channel terms: the epilogue's
      if (plain_channel && !plane && tensor->is_placeholder() && is_weight(tensor->name)) {
        if (!tile.weight.empty() && tile.weight != tensor->name) return std::nullopt;
        tile.weight = tensor->name;
        tile.weight_dim = c_dim;
        continue;
      }
      grouped_indices.insert(grouped_indices.end(), indices.begin(), indices.end());
    }
    if (tile.weight.empty()) return std::nullopt;
    const int64_t channels = r->axes[n - 3].extent, height = r->axes[n - 2].extent, width = r->axes[n - 1].extent;
    // A tile's pixels are part of one row or whole rows, so that where a host computes it, lowering infers its region
    // as that tile (4 pixels of 14-pixel rows would make it the whole plane, computed once per tile).
    auto pixels_up_to = [&](int64_t cap) {
      return cap >= width ? width * largest_divisor_up_to(height, cap / width) : largest_divisor_up_to(width, cap);
    };
    // The most accumulators; among as many, the first of 2, 1, 3 and 4 vectors (2 x 14 beat 4 x 7, measured above).
    int64_t best_accumulators = 0;
    auto consider = [&](int64_t vectors, int64_t accumulators) {
      if (channels % (vectors * lanes) != 0 || (knobs().channel_vectors > 0 && vectors != knobs().channel_vectors))
        return;
      if (!std::all_of(grouped_indices.begin(), grouped_indices.end(),
                       [&](const Expr& index) { return same_in_a_block(index, c, vectors * lanes); }))
        return;
      const int64_t pixels = pixels_up_to(accumulators / vectors);
      if (pixels < 2 || vectors * pixels <= best_accumulators) return;
      best_accumulators = vectors * pixels;
      tile.vectors = vectors;
      tile.pixels = pixels;
    };
    for (int64_t vectors : {2, 1, 3, 4}) consider(vectors, accumulator_vectors());
    // With AVX2, where those tiles broadcast fewer than 4 pixels per line of the map, one vector of channels may take
    // every register but its weights' and the pixel broadcast in turn: 14 of 16 (max_plain_operand_tile_accumulators;
    // the printer writes each pixel into its FMA, and g++ broadcasts them into one register in turn: no spill in the
    // assembly). Not for a grouped convolution, nor where no channel tile was chosen (neither measured);
    // `channel_vectors=1` takes it on every map. On 14 x 14 maps that is 1 vector x 14 pixels, which per step of the
    // reduction reads a vector of weights and a line of the map for 14 FMAs, where 4 vectors x 2 pixels read four
    // vectors and the line for 8. ResNeXt's AVX2 program on a Zen 4 (2 threads): its 1 x 1 convolutions of 14 x 14 maps
    // 1.2-1.28x as fast (two profiles of each), the model 1.125x (7 rounds side by side). Where 1 x 14 also replaced 2
    // x 4 (56 x 56 and 28 x 28 maps) those convolutions ran 1.03-1.06x slower, and where it replaced 1 x 7
    // (EfficientNet's 14 x 14 maps of 80 and 112 channels) the model was level (9 rounds).
    if (lanes == kAvx2VectorLanes && knobs().accumulator_vectors == 0 && grouped_indices.empty() &&
        ((best_accumulators >= kMinAvx2ChannelTileAccumulators && tile.pixels < 4) || knobs().channel_vectors == 1))
      consider(1, max_plain_operand_tile_accumulators(lanes));
    // Where a tile of one or two vectors still holds fewer accumulators than that (one vector x a row of 7: 7
    // accumulators, whose FMAs wait on each other's latency; two vectors x 4 pixels: 8), two vectors x up to 7 pixels
    // fill 14: the printer reads the second vector of weights from memory in each of its FMAs (the registers hold 14
    // accumulators, the first vector and the broadcast). ResNeXt's AVX2 1 x 1 convolutions of 7 x 7 maps ran at 142-152
    // GFLOP/s so, against 86-96 as 1 x 7 (one profile each, Zen 4); its model 1.04x and EfficientNet's 1.07x (5 and 9
    // rounds side by side). Its 1 x 1 convolutions of 56 x 56 and 28 x 28 maps (256 and 512 channels, 2 x 4 before)
    // alone, as task:resnext_conv1x1 (Zen 3, two runs of 15 rounds side by side): 1.105x and 1.108x, 1.045x and 1.123x;
    // the model within noise (1.007x here, 9 rounds; 0.985x on a Zen 4, docs/peers.md).
    if (lanes == kAvx2VectorLanes && knobs().accumulator_vectors == 0 && knobs().channel_vectors == 0 &&
        grouped_indices.empty() && tile.vectors >= 1 && tile.vectors <= 2 &&
        tile.vectors * tile.pixels < max_plain_operand_tile_accumulators(lanes))
      consider(2, max_plain_operand_tile_accumulators(lanes));
    if (best_accumulators < (lanes == kAvx2VectorLanes ? kMinAvx2ChannelTileAccumulators : kMinChannelTileAccumulators))
      return std::nullopt;
    // An epilogue over the tile's pixels (its channels are a plane apart) that leaves more than one lane idle: cheap
    // for a batch norm and ReLU, not for a math function that does not run along the channels. EfficientNet's 192 ->
    // 1152 expansions on 7 x 7 maps (7 of 16 lanes) took 0.103 ms each so, against 0.083 as plane tiles. With AVX2 the
    // same expansions (7 of 8 lanes) ran as channel tiles of 1 vector x 7 pixels rather than stencil tiles, and the
    // model 1.049x and 1.04x (11 rounds side by side each way, Zen 4).
    if (!r.same_as(t) && tile.pixels < lanes - 1 && calls_a_function(t) && !epilogue_along_channels(t))
      return std::nullopt;
    // The larger operand's blocks outermost (by size alone; a plane tile weighs the bytes each order reads again,
    // reused_operand_axes, not measured for channel tiles), except for a grouped
    // convolution (loop order in channel_loops). ResNeXt's stride-2 256 -> 512 downsampling (X 3.2 MB, W 512 KB),
    // AVX2 code: 10.3 ms for its profile interval so, 13.1 with the channels' blocks outermost.
    if (grouped_indices.empty() && knobs().reuse_operand_order) {
      int64_t weight_bytes = 0, map_bytes = 0;
      for (const auto& [tensor, indices] : reads) {
        const int64_t bytes = tensor->num_elements() * dtype_bytes(tensor->dtype);
        if (tensor->name == tile.weight)
          weight_bytes = bytes;
        else
          map_bytes = std::max(map_bytes, bytes);
      }
      tile.map_first = map_bytes > weight_bytes;
    }
    if (grouped_indices.empty()) registers_tile_of_shifted_pixels(t, r, tile);
    auto packed = packs_.find(tile.weight);
    if (packed != packs_.end() && packed->second != std::pair{tile.weight_dim, tile.vectors * lanes})
      return std::nullopt;  // packed otherwise for another reader
    return tile;
  }

  // With AVX2, where the weight outweighs the map (the channels' blocks outermost), BLIS's 6 x 16 as a channel tile: 2
  // vectors of channels x 6 pixels, all in registers, over the whole plane of each block of channels, the last block
  // shifted back where 6 pixels do not divide the plane (a shifted split; where it recomputes at most one pixel in
  // 16). Pixels of a tile across two rows are no box of the plane, so the host computes the reduction for the whole
  // plane of its block of channels and the plane's blocks are a serial loop of the reduction. Not with an epilogue
  // along the channels (not measured). One 1024 -> 1024 convolution on a 14 x 14 map in a harness (Zen 3, 2 threads):
  // 120 GFLOP/s as 1 vector x 14 pixels, 138-142 as 2 x 6 (the twenty-ninth session's, docs/peers.md).
  void registers_tile_of_shifted_pixels(const Tensor& t, const Tensor& r, ChannelTile& tile) {
    constexpr int64_t kRegisterPixels = 6, kVectors = 2;
    const int64_t lanes = options_.simd_fp32_lanes;
    const size_t n = r->axes.size();
    const int64_t plane = r->axes[n - 2].extent * r->axes[n - 1].extent;
    const int64_t overlap = (kRegisterPixels - plane % kRegisterPixels) % kRegisterPixels;
    if (lanes != kAvx2VectorLanes || knobs().accumulator_vectors != 0 || knobs().channel_vectors != 0 ||
        tile.map_first || r->axes[n - 3].extent % (kVectors * lanes) != 0 || plane < kRegisterPixels ||
        overlap * 16 > plane || (!r.same_as(t) && epilogue_along_channels(t)))
      return;
    tile.vectors = kVectors;
    tile.pixels = kRegisterPixels;
    tile.plane_inside = true;
    tile.pixels_tail = overlap > 0 ? SplitTail::kShift : SplitTail::kExact;
  }

  // Whether t, with the stages folded into it, calls a math function (an exponential, a tangent, ...) per element.
  bool calls_a_function(const Tensor& t) {
    bool calls = false;
    for_each_call(t, [&](const CallNode*) { calls = true; });
    return calls;
  }

  // Whether a channel tile's host t runs its epilogue along the channels (channel_root): where it calls exp, sigmoid
  // or tanh and nothing else, as a vector map (lower/vector_maps.h), with AVX-512 (which scatters them) and with AVX2
  // where t is stored in blocks of channels (find_channel_blocks: each vector stored whole; the map that pass weighs,
  // while it runs). A scattered AVX2 map would store each lane alone, and another function would leave the loop to `omp
  // simd` with strided stores: neither was measured.
  bool epilogue_along_channels(const Tensor& t) {
    const int64_t lanes = options_.simd_fp32_lanes;
    auto blocked = channel_blocked_.find(t->name);
    bool mapped = lanes == kAvx512VectorLanes ||
                  (lanes == kAvx2VectorLanes &&
                   (t->name == channel_block_candidate_ ||
                    (blocked != channel_blocked_.end() && blocked->second == ChannelBlockRole::kExpanded))),
         calls = false;
    for_each_call(t, [&](const CallNode* call) {
      calls = true;
      mapped =
          mapped && (call->func == MathFunc::kExp || call->func == MathFunc::kSigmoid || call->func == MathFunc::kTanh);
    });
    return calls && mapped;
  }

  // Each call of t's body and of the stages folded into it.
  void for_each_call(const Tensor& t, const std::function<void(const CallNode*)>& visit) {
    auto scan = [&](const Expr& body) {
      for_each_node(body, [&](const Expr& e) {
        if (auto* call = e.as<CallNode>()) visit(call);
      });
    };
    scan(t->body);
    for (const std::string& name : folded_into(t)) scan(program_.find(name)->body);
  }

  // The loops of a channel tile in t: the plane fused and split by the tile's pixels, the channels by its vectors and
  // those by the lanes. outer: the axes before the channels', the channels' and the plane's outer parts.
  // With the plane inside the channels' blocks (ChannelTile::plane_inside): outer, the axes before the channels' and
  // the channels' outer part; the plane split into the tile's pixels only in the reduction (`reduction`), whose loop
  // over the plane's blocks is then serial: TileLoops::tile holds it before the pixels.
  TileLoops channel_loops(const Tensor& t, const ChannelTile& tile, Schedule& s, bool reduction = true) const {
    const size_t n = t->axes.size();
    const std::string c = t->axes[n - 3].name(), plane = t->axes[n - 2].name() + "+" + t->axes[n - 1].name();
    s.fuse(t->name, t->axes[n - 2].name(), t->axes[n - 1].name());
    s.split(t->name, c, tile.vectors * options_.simd_fp32_lanes);
    TileLoops loops;
    for (size_t d = 0; d + 3 < n; ++d) loops.outer.push_back(t->axes[d].name());
    if (tile.plane_inside) {
      loops.outer.push_back(c + ".o");
      if (reduction) {
        s.split(t->name, plane, tile.pixels, tile.pixels_tail);
        loops.tile = {plane + ".o", plane + ".i"};
      } else {
        loops.tile = {plane};
      }
      loops.lanes = c + ".i";
      return loops;
    }
    s.split(t->name, plane, tile.pixels);
    // A grouped convolution's channels' blocks go outermost, as the stage before split its channels: its thread then
    // reads the input channels it wrote. With the plane's blocks outermost (X outweighs W), ResNeXt's 23 grouped 3 x 3
    // convolutions of layer 3 took 6.8 ms in the model's profile, and 3.9 ms so (1.3x as fast alone either way).
    loops.outer.push_back(tile.map_first ? plane + ".o" : c + ".o");
    loops.outer.push_back(tile.map_first ? c + ".o" : plane + ".o");
    loops.tile.push_back(plane + ".i");
    loops.lanes = c + ".i";
    return loops;
  }

  // The reduction's own loops of a channel tile: its lanes split into vectors, the pixels and vectors unrolled inside
  // the reduction (in r's root or where its host computes it).
  void channel_reduction_loops(const Tensor& r, const TileLoops& loops, bool root, Schedule& s) {
    const std::string lanes = loops.lanes;
    s.split(r->name, lanes, options_.simd_fp32_lanes);
    std::vector<std::string> order = loops.outer;
    // The plane's blocks inside the channels' (ChannelTile::plane_inside), outside the reduction.
    if (loops.tile.size() > 1) order.push_back(loops.tile[0]);
    for (const std::string& k : window_axes_first(r)) order.push_back(k);
    order.push_back(loops.tile.back());
    order.push_back(lanes + ".o");
    order.push_back(lanes + ".i");
    s.reorder(r->name, order);
    // No cache_write at the root: the registers hold the tile across the reduction, and the fused plane's pixels
    // are no affine tile of its rows.
    if (root) fused_parallel_loop(r->name, loops.outer, s);
    s.unroll(r->name, loops.tile.back());
    s.unroll(r->name, lanes + ".o");
    s.vectorize(r->name, lanes + ".i");
  }

  // r's reduction axes, those the conditions of its selects use first (a padded border's: the window's ry and rx),
  // then the others in their order (the input channels). A channel tile broadcasts each pixel under its border
  // condition, which then holds for the whole innermost loop, and the compiler works it out once per tap instead of
  // once per tap and input channel. ResNeXt's stem (7 x 7, padded 3) and its grouped 3 x 3 convolutions of 14 x 14 and
  // 7 x 7 maps: the model 1.019x in fp32, 1.065x in bf16 (7 rounds side by side each, Intel Xeon VM).
  std::vector<std::string> window_axes_first(const Tensor& r) {
    std::vector<std::pair<Tensor, std::vector<Expr>>> reads;
    std::vector<Expr> conditions;
    folded_reads(r->body, folded_into(r), reads, &conditions);
    std::vector<std::string> first, rest;
    for (const IterVar& k : r->reduction()->axes) {
      const bool bounded =
          std::any_of(conditions.begin(), conditions.end(), [&](const Expr& c) { return uses_var(c, k.name()); });
      (bounded ? first : rest).push_back(k.name());
    }
    first.insert(first.end(), rest.begin(), rest.end());
    return first;
  }

  void channel_root(const Tensor& t, const Tensor& r, const ChannelTile& tile, Schedule& s) {
    packs_[tile.weight] = {tile.weight_dim, tile.vectors * options_.simd_fp32_lanes};
    TileLoops loops = channel_loops(t, tile, s, r.same_as(t));
    if (r.same_as(t)) return channel_reduction_loops(t, loops, true, s);
    // The host (the convolution's epilogue): its tile's channels then pixels, the pixels vectorized; or, where the
    // epilogue calls exp, sigmoid or tanh (a SiLU's) with AVX-512, or with AVX2 where the map is stored in blocks of
    // channels (epilogue_along_channels), its pixels then
    // channels, the channels vectorized as the accumulators are (lowering then lays the tile out [pixel][channel]),
    // each vector of the result scattered into the channels' planes. Over pixels, a row of 14 or 7 pixels leaves 2 or 9
    // of 16 lanes idle in each exponential.
    hosted_channels_[r->name] = tile;
    const std::string& name = t->name;
    const bool along_channels = epilogue_along_channels(t);
    std::vector<std::string> order = loops.outer;
    order.push_back(along_channels ? loops.tile[0] : loops.lanes);
    order.push_back(along_channels ? loops.lanes : loops.tile[0]);
    // Stored in blocks of channels (find_channel_blocks): each vector of the tile is one block's pixel, stored whole.
    const bool blocked = along_channels && channel_blocked_.count(name);
    if (blocked) {
      s.split(name, loops.lanes, options_.simd_fp32_lanes);
      order.back() = loops.lanes + ".o";
      order.push_back(loops.lanes + ".i");
    }
    s.reorder(name, order);
    fused_parallel_loop(name, loops.outer, s);
    if (blocked) {
      s.unroll(name, loops.lanes + ".o");
      s.vectorize(name, loops.lanes + ".i");
      return;
    }
    s.vectorize(name, along_channels ? loops.lanes : loops.tile[0]);
  }

  // The outer loops of a tile fused, outermost first, into the stage's parallel loop, which a hosted reduction is
  // computed at. Returns its name.
  std::string fused_parallel_loop(const std::string& name, const std::vector<std::string>& outer, Schedule& s) {
    std::string parallel = outer[0];
    for (size_t n = 1; n < outer.size(); ++n) {
      s.fuse(name, parallel, outer[n]);
      parallel += "+" + outer[n];
    }
    s.parallel(name, parallel);
    attach_loop_[name] = parallel;
    return parallel;
  }

  // A root over a tile: the outer loops fused and parallel; inside, r's reduction (when t is r), the tile's loops
  // unrolled and the lanes vectorized. A hosted r follows in attached_loops (hosted_tile_loops).
  void tiled_root(const Tensor& t, const Tensor& r, const TileLoops& loops, Schedule& s) {
    const std::string& name = t->name;
    std::vector<std::string> order = loops.outer;
    if (r.same_as(t))
      for (const IterVar& k : t->reduction()->axes) order.push_back(k.name());
    for (const std::string& inner : loops.tile) order.push_back(inner);
    order.push_back(loops.lanes);
    s.reorder(name, order);
    const std::string parallel = fused_parallel_loop(name, loops.outer, s);
    if (r.same_as(t)) {
      if (knobs().cache_write) s.cache_write(name, parallel);
      for (const std::string& inner : loops.tile) s.unroll(name, inner);
    }
    s.vectorize(name, r.same_as(t) ? loops.lanes : epilogue_lanes(t, loops, s));
  }

  // The loop a host's epilogue vectorizes: the tile's rows fused with the lanes where rows leave lanes idle and the
  // plane is contiguous (plane_is_contiguous), else the lanes. A depthwise 5 x 5 convolution of 1152 channels on a 7 x
  // 7 map with its batch norm and SiLU (EfficientNet's stage 6; Zen 5, 2 cores, the generated kernel in a harness):
  // 0.073 ms with the SiLU over rows of 7 lanes, 0.041 over the 49 pixels of a tile's plane, 0.035 without the SiLU;
  // the EfficientNet ONNX file 1.073x (docs/strategies.md, "Stencils").
  std::string epilogue_lanes(const Tensor& t, const TileLoops& loops, Schedule& s) {
    const size_t n = t->axes.size();
    if (n < 2 || loops.tile.empty() || loops.lanes != t->axes[n - 1].name()) return loops.lanes;
    if (t->axes[n - 1].extent % options_.simd_fp32_lanes == 0) return loops.lanes;
    const std::string& rows = loops.tile.back();
    const std::string& h = t->axes[n - 2].name();
    if ((rows != h && rows != h + ".i") || !plane_is_contiguous(t)) return loops.lanes;
    s.fuse(t->name, rows, loops.lanes);
    return rows + "+" + loops.lanes;
  }

  // A reduction computed inside a tiled root's loop: its outer loops (one iteration each), the reduction, the tile's
  // loops unrolled, the lanes vectorized. With a k_block (StencilTile), k's blocks right inside the first outer loop
  // (the panel's), the rest of the outer loops (the rows') inside them.
  static void hosted_tile_loops(const Tensor& t, const TileLoops& loops, Schedule& s, int64_t k_block = 0) {
    std::vector<std::string> order = loops.outer;
    push_reduction_loops(t, k_block, 1, order, s);
    for (const std::string& inner : loops.tile) order.push_back(inner);
    order.push_back(loops.lanes);
    s.reorder(t->name, order);
    for (const std::string& inner : loops.tile) s.unroll(t->name, inner);
    s.vectorize(t->name, loops.lanes);
  }

  // Values of k per block for an AMX GEMM tile over reduction r (StencilTile::k_block), or 0 for k whole: one reduction
  // axis, more than a block and a multiple of it. A panel's 48 columns x 256 k (24 KB of bf16) stay in L1 while the
  // rows' tiles pass, where a whole k (768 or 3072) streams the panel from L2 for each tile of rows, and AMX's tile
  // loads wait on it: a 128 x 3072 x 768 GEMM alone (one core, its bf16 rows rounded once, 2 MB pages) ran 0.68 ->
  // 0.52 ms so; 128 k per block was slower (1.04 against 1.01 ms in 4 KB pages), 512 too (0.53 against 0.48 ms, K =
  // 3072). BERT in bf16: 1.06x (27.9 -> 26.5 ms, 7 rounds).
  static int64_t amx_k_block(const Tensor& r) {
    constexpr int64_t kAmxKBlock = 256;
    const ReduceNode* reduction = r->reduction();
    if (!reduction || reduction->axes.size() != 1) return 0;
    const int64_t k = reduction->axes[0].extent;
    return k > kAmxKBlock && k % kAmxKBlock == 0 ? kAmxKBlock : 0;
  }

  // Appends t's reduction loops to `order`: k whole, or split by k_block with its blocks at order's position
  // `blocks_at` (after the panel's loop and the loops fused with it) and the blocks' values last.
  static void push_reduction_loops(const Tensor& t, int64_t k_block, size_t blocks_at, std::vector<std::string>& order,
                                   Schedule& s) {
    const std::vector<IterVar>& axes = t->reduction()->axes;
    if (k_block == 0 || axes.size() != 1 || blocks_at > order.size()) {
      for (const IterVar& k : axes) order.push_back(k.name());
      return;
    }
    const std::string& k = axes[0].name();
    s.split(t->name, k, k_block);
    order.insert(order.begin() + std::ptrdiff_t(blocks_at), k + ".o");
    order.push_back(k + ".i");
  }

  // The outer loops whose axis (outer_axis[p] for loop p) the reused operand is indexed by move first, each group in
  // its own order: the parallel loop then runs over that operand's tiles outermost, reading it once.
  static void reused_axes_first(std::vector<std::string>& outer, const std::vector<size_t>& outer_axis,
                                const std::vector<bool>& reused) {
    std::vector<size_t> positions(outer.size());
    std::iota(positions.begin(), positions.end(), 0);
    std::stable_partition(positions.begin(), positions.end(), [&](size_t p) { return bool(reused[outer_axis[p]]); });
    std::vector<std::string> reordered;
    for (size_t p : positions) reordered.push_back(outer[p]);
    outer = reordered;
  }

  // t's loops for a plane tile: its last two axes fused into the plane loop, split into whole rows of the plane when
  // the tile holds fewer, and the channel axis split by the tile's rows.
  TileLoops plane_loops(const Tensor& t, const PlaneTile& tile, Schedule& s) const {
    size_t n = t->axes.size();
    std::string plane = t->axes[n - 2].name() + "+" + t->axes[n - 1].name();
    s.fuse(t->name, t->axes[n - 2].name(), t->axes[n - 1].name());
    TileLoops loops;
    std::vector<size_t> outer_axis;  // the axis each outer loop comes from (n - 2: the plane)
    for (size_t d = 0; d + 2 < n; ++d) {
      const std::string& axis = t->axes[d].name();
      outer_axis.push_back(d);
      if (d != tile.row_axis || tile.rows == 1) {
        loops.outer.push_back(axis);
        continue;
      }
      s.split(t->name, axis, tile.rows);
      loops.outer.push_back(axis + ".o");
      loops.tile.push_back(axis + ".i");
    }
    loops.lanes = plane;
    if (tile.lanes < t->axes[n - 2].extent * t->axes[n - 1].extent) {
      s.split(t->name, plane, tile.lanes);
      loops.outer.push_back(plane + ".o");
      outer_axis.push_back(n - 2);
      loops.lanes = plane + ".i";
    }
    if (knobs().reuse_operand_order && tile.reused_axes.size() == n) {
      // A ResNeXt 1 x 1 convolution of 256 channels on a 56 x 56 map (X 3.2 MB, W 256 KB) ran 2.4x faster with the
      // plane's blocks outside the channels': X is read once instead of once per four channels.
      reused_axes_first(loops.outer, outer_axis, tile.reused_axes);
    }
    return loops;
  }

  void plane_root(const Tensor& t, const Tensor& r, const PlaneTile& tile, Schedule& s) {
    tiled_root(t, r, plane_loops(t, tile, s), s);
    if (!r.same_as(t)) hosted_planes_[r->name] = tile;
  }

  // A sum over a window of an NCHW map (a k x k convolution, padded or not; a batched product whose innermost
  // axis walks its operand), when a plane tile does not apply: the innermost axis w stays whole, one row of the
  // output, and a few channels times a few rows of the plane are computed together, all their accumulators in
  // vector registers across the whole reduction (the C++ printer's spatial tile: 16 lanes per vector, the last one
  // masked, padded borders masked lane by lane). A ResNeXt 3 x 3 grouped convolution of 1024 channels on a 14 x 14
  // map ran at 12 GFLOP/s one row at a time and at 167 four channels x seven rows at once (hand-written, 2 cores).
  //
  // A row wider than the registers hold (a GEMM C[i, j] = sum_k A[i, k] B[k, j] whose B moves along j: BERT's
  // projections as ONNX exports them, 768 or 3072 columns) is cut into panels of a few vectors (`panel` columns, the
  // panel loop outermost, so that each thread's B panel stays in its L2 while the rows of A pass, unless all of B fits
  // half an L2: rows_before_panels), and the rows of A
  // (axis n - 2) are the tile's other side: 8 rows x 3 vectors of 16 lanes with AVX-512, each B vector loaded once per
  // k for 8 FMAs with A's elements broadcast (the BLIS micro-kernel's shape; B's panel copied, `packed` below). A 512^3
  // matmul ran in 4.2 ms with one row of C at a time and 1.2 ms with an 8 x 16 tile (the evolutionary search's best,
  // docs/search.md).
  struct StencilTile {
    int64_t channels = 1;  // of the channel axis (n - 3), computed together
    int64_t rows = 1;      // of the plane's rows (axis n - 2), computed together
    // How the rows' split covers them where `rows` does not divide them: a shifted last block (SplitTail::kShift)
    // computes again the rows it shares with the block before it, and keeps every tile whole.
    SplitTail rows_tail = SplitTail::kExact;
    int64_t panel = 0;  // columns of w per iteration of its panel loop; 0: w whole
    // A panel's operand moving along w (B), copied into a contiguous panel once per iteration of the panel loop,
    // which is then the parallel loop, the rows a serial loop inside it; empty: no copy, the loops fused. Strided by
    // B's whole rows, a panel's k loop touched a new page every iteration: a 128 x 768 x 3072 GEMM ran at 60 GFLOP/s
    // on one core so and at 138 with B copied (cache_read) into a 768 x 48 panel.
    std::string packed;
    // The dimension of `packed` along which the panel runs, when that operand is a weight packed once before the runs
    // (a pack decision, blocks of `panel` columns: no copy per panel); -1: copied per panel.
    int64_t pack_dim = -1;
    // Values of k per block where the reduction is cut into blocks, each running over all the panel's rows (0: k
    // whole): AMX tiles, whose loads from L2 waited on (kAmxKBlock).
    int64_t k_block = 0;
    // A packed panel's axes before the rows run outside its panels, fused with the panel loop (rows_before_panels).
    bool rows_outside_panels = false;
    // The tile's rows come from across the axes before them too (rows_from_across_axes), those axes and the rows'
    // fused into one loop.
    bool rows_across_axes = false;
    // With rows outside the panels: the first axis before the rows split by this many (0: not split), its outer part
    // in the parallel loop and the block's rows computed together (rows_in_blocks).
    int64_t row_block = 0;
  };

  // The panel of a row of `width` columns too wide for the registers: 3 vectors with AVX-512 (24 of 28 accumulators
  // then hold 8 rows), 2 with AVX2 (6 rows of its 12, BLIS's 6 x 16 on Haswell), or fewer where that divides the row;
  // 0 when no whole number of vectors divides it.
  int64_t panel_columns(int64_t width) const {
    const int64_t lanes = options_.simd_fp32_lanes;
    for (int64_t vectors = lanes == kAvx512VectorLanes ? 3 : 2; vectors >= 1; --vectors)
      if (width % (vectors * lanes) == 0) return vectors * lanes;
    return 0;
  }

  // The panel of a GEMM whose B is copied or packed, its rows `height`: knobs.panel_vectors vectors where they divide
  // the row; else, with 16 lanes, the vectors (4 to 1) whose tile fills the most accumulators
  // (outer_product_accumulators) with rows dividing height, then the fewest loads per k (vectors + rows); with 8 lanes,
  // panel_columns or one with more accumulators (below). Swin's maps of 14-token rows and 512 or 2048 columns (no
  // multiple of 48) take 2 vectors x 14 rows: 4 x 7 loads fewer (11 per 28 FMAs against 16) but needs 33 registers.
  // With 16 lanes a tile that loads more per k than it multiplies (one vector: rows + 1 loads for rows FMAs) comes
  // after every tile of at least 8 accumulators that does not: the ONNX LSTM's projection (100 rows, 1024 columns)
  // took 1 vector x 25 rows and ran at 140-150 GFLOP/s, as 4 vectors x 5 rows at 300-340 (Intel Xeon, 2 threads).
  int64_t gemm_panel_columns(int64_t width, int64_t height) const {
    const int64_t lanes = options_.simd_fp32_lanes;
    if (knobs().panel_vectors > 0 && width % (knobs().panel_vectors * lanes) == 0) return knobs().panel_vectors * lanes;
    int64_t best = 0, best_accumulators = 0, best_loads = 0;
    if (lanes != kAvx512VectorLanes) {
      // panel_columns' tile, unless another fills more accumulators (a tie keeps it): Swin's FFN GEMMs on 14-row maps
      // took 2 vectors x 2 rows of AVX2's 12 so (rows divide 14), at 134 GFLOP/s, and 4 x 2 at 203 (now 2 x 7, 14
      // accumulators: outer_product_accumulators); BERT's 3 x 4 (768 and 3072 columns) made its AVX2 form 1.08x
      // (93.5-97.6 against 102.9-104.5 ms).
      best = panel_columns(width);
      if (best == 0) return 0;
      best_accumulators = largest_divisor_up_to(height, accumulator_vectors() / (best / lanes)) * (best / lanes);
    }
    constexpr int64_t kLatencyAccumulators = 8;  // two FMA pipes x four cycles of latency
    auto balanced = [&](int64_t accumulators, int64_t loads) {
      return lanes == kAvx512VectorLanes && loads <= accumulators && accumulators >= kLatencyAccumulators;
    };
    bool best_balanced = best > 0 && balanced(best_accumulators, best_loads);
    for (int64_t vectors = 4; vectors >= 1; --vectors) {
      if (width % (vectors * lanes) != 0) continue;
      const int64_t rows = largest_divisor_up_to(height, outer_product_accumulators(vectors) / vectors);
      const int64_t accumulators = rows * vectors, loads = rows + vectors;
      const bool is_balanced = balanced(accumulators, loads);
      if (best_balanced && !is_balanced) continue;
      if ((is_balanced && !best_balanced) || accumulators > best_accumulators ||
          (accumulators == best_accumulators && loads < best_loads && lanes == kAvx512VectorLanes)) {
        best = vectors * lanes;
        best_accumulators = accumulators;
        best_loads = loads;
        best_balanced = is_balanced;
      }
    }
    return best;
  }

  // narrow_panels: cut the rows into panels (panel_columns) even where a whole row fits the registers, so that
  // channels and rows share the loads (AVX2's 12 accumulators hold one 56-pixel row of 7 vectors, no more).
  std::optional<StencilTile> stencil_tile(const Tensor& t, const Tensor& r, bool narrow_panels = false) {
    size_t n = t->axes.size();
    if (n < 2 || !knobs().stencil_tiles || !same_extents(t, r) || !is_explicit_vector_width(options_.simd_fp32_lanes) ||
        r->reduction()->op != ReduceOp::kSum)
      return std::nullopt;
    const std::string& w = r->axes[n - 1].name();
    // What the printer's spatial tile computes: f32 +, -, * of loads, borders compared by <, <=, >, >=. Anything else
    // would keep the tile's loops as loops, slower than one row at a time.
    std::set<std::string> folded = folded_into(r);
    bool printable = true, bf16_products = false;
    std::vector<Tensor> bodies{r};
    for (const std::string& name : folded) bodies.push_back(program_.find(name));
    for (const Tensor& body : bodies)
      for_each_node(body->body, [&](const Expr& e) {
        if (auto* b = e.as<BinaryNode>(); b && e.dtype() == DType::kFloat32)
          printable &= b->op == BinaryOp::kAdd || b->op == BinaryOp::kSub || b->op == BinaryOp::kMul;
        if (auto* c = e.as<CompareNode>(); c && uses_var(e, w))
          printable &= c->op != CompareOp::kEQ && c->op != CompareOp::kNE;
        // Casts only as bf16 products have them (workloads/bf16_products.h): f32(bf16 value) and bf16(f32 value).
        auto* cast = e.as<CastNode>();
        bf16_products |= cast != nullptr;
        printable &= !e.as<CallNode>() &&
                     (!cast || (cast->dtype == DType::kFloat32 && cast->value.dtype() == DType::kBFloat16) ||
                      (cast->dtype == DType::kBFloat16 && cast->value.dtype() == DType::kFloat32));
      });
    if (!printable) return std::nullopt;
    std::vector<std::pair<Tensor, std::vector<Expr>>> reads;
    folded_reads(r->body, folded, reads);
    // A weight read along w in another dimension than its last (a dense layer's [out, in] weight) is read packed, w's
    // panel innermost, where the panels can be packed: its dimension, or -1.
    int64_t weight_dim = -1;
    for (const auto& [tensor, indices] : reads) {
      for (size_t d = 0; d + 1 < indices.size(); ++d) {
        if (!uses_var(indices[d], w)) continue;
        if (weight_dim >= 0 || !packable_weight(tensor, indices, d, w)) return std::nullopt;
        weight_dim = int64_t(d);
      }
      if (indices.empty() || !uses_var(indices.back(), w)) continue;
      // Contiguous loads, or every other element (a stride-2 window).
      Expr step = simplify(substitute(indices.back(), {{w, r->axes[n - 1].var + int64_t(1)}}) - indices.back());
      if (!is_const_int(step, 1) && !is_const_int(step, 2)) return std::nullopt;
    }
    const int64_t lanes = options_.simd_fp32_lanes, width = t->axes[n - 1].extent;
    StencilTile tile;
    int64_t chunks = (width + lanes - 1) / lanes;
    // A row that fits the registers but leaves room for fewer than 4 of its rows (more than 7 vectors with AVX-512)
    // is cut into panels too where B can be copied: 24 vectors of one row load 25 operands per 24 FMAs, a panel's 8
    // rows x 3 vectors 11. GEMMs of 128 to 448 columns (Swin's first stages as ONNX exports them) ran at 60 GFLOP/s
    // one or two whole rows at a time.
    const int64_t panel = panel_columns(width);
    const bool few_rows =
        chunks > accumulator_vectors() / 4 && panel > 0 && panel < width && !panel_operand(r, folded, reads).empty();
    if (chunks > accumulator_vectors() || weight_dim >= 0 || few_rows || (narrow_panels && n >= 3 && chunks > 1)) {
      tile.panel = panel;
      if (tile.panel == 0 || (weight_dim >= 0 && tile.panel == width)) return std::nullopt;
      chunks = tile.panel / lanes;
    } else if (n < 3) {
      return std::nullopt;
    }
    int64_t budget = accumulator_vectors() / chunks;
    if (budget < 1) return std::nullopt;
    const int64_t channel_extent = n >= 3 ? t->axes[n - 3].extent : 1, height = t->axes[n - 2].extent;
    if (tile.panel > 0) tile.packed = panel_operand(r, folded, reads);
    if (weight_dim >= 0 && tile.packed.empty()) return std::nullopt;  // read in place, its loads would gather
    if (!tile.packed.empty()) {
      tile.panel = gemm_panel_columns(width, height);
      if (tile.panel == width) return std::nullopt;  // one panel: a whole row, which the tile was not planned for
      budget = outer_product_accumulators(tile.panel / lanes) / (tile.panel / lanes);
      // Bf16 products with AMX: an AMX tile's 16 rows (the printer's AMX pair tile) where 16 rows of the panel's
      // vectors fit a pair tile. 16 rows ran 1.5x the registers' 8 in a hand-written 128 x 768 x 3072 AMX GEMM (one
      // core), and BERT's bf16 export 1.10x (36.1 -> 32.7 ms).
      // At most 48 accumulators (16 rows x 3 vectors), as before pair tiles could hold 5 chunks of 16 rows for
      // convolutions: a 4-vector panel keeps 8 rows (the largest divisor of BERT's 128 tokens up to 12).
      if (bf16_products && options_.amx_bf16) {
        budget = std::min(kAmxTileRows, kAmxTileRows * 3 / (tile.panel / lanes));
        tile.k_block = amx_k_block(r);
      }
    }
    if (!tile.packed.empty() && knobs().pack_weights && is_weight(tile.packed)) {  // packed, not copied
      const size_t rank = program_.find(tile.packed)->shape.size();
      tile.pack_dim = weight_dim >= 0 ? weight_dim : int64_t(rank) - 1;
      auto packed = packs_.find(tile.packed);
      if (packed != packs_.end() && packed->second != std::pair{tile.pack_dim, tile.panel}) {
        if (weight_dim >= 0) return std::nullopt;  // packed otherwise for another reader
        tile.pack_dim = -1;
      }
    }
    if (!tile.packed.empty()) {
      // The axes before the rows are more rows of A (a 14 x 14 map of tokens times W): serial loops inside the panel,
      // which alone is parallel, or outside the panels where the weight fits half an L2 (rows_before_panels); a tile
      // of AMX rows may take them from across those axes (rows_from_across_axes).
      tile.rows = largest_divisor_up_to(height, budget);
      std::vector<std::string> serial;
      for (size_t d = 0; d + 2 < n; ++d)
        if (t->axes[d].extent > 1) serial.push_back(t->axes[d].name());
      tile.rows_outside_panels = rows_before_panels(t, r, tile, serial);
      if (bf16_products && options_.amx_bf16 && tile.pack_dim >= 0 && !weight_fits_half_an_l2(t, r, tile)) {
        if (int64_t rows = rows_from_across_axes(t, r, reads, height, budget); rows > tile.rows) {
          tile.rows = rows;
          tile.rows_across_axes = true;
        }
      } else if (bf16_products && options_.amx_bf16 && tile.rows_outside_panels && !r.same_as(t)) {
        if (auto [block, rows] = rows_in_blocks(t, r, reads, height, budget); rows > tile.rows) {
          tile.rows = rows;
          tile.row_block = block;
          tile.rows_across_axes = true;
        }
      } else if (!(bf16_products && options_.amx_bf16)) {
        registers_tile_of_shifted_rows(t, r, reads, height, tile);
      }
    } else {
      // Channels share the loads of what moves along w only where it is not their own slice: a convolution's input
      // (all its output channels read it, or a group's, at c / 4 * 4 + k), not the keys or values of attention's
      // heads (K[h, k, w], V[k, h * 64 + w]: an affine index in h). There rows share them instead: ONNX BERT's q . k^T
      // ran 3 heads x 1 row at a time at 162 GFLOP/s.
      auto own_slice = [&](const std::pair<Tensor, std::vector<Expr>>& read) {
        const std::vector<Expr>& indices = read.second;
        if (n < 3 || indices.empty() || !uses_var(indices.back(), w)) return false;
        for (const IterVar& k : r->reduction()->axes)  // a window along w (a depthwise convolution's): channels
          if (uses_var(indices.back(), k.name())) return false;  // measured 0.97x with rows instead
        const std::string& channel = r->axes[n - 3].name();
        return std::any_of(indices.begin(), indices.end(), [&](const Expr& index) {
          std::optional<AffineForm> form = as_affine(simplify(index));
          return form && form->coeffs.count(channel) && form->coeffs.at(channel) != 0;
        });
      };
      const bool own_slices = std::any_of(reads.begin(), reads.end(), own_slice);
      tile.channels =
          own_slices ? 1 : largest_divisor_up_to(channel_extent, std::min<int64_t>(knobs().register_tile, budget));
      if (tile.channels == channel_extent) tile.channels = 1;  // split only: whole, it would leave few iterations
      tile.rows = largest_divisor_up_to(height, budget / tile.channels);
      const int64_t panels = tile.panel ? width / tile.panel : 1;
      int64_t iterations = t->num_elements() / width * panels / tile.channels / tile.rows;
      while (tile.rows > 1 && iterations < knobs().min_stencil_iterations) {
        tile.rows = largest_divisor_up_to(height, tile.rows - 1);
        iterations = t->num_elements() / width * panels / tile.channels / tile.rows;
      }
    }
    if (tile.channels * tile.rows == 1) return std::nullopt;
    return tile;
  }

  // AMX tiles of a packed panel over rows too short for them (Swin's windows: rows of 7 tokens, 7 rows a window; or
  // windows of 49 tokens, [windows, 49, k], as its ONNX file has them) take rows from across the axes before the rows,
  // where the panels run outside all of them (the weight more than half an L2, whatever reuse_operand_order says):
  // those axes and the rows' are fused and split by the tile's rows, the most that fit its 16 (the caller keeps the
  // larger of these and its own). Each tile row's index must stay affine once split: every read using those axes reads
  // them contiguously (A[.., w, t, ..] with t's extent the rows'), and the tile takes whole rows of the map (two of 7
  // tokens: 14), or, across one axis only, any rows (14 of 196), whose w * 49 + t the simplifier puts back together.
  // Swin's third-stage Q K V GEMMs (196 tokens in 4 windows) in bf16: built in 1.020-1.021x (7 and 9 rounds side by
  // side), ONNX file 1.037x (7 rounds) with 14-row tiles instead of 7. The first two stages' GEMMs and the third's
  // projection run their rows first; the fourth stage has one window.
  int64_t rows_from_across_axes(const Tensor& t, const Tensor& r,
                                const std::vector<std::pair<Tensor, std::vector<Expr>>>& reads, int64_t height,
                                int64_t budget) const {
    const size_t n = t->axes.size();
    const std::vector<size_t> serial = axes_fusable_with_rows(t, r, reads);
    if (serial.empty()) return 0;
    const int64_t all_rows = t->num_elements() / t->axes[n - 1].extent;
    int64_t rows = budget >= 2 * height ? height * largest_divisor_up_to(all_rows / height, budget / height) : 0;
    if (serial.size() == 1) rows = std::max(rows, largest_divisor_up_to(all_rows, budget));
    return rows;
  }

  // Where the rows run outside the panels, AMX tiles over short rows (Swin's first stages' windows of 7 x 7 tokens)
  // take whole rows from a block of the first axis before them: that axis split by the fewest that give a tile of
  // two rows or more, its outer part in the parallel loop, and the block's rows fused and split by the tile's. Returns
  // the block and the tile's rows, {0, 0} where none. Swin's first two stages' Q K V and projections and the third's
  // projection, two windows per parallel step in 14-row tiles (edited by hand first): bf16 1.030x (7 rounds).
  std::pair<int64_t, int64_t> rows_in_blocks(const Tensor& t, const Tensor& r,
                                             const std::vector<std::pair<Tensor, std::vector<Expr>>>& reads,
                                             int64_t height, int64_t budget) const {
    const std::vector<size_t> serial = axes_fusable_with_rows(t, r, reads);
    if (serial.empty() || budget < 2 * height) return {0, 0};
    int64_t others = 1;  // rows of one iteration of the first axis
    for (size_t i = 1; i < serial.size(); ++i) others *= t->axes[serial[i]].extent;
    const int64_t first = t->axes[serial[0]].extent;
    for (int64_t block = 1; block < first; ++block) {
      if (first % block != 0) continue;
      const int64_t rows = height * largest_divisor_up_to(block * others, budget / height);
      if (rows >= 2 * height) return {block, rows};
    }
    return {0, 0};
  }

  // With AVX2, a tile of 2 vectors x 7 rows (14 accumulators, the second vector of B read from memory in each FMA:
  // outer_product_accumulators) becomes BLIS's 6 x 16: 2 vectors x 6 rows, all in registers (12 accumulators, B's two
  // vectors, the broadcast), over the rows fused across the axes before them where the reads allow
  // (axes_fusable_with_rows), the last block shifted back where 6 rows do not divide them. Only where the shifted
  // block recomputes at most one row in 16. Swin's third stage's first FFN GEMM (196 x 512 x 2048, GELU) alone in a
  // harness of ingot's code (Zen 3, 2 threads, min of 60 runs): 111 GFLOP/s as 2 x 7, 165 as 2 x 6 shifted.
  void registers_tile_of_shifted_rows(const Tensor& t, const Tensor& r,
                                      const std::vector<std::pair<Tensor, std::vector<Expr>>>& reads, int64_t height,
                                      StencilTile& tile) const {
    constexpr int64_t kRegisterRows = 6;
    const int64_t lanes = options_.simd_fp32_lanes;
    if (lanes != kAvx2VectorLanes || knobs().accumulator_vectors != 0 || knobs().panel_vectors != 0 ||
        tile.panel != 2 * lanes || tile.rows * 2 <= accumulator_vectors() || tile.rows_outside_panels)
      return;
    const bool across = !axes_fusable_with_rows(t, r, reads).empty();
    const int64_t rows = across ? t->num_elements() / t->axes.back().extent : height;
    const int64_t overlap = (kRegisterRows - rows % kRegisterRows) % kRegisterRows;
    if (rows < kRegisterRows || overlap * 16 > rows) return;
    tile.rows = kRegisterRows;
    tile.rows_across_axes = across;
    tile.rows_tail = overlap > 0 ? SplitTail::kShift : SplitTail::kExact;
  }

  // The axes before the rows (of more than one iteration) that a tile may fuse with them, outermost first: all of
  // them, after the axes of one iteration (which the panel loop takes, packed_panel_root), read contiguously with the
  // rows by every read using them (reads_contiguously_across); empty where they are not.
  static std::vector<size_t> axes_fusable_with_rows(const Tensor& t, const Tensor& r,
                                                    const std::vector<std::pair<Tensor, std::vector<Expr>>>& reads) {
    const size_t n = t->axes.size();
    std::vector<size_t> serial;
    for (size_t d = 0; d + 2 < n; ++d) {
      if (t->axes[d].extent > 1)
        serial.push_back(d);
      else if (!serial.empty())
        return {};
    }
    std::vector<std::string> fused;
    for (size_t d : serial) fused.push_back(r->axes[d].name());
    fused.push_back(r->axes[n - 2].name());
    if (serial.empty() || !reads_contiguously_across(reads, r, fused)) return {};
    return serial;
  }

  // Whether every read that uses any of the axes `fused` (r's, outermost first) reads each alone, in consecutive
  // dimensions in their order, those after the first as long as the axes, and none elsewhere: its index is then
  // affine in the fused loop's.
  static bool reads_contiguously_across(const std::vector<std::pair<Tensor, std::vector<Expr>>>& reads, const Tensor& r,
                                        const std::vector<std::string>& fused) {
    auto extent = [&](const std::string& axis) {
      for (const IterVar& a : r->axes)
        if (a.name() == axis) return a.extent;
      return int64_t(-1);
    };
    auto uses_any = [&](const Expr& e) {
      return std::any_of(fused.begin(), fused.end(), [&](const std::string& axis) { return uses_var(e, axis); });
    };
    for (const auto& [tensor, indices] : reads) {
      if (std::none_of(indices.begin(), indices.end(), uses_any)) continue;
      bool found = false;
      for (size_t first = 0; first + fused.size() <= indices.size() && !found; ++first) {
        bool here = true;
        for (size_t a = 0; a < fused.size() && here; ++a) {
          const auto* v = indices[first + a].as<VarNode>();
          here = v && v->name == fused[a] && (a == 0 || tensor->shape[first + a] == extent(fused[a]));
        }
        for (size_t other = 0; other < indices.size() && here; ++other)
          if ((other < first || other >= first + fused.size()) && uses_any(indices[other])) here = false;
        found = here;
      }
      if (!found) return false;
    }
    return true;
  }

  // The operand a GEMM's panel copies: the one placeholder that r reads along w, when its reads use no axis of r before
  // the rows (the same weights for every token); "" otherwise.
  std::string panel_operand(const Tensor& r, const std::set<std::string>& folded,
                            const std::vector<std::pair<Tensor, std::vector<Expr>>>& reads) const {
    const size_t n = r->axes.size();
    std::string operand;
    for (const auto& [tensor, indices] : reads) {
      if (std::none_of(indices.begin(), indices.end(),
                       [&](const Expr& index) { return uses_var(index, r->axes[n - 1].name()); }))
        continue;
      if (!tensor->is_placeholder() || folded.count(tensor->name) || (!operand.empty() && operand != tensor->name))
        return "";
      for (const Expr& index : indices)
        for (size_t d = 0; d + 2 < n; ++d)
          if (uses_var(index, r->axes[d].name())) return "";
      operand = tensor->name;
    }
    return operand;
  }

  // Whether reduction t reads a weight along its last axis w in another dimension than the weight's last, which its
  // stencil tile packs in panels of w (stencil_tile): a dense layer's [out, in] weight, whose register tile is then
  // an outer product (8 rows x 3 vectors of w with AVX-512) instead of dot products along the reduction.
  bool packs_weight_panels(const Tensor& t) const {
    const size_t n = t->axes.size();
    if (!t->reduction() || n < 2 || options_.gpu || !knobs().stencil_tiles ||
        !is_explicit_vector_width(options_.simd_fp32_lanes))
      return false;
    const int64_t width = t->axes[n - 1].extent, panel = panel_columns(width);
    if (panel == 0 || panel == width) return false;
    const std::string& w = t->axes[n - 1].name();
    bool found = false;
    for_each_node(t->body, [&](const Expr& e) {
      auto* read = e.as<TensorReadNode>();
      if (!read) return;
      for (size_t d = 0; d + 1 < read->indices.size(); ++d)
        found |= uses_var(read->indices[d], w) && packable_weight(read->tensor, read->indices, d, w);
    });
    return found;
  }

  bool is_weight(const std::string& tensor) const {
    return std::find(options_.weights.begin(), options_.weights.end(), tensor) != options_.weights.end();
  }

  // Whether `tensor`, read at `indices` with w in dimension d (not its last), may be packed so that w's panel runs
  // innermost: a weight, with the knob on, read at w itself there and nowhere else along w.
  bool packable_weight(const Tensor& tensor, const std::vector<Expr>& indices, size_t d, const std::string& w) const {
    if (!knobs().pack_weights || !tensor->is_placeholder() || !is_weight(tensor->name)) return false;
    const auto* v = indices[d].as<VarNode>();
    if (!v || v->name != w) return false;
    for (size_t other = 0; other < indices.size(); ++other)
      if (other != d && uses_var(indices[other], w)) return false;
    return true;
  }

  // t's loops for a stencil tile: the channel axis split by the tile's channels and the plane's rows by its rows,
  // both inner parts in the tile; w whole, or split into panels whose loop is the outermost.
  static TileLoops stencil_loops(const Tensor& t, const StencilTile& tile, Schedule& s) {
    size_t n = t->axes.size();
    TileLoops loops;
    const std::string& w = t->axes[n - 1].name();
    const bool panels = tile.panel > 0 && tile.panel < t->axes[n - 1].extent;
    if (panels) {
      s.split(t->name, w, tile.panel);
      loops.outer.push_back(w + ".o");
    }
    if (tile.rows_across_axes) {  // the axes of one iteration outside, the others fused with the rows' and split
      std::string rows;
      for (size_t d = 0; d + 1 < n; ++d) {
        const std::string& axis = t->axes[d].name();
        if (t->axes[d].extent == 1 && rows.empty()) {
          loops.outer.push_back(axis);
          continue;
        }
        if (!rows.empty()) s.fuse(t->name, rows, axis);
        rows = rows.empty() ? axis : rows + "+" + axis;
      }
      s.split(t->name, rows, tile.rows, tile.rows_tail);
      loops.outer.push_back(rows + ".o");
      loops.tile.push_back(rows + ".i");
      loops.lanes = panels ? w + ".i" : w;
      return loops;
    }
    for (size_t d = 0; d + 1 < n; ++d) {
      const std::string& axis = t->axes[d].name();
      int64_t inner = d == n - 3 ? tile.channels : d == n - 2 ? tile.rows : 1;
      if (inner == 1) {
        loops.outer.push_back(axis);
      } else if (inner == t->axes[d].extent) {
        loops.tile.push_back(axis);
      } else {
        s.split(t->name, axis, inner, d == n - 2 ? tile.rows_tail : SplitTail::kExact);
        loops.outer.push_back(axis + ".o");
        loops.tile.push_back(axis + ".i");
      }
    }
    loops.lanes = panels ? w + ".i" : w;
    return loops;
  }

  void stencil_root(const Tensor& t, const Tensor& r, const StencilTile& tile, Schedule& s) {
    if (!r.same_as(t)) hosted_stencils_[r->name] = tile;
    if (tile.pack_dim >= 0) packs_[tile.packed] = {tile.pack_dim, tile.panel};
    if (!tile.packed.empty()) {
      pad_rows_in_one_l1_set(r, tile);
      return packed_panel_root(t, r, tile, s);
    }
    tiled_root(t, r, stencil_loops(t, tile, s), s);
  }

  // A root over panels whose operand is copied: the panel loop (fused with the axes of one iteration before the rows)
  // parallel, the copy at its top (t is r), or r computed there for the panel's rows (hosted_tile_loops, then the copy
  // in attached_loops); inside, the other axes before the rows and the rows serial, r's reduction, the tile's rows
  // unrolled and the lanes vectorized.
  //
  // Where the packed weight fits half an L2, the axes before the rows come first instead, fused with the panel loop
  // (StencilTile::rows_outside_panels); where the tile's rows come from across them (rows_across_axes), they are fused
  // with the rows (stencil_loops), t's own where t is r.
  void packed_panel_root(const Tensor& t, const Tensor& r, const StencilTile& tile, Schedule& s) {
    const std::string& name = t->name;
    const size_t n = t->axes.size();
    const std::string w = t->axes[n - 1].name();
    std::vector<std::string> single, serial;
    for (size_t d = 0; d + 2 < n; ++d) (t->axes[d].extent == 1 ? single : serial).push_back(t->axes[d].name());
    std::vector<std::string> fused{w + ".o"};  // the loops fused into the parallel loop, in order
    fused.insert(fused.end(), single.begin(), single.end());
    if (tile.rows_across_axes && r.same_as(t)) {
      serial.clear();                                             // fused with the rows (stencil_loops)
    } else if (tile.rows_outside_panels && tile.row_block > 0) {  // r computes a block's rows (rows_in_blocks)
      s.split(name, serial[0], tile.row_block);
      fused.insert(fused.begin(), serial[0] + ".o");
      serial[0] += ".i";
    } else if (tile.rows_outside_panels) {
      fused.insert(fused.begin(), serial.begin(), serial.end());
      serial.clear();
    }
    std::vector<std::string> order = fused;
    order.insert(order.end(), serial.begin(), serial.end());
    TileLoops loops;
    if (r.same_as(t)) {
      loops = stencil_loops(t, tile, s);  // outer: w.o, the axes before the rows (or the fused rows'), the rows' outer
      for (const std::string& loop : loops.outer)
        if (std::find(order.begin(), order.end(), loop) == order.end()) order.push_back(loop);
      push_reduction_loops(t, tile.k_block, fused.size(), order, s);
      for (const std::string& inner : loops.tile) order.push_back(inner);
    } else {
      s.split(name, w, tile.panel);
      order.push_back(t->axes[n - 2].name());
      loops.lanes = w + ".i";
    }
    order.push_back(loops.lanes);
    s.reorder(name, order);
    std::string parallel = fused.front();
    for (size_t i = 1; i < fused.size(); ++i) {
      s.fuse(name, parallel, fused[i]);
      parallel += "+" + fused[i];
    }
    s.parallel(name, parallel);
    if (r.same_as(t)) {
      if (tile.pack_dim < 0) s.cache_read(name, tile.packed, MemoryScope::kLocal, parallel);
      for (const std::string& inner : loops.tile) s.unroll(name, inner);
    }
    s.vectorize(name, loops.lanes);
    attach_loop_[name] = parallel;
  }

  // A packed panel's tile broadcasts one element of each of its rows of A per k. Where A's rows lie a multiple of 4 KB
  // apart, all of them fall in one set of the L1 cache (4 KB of 64-byte lines per way on the x86 cores we know: 32 KB
  // 8-way, 48 KB 12-way), and more rows than its 8 ways evict each other at every line of k. A, stored by another
  // stage and read by the GEMM's stage alone, then gets a line more per row (a pad decision): fp32, or bf16 rows
  // rounded once where the target has no AMX (vdpbf16ps tiles: Swin in bf16 1.064x, 7 rounds side by side, Zen 4; AMX
  // tile loads were not measured so). A's writer, decided after its readers, no longer takes its rows as one contiguous
  // plane (plane_is_contiguous).
  // Swin's second FFN GEMM in its third stage (A 196 x 2048, 14 rows at 8 KB, Zen 4 with its 1 MB L2), alone in a
  // harness: 2.36-2.47 -> 1.83-1.87 ms (170 -> 223 GFLOP/s); 7 rows at 16 KB or 14 at 2 KB: unchanged.
  void pad_rows_in_one_l1_set(const Tensor& r, const StencilTile& tile) {
    constexpr int64_t kLineBytes = 64, kL1Sets = 64, kL1Ways = 8;
    const size_t n = r->axes.size();
    if (!knobs().pad_rows || n < 2 || tile.rows <= kL1Ways || tile.rows_across_axes) return;
    const std::string& row = r->axes[n - 2].name();
    const std::vector<std::pair<Tensor, std::vector<Expr>>> reads = reads_of(r);
    for (const auto& [a, indices] : reads) {
      if (a->name == tile.packed || a->is_placeholder() || program_.is_output(a) || packs_.count(a->name) ||
          (a->dtype != DType::kFloat32 && (!is_bf16_rounding(a) || is_bf16_pairs(a) || options_.amx_bf16)) ||
          indices.size() < 2 || stage_of_.at(a->name) == stage_of_.at(r->name))
        continue;  // not stored by another stage in a layout of ours
      // Read by the GEMM's stage alone: no other reader's loops were planned on A's rows being dense.
      const std::vector<Tensor> readers = program_.readers(a);
      if (std::any_of(readers.begin(), readers.end(),
                      [&](const Tensor& reader) { return stage_of_.at(reader->name) != stage_of_.at(r->name); }))
        continue;
      auto most_rows_in_one_set = [&](const std::vector<int64_t>& shape) -> int64_t {
        std::optional<AffineForm> form = as_affine(simplify(flat_index(indices, shape)));
        if (!form || !form->coeffs.count(row)) return 0;
        const int64_t stride = std::abs(form->coeffs.at(row)) * dtype_bytes(a->dtype);
        std::map<int64_t, int64_t> rows_in_set;
        int64_t most = 0;
        for (int64_t i = 0; i < tile.rows; ++i) most = std::max(most, ++rows_in_set[i * stride / kLineBytes % kL1Sets]);
        return most;
      };
      std::vector<int64_t> padded = a->shape;
      padded.back() += kLineBytes / dtype_bytes(a->dtype);
      if (most_rows_in_one_set(a->shape) > kL1Ways && most_rows_in_one_set(padded) <= kL1Ways)
        pads_[a->name] = padded.back() - a->shape.back();
    }
  }

  // Whether a packed panel GEMM's axes before its rows (`serial`, more rows of A) go outside its panels: where the
  // packed weight fits half of one core's L2. Each block of A's rows then stays in L1 while the weight's panels pass
  // from L2 as contiguous loads, where the panels outside stream A's rows (broadcasts from up to 14 rows) once per
  // panel and host a buffer of all rows. Swin's GEMMs with weights of 64 KB to 1 MB, in the model's profile (Intel Xeon
  // VM, 2 threads): the first stage's (3136 tokens of 128 channels) FFN GEMM and GELU 2.25-2.53 -> 1.60-1.68 ms, Q K V
  // 1.73-1.80 -> 0.93-1.01; the second stage's (784 tokens, A 0.8 MB, W 1 MB) FFN GEMM 1.65-1.69 ->
  // 1.35-1.44, Q K V 1.24-1.30 -> 0.91-0.93.
  bool rows_before_panels(const Tensor& t, const Tensor& r, const StencilTile& tile,
                          const std::vector<std::string>& serial) const {
    return !serial.empty() && knobs().reuse_operand_order && weight_fits_half_an_l2(t, r, tile);
  }

  // Whether a packed panel's weight (all its panels) fits half of one core's L2, where the target knows it.
  bool weight_fits_half_an_l2(const Tensor& t, const Tensor& r, const StencilTile& tile) const {
    if (tile.pack_dim < 0 || options_.l2_bytes <= 0) return false;
    int64_t k = 1;
    for (const IterVar& axis : r->reduction()->axes) k *= axis.extent;
    const int64_t weight_bytes = t->axes.back().extent * k * dtype_bytes(program_.find(tile.packed)->dtype);
    return weight_bytes <= options_.l2_bytes / 2;
  }

  void cpu_root(const Tensor& t, Schedule& s) {
    const std::string& name = t->name;
    if (auto blocked = channel_blocked_.find(name);
        blocked != channel_blocked_.end() &&
        (blocked->second == ChannelBlockRole::kEpilogue || blocked->second == ChannelBlockRole::kMap ||
         blocked->second == ChannelBlockRole::kPool))
      return channel_block_root(t, blocked->second, s);
    // A tensor of bf16 pairs: each pixel's pair of channels written together, the pixels of a row vectorized, or of
    // the whole plane where the input's plane is contiguous: ResNeXt's 66 pair stages in bf16 took 6.6 ms so by rows,
    // 4.3 so by planes (a 14 x 14 map's pairs 0.085 -> 0.045 ms).
    if (is_bf16_pairs(t) && t->axes.size() >= 4) {
      const size_t n = t->axes.size();
      std::vector<std::string> outer;
      std::string pixels = t->axes[n - 2].name();
      if (pairs_plane_is_contiguous(t)) {
        s.fuse(name, t->axes[n - 3].name(), pixels);
        pixels = t->axes[n - 3].name() + "+" + pixels;
      } else {
        outer.push_back(t->axes[n - 3].name());
      }
      for (size_t d = n - 3; d-- > 0;) outer.insert(outer.begin(), t->axes[d].name());
      fused_parallel_loop(name, outer, s);
      s.vectorize(name, pixels);
      s.unroll(name, t->axes[n - 1].name());
      return;
    }
    // A reduction along memory whose weight is read along w in another dimension than its last (a linear layer's
    // [out, in]): the panels' outer products with the weight packed, where its stencil tile packs it (else dot
    // products along k, below).
    if (Tensor r = hosted_panel_reduction(t))
      if (std::optional<StencilTile> tile = stencil_tile(t, r); tile && tile->pack_dim >= 0) {
        panel_packed_.insert(r->name);
        return stencil_root(t, r, *tile, s);
      }
    if (!hosted_reduction_along_memory(t)) {
      if (Tensor r = hosted_reduction(t, InnerLoops::kVectorizeSpatial)) {
        // A channel tile only where the other tile's rows leave lanes idle. A plane tile whose rows fill their
        // vectors stays: ResNeXt's 1 x 1 convolutions on 56 x 56 and 28 x 28 maps (rows of 112 lanes) ran at 84% of
        // the FMA peak so, and 0.94x and 0.97x as channel tiles. So does a stencil tile (no plane tile) over rows of
        // whole vectors: EfficientNet's 144 -> 24 convolution on a 56 x 56 map as a 3-vector x 4-pixel channel tile
        // made the model 0.95x (AVX2).
        std::optional<PlaneTile> plane = plane_tile(t, r);
        const int64_t lanes = plane ? plane->lanes : t->axes.back().extent;
        if (lanes % options_.simd_fp32_lanes != 0)
          if (std::optional<ChannelTile> tile = channel_tile(t, r)) return channel_root(t, r, *tile, s);
        if (plane) return plane_root(t, r, *plane, s);
        if (std::optional<StencilTile> tile = stencil_tile(t, r)) return stencil_root(t, r, *tile, s);
        // Neither fits two channels or rows in the registers (AVX2's 12 accumulators, rows of 56 pixels: 7 vectors):
        // a channel tile, else a stencil tile over panels of the rows. The plain loops keep a row's accumulators in
        // memory, and with a padded window do not vectorize: ResNeXt's first-stage 1 x 1 and grouped 3 x 3
        // convolutions ran 5x and 50x slower with AVX2 than with AVX-512 so.
        if (std::optional<ChannelTile> tile = channel_tile(t, r)) return channel_root(t, r, *tile, s);
        if (std::optional<StencilTile> tile = stencil_tile(t, r, true)) return stencil_root(t, r, *tile, s);
      }
      // A strided 1 x 1 convolution runs its reduction along the weight's rows: its spatial loop was unrolled
      // because vectorized it gathers, and the stencil tile's loads pick the even elements of two vectors instead.
      // A channel tile broadcasts its pixels wherever they lie: the profile's three intervals of ResNeXt that hold
      // its downsampling convolutions (to 28 x 28, 14 x 14 and 7 x 7 maps, each with a block's first 1 x 1
      // convolution) took 7.9 ms with channel tiles against 10.4 with stencil tiles, the model 1.027x (three runs each
      // of two binaries in turn). So does a strided window whose rows fill their vectors, where the stencil tile would
      // pick every other element of two vectors per load: ResNeXt's 7 x 7 stride-2 stem (3 -> 64 channels, 112 x 112
      // out) 1.17x and 1.30x as a channel tile (2 vectors x 14 pixels; 7 rounds side by side, Intel Xeon VM), its
      // AVX2 form 2.2x.
      if (Tensor r = hosted_reduction(t, InnerLoops::kUnrollSpatial)) {
        if (std::optional<ChannelTile> tile = channel_tile(t, r)) return channel_root(t, r, *tile, s);
        if (std::optional<StencilTile> tile = stencil_tile(t, r)) return stencil_root(t, r, *tile, s);
        // A window no stencil tile reads (Swin's 4 x 4 patches at stride 4): the plain loops load the map with that
        // stride, one output pixel at a time. A channel tile broadcasts each pixel, and its gathers and scatters cost
        // less than those loads even over a short reduction.
        if (std::optional<ChannelTile> tile = channel_tile(t, r, 1)) return channel_root(t, r, *tile, s);
      }
    }
    if (t->reduction() && one_output_axis(t) && inner_loops(t) == InnerLoops::kVectorizeReduction)
      if (Tensor reader; int64_t period = gate_period(t, reader)) return gate_aligned_gemv(t, period, reader, s);
    std::vector<std::string> outer;
    std::vector<size_t> outer_axis;  // the axis each outer loop comes from
    std::string vector_axis;
    int64_t vector_extent = 0;
    std::vector<bool> operand_axes;
    Tensor hosted = hosted_reduction_along_memory(t);
    if (hosted && t->axes.size() > 1) operand_axes = axes_of_the_reused_operand(hosted);
    // Rows of the other operand (activations) computed together, a 2-D register tile with the weight rows: the
    // innermost outer axis the reused operand does not index, split by up to knobs.register_tile.
    int row_axis = -1;
    std::string row_loop;
    // Only a split axis: a whole one would leave the parallel loop without its iterations (C[4, 64]).
    for (int n = int(operand_axes.size()) - 2; n >= 0 && row_axis < 0; --n) {
      int64_t rows = largest_divisor_up_to(t->axes[n].extent, tile_rows());
      if (!operand_axes[n] && rows > 1 && rows < t->axes[n].extent) row_axis = n;
    }
    for (size_t n = 0; n + 1 < t->axes.size(); ++n) {
      const IterVar& axis = t->axes[n];
      if (int(n) != row_axis) {
        outer.push_back(axis.name());
        outer_axis.push_back(n);
        continue;
      }
      s.split(name, axis.name(), largest_divisor_up_to(axis.extent, tile_rows()));
      outer.push_back(axis.name() + ".o");
      outer_axis.push_back(n);
      row_loop = axis.name() + ".i";
    }
    if (!t->axes.empty()) {
      const IterVar& last = t->axes.back();
      // A 1-D output needs an outer loop to spread over the threads, so its axis is always split (by gate_chunk, which
      // a gate GEMV writing it follows).
      const int64_t lanes = last_axis_chunk(t);
      if (!in_gate_chunks(t) && lanes == last.extent) {
        vector_axis = last.name();
        vector_extent = last.extent;
      } else if (lanes > 1) {
        s.split(name, last.name(), lanes);
        outer.push_back(last.name() + ".o");
        outer_axis.push_back(t->axes.size() - 1);
        vector_axis = last.name() + ".i";
        vector_extent = lanes;
      } else {
        outer.push_back(last.name());
        outer_axis.push_back(t->axes.size() - 1);
      }
    }
    if (!operand_axes.empty() && knobs().reuse_operand_order) {
      // The operand's axes (the last one's outer part included) first, the others inside them.
      reused_axes_first(outer, outer_axis, operand_axes);
    }
    if (hosted && !hosted.same_as(t) && !vector_axis.empty()) {
      hosted_tile_[hosted->name] = vector_extent;
      if (!row_loop.empty()) hosted_rows_[hosted->name] = size_t(row_axis);
    }
    InnerLoops inner = t->reduction() ? inner_loops(t) : InnerLoops::kVectorizeSpatial;
    RootLoopNest nest;
    nest.outer = outer;
    nest.fused = outer.size();
    nest.parallel = !outer.empty();
    std::string tile;  // kVectorizeReduction: the unrolled spatial loop inside the reduction
    if (inner == InnerLoops::kVectorizeReduction && !vector_axis.empty())
      tile = register_tile(t, vector_axis, vector_extent, !row_loop.empty(), s, nest.inner);
    bool rows_inside_reduction = inner == InnerLoops::kVectorizeReduction && !tile.empty();
    if (!row_loop.empty()) (rows_inside_reduction ? nest.tile : nest.inner).push_back(row_loop);
    if (auto* r = t->reduction())
      for (const IterVar& k : r->axes) nest.reduction_inner.push_back(k.name());
    if (!tile.empty()) nest.tile.push_back(tile);
    nest.vectorize_reduction = inner == InnerLoops::kVectorizeReduction;
    if (!nest.vectorize_reduction && !vector_axis.empty()) {
      nest.innermost = vector_axis;
      if (vector_extent > 1)
        nest.innermost_kind = inner == InnerLoops::kUnrollSpatial ? RootLoopNest::Innermost::kUnrolled
                                                                  : RootLoopNest::Innermost::kVectorized;
    }
    std::vector<std::string> parallel = arrange_root_loop_nest(name, nest, s);
    if (!parallel.empty()) {
      attach_loop_[name] = parallel.front();
      if (t->reduction() && !vector_axis.empty() && knobs().cache_write) s.cache_write(name, parallel.front());
    }
    mark_root_loop_nest(name, nest, s);
  }

  const TemplateKnobs& knobs() const { return options_.knobs; }

  // Depthwise bands (knobs.band_rows): an expansion (a convolution under its epilogue: EfficientNet's 1 x 1 expand +
  // BN + SiLU, or its 3 x 3 stem) whose map only a depthwise convolution reads, in the plan stage right after it, is
  // computed inside the depthwise convolution's parallel loop: each iteration computes band_rows output rows of 4
  // channels, and before them the expanded rows they read (halo rows included, recomputed by the band above), 4
  // channels x one row at a time, in a register tile. The expanded map, the largest tensor of an MBConv block, is
  // never written to memory. Only where it would not stay in one core's L2: EfficientNet's first expansion, 4.8 MB
  // at 112 x 112, and its stride-2 depthwise convolution took 0.31 + 0.23 ms as two stages, 0.36 ms as a band of 8
  // rows (4 rows: 0.37, 2: 0.41; Zen 5, AVX-512); its stem and first depthwise convolution 0.305 -> 0.25 ms.
  static constexpr int64_t kBandChannels = 4;

  // The TEs of plan stage `stage` other than `stored` and `reduction` are elementwise and will be inlined
  // (kept_fused, as decide() will find; predicted, as they are decided after their readers), and `stored` is stored.
  bool only_epilogue_besides(int stage, const Tensor& stored, const Tensor& reduction) {
    for (const std::string& name : stage_tes_[stage]) {
      if (name == stored->name || name == reduction->name) continue;
      Tensor t = program_.find(name);
      if (t->reduction() || !kept_fused(t)) return false;
    }
    return !fused_into_its_stage(stored);
  }

  // The stored TE of `reduction`'s stage, when it hosts the reduction (reads it at its own coordinates) and the rest
  // of the stage is its epilogue; null otherwise.
  Tensor epilogue_of(const Tensor& reduction) {
    const int stage = stage_of_.at(reduction->name);
    for (const std::string& name : stage_tes_[stage]) {
      Tensor t = program_.find(name);
      if (t->reduction() || fused_into_its_stage(t)) continue;
      const bool hosts =
          hosted_reduction_where(t, [&](const Tensor& r) { return r.same_as(reduction); }).same_as(reduction);
      return hosts && only_epilogue_besides(stage, t, reduction) ? t : Tensor();
    }
    return Tensor();
  }

  static bool is_nchw_map(const Tensor& t) { return t->axes.size() == 4 && t->axes[0].extent == 1; }

  std::optional<DepthwiseBand> depthwise_band(const Tensor& depthwise) {
    const ReduceNode* r = depthwise->reduction();
    if (!r || r->op != ReduceOp::kSum || r->axes.size() != 2 || !is_nchw_map(depthwise)) return std::nullopt;
    Tensor expanded;
    for (const Tensor& input : depthwise->inputs()) {
      if (input->is_placeholder()) continue;
      if (expanded) return std::nullopt;
      expanded = input;
    }
    if (!expanded || expanded->reduction() || !is_nchw_map(expanded) || program_.is_output(expanded) ||
        program_.readers(expanded).size() != 1 || expanded->axes[1].extent != depthwise->axes[1].extent ||
        expanded->axes[1].extent % kBandChannels != 0)
      return std::nullopt;
    const int stage = stage_of_.at(depthwise->name), before = stage_of_.at(expanded->name);
    if (before + 1 != stage || kernel_of_stage_[before] != kernel_of_stage_[stage]) return std::nullopt;
    Tensor expansion =
        hosted_reduction_where(expanded, [](const Tensor& e) { return e->reduction()->op == ReduceOp::kSum; });
    if (!expansion || !only_epilogue_besides(before, expanded, expansion)) return std::nullopt;
    Tensor epilogue = epilogue_of(depthwise);
    if (!epilogue || !is_nchw_map(epilogue)) return std::nullopt;
    // Where the expanded map fits one core's L2 (or L2 is unknown), it comes back from there.
    if (options_.l2_bytes <= 0 || expanded->num_elements() * int64_t(sizeof(float)) <= options_.l2_bytes)
      return std::nullopt;
    std::optional<DepthwiseBand::RowTile> expansion_tile = band_row_tile(expanded->axes[3].extent),
                                          depthwise_tile = band_row_tile(depthwise->axes[3].extent);
    if (!expansion_tile || !depthwise_tile) return std::nullopt;
    const int64_t rows = largest_divisor_up_to(epilogue->axes[2].extent, knobs().band_rows);
    return DepthwiseBand{epilogue, depthwise, expanded, expansion, rows, *expansion_tile, *depthwise_tile};
  }

  // The register tile over a band's rows of `width` pixels that fits the accumulators (and lowering's register tile
  // limit, which a larger accumulator_vectors knob would pass, leaving a plain loop): its 4 channels x the row
  // (AVX-512: 4 x 7 vectors on 112 pixels); else 4 channels x the widest chunk of whole vectors that divides the row
  // (AVX2: 4 x 2 vectors on 112, 4 x 1 on 56); else 2 channels x the row (AVX2: 2 x 3.5 vectors on 28). On AVX2
  // EfficientNet's 56-pixel rows ran 1.05x faster in chunks of one vector than of 14 pixels (two vectors, 6 of 8
  // lanes in the second), the whole model 1.075x against 1.028x over no band (side by side, 11 rounds).
  std::optional<DepthwiseBand::RowTile> band_row_tile(int64_t width) const {
    const int64_t lanes = options_.simd_fp32_lanes, row_vectors = (width + lanes - 1) / lanes;
    const int64_t accumulators = std::min(accumulator_vectors(), max_tile_accumulators(lanes));
    if (kBandChannels * row_vectors <= accumulators) return DepthwiseBand::RowTile{kBandChannels, width};
    for (int64_t vectors = accumulators / kBandChannels; vectors >= 1; --vectors)
      if (width % (vectors * lanes) == 0) return DepthwiseBand::RowTile{kBandChannels, vectors * lanes};
    if (2 * row_vectors <= accumulators) return DepthwiseBand::RowTile{2, width};
    return std::nullopt;
  }

  void find_bands() {
    if (options_.gpu || knobs().band_rows <= 0) return;
    for (const Tensor& t : program_.computes()) {
      std::optional<DepthwiseBand> band = depthwise_band(t);
      if (!band) continue;
      const std::vector<Tensor> members = {band->epilogue, band->depthwise, band->expanded, band->expansion};
      // A TE takes one role: a depthwise convolution whose output another band expands (two in a row) keeps its own.
      if (std::any_of(members.begin(), members.end(), [&](const Tensor& m) { return band_of_.count(m->name) > 0; }))
        continue;
      for (const Tensor& member : members) band_of_[member->name] = bands_.size();
      bands_.push_back(*band);
    }
  }

  static std::string axis(const Tensor& t, size_t d) { return t->axes[d].name(); }

  // Blocks of channels (AVX-512's 16 or AVX2's 8): a channel tile's epilogue along the channels (vectors of output
  // channels under a SiLU: EfficientNet's expansions and head on 14 x 14 and 7 x 7 maps) whose readers can all read it
  // stored in blocks of a vector of channels ([C, H, W] as [C / lanes, H, W, lanes], a pack decision; reads_blocks):
  // the tile then stores each vector whole, where it scattered each lane to its channel's plane. A depthwise
  // convolution that reads it puts channels in its lanes, a row of pixels in its accumulators and its weight packed
  // alike, where its rows of 7 or 14 pixels left lanes idle; its stored epilogue is in blocks too, and so is a
  // squeeze-excitation's scaling of it. EfficientNet's 7 x 7 blocks (1152 channels, 5 x 5 window; one block's schedule
  // edited so by hand against the next block's, one profile, Zen 4): the expansion 0.170 -> 0.130 ms, the depthwise
  // convolution with its pooling 0.055 -> 0.030 ms. Its head, by the strategy: 0.317 -> 0.230 ms. With AVX2 (blocks of
  // 8, the same maps) its AVX2 program ran 1.08x (7 rounds side by side, Zen 4).
  void find_channel_blocks() {
    const int64_t lanes = options_.simd_fp32_lanes;
    if (options_.gpu || !knobs().channel_blocks || !is_explicit_vector_width(lanes)) return;
    for (const Tensor& expanded : program_.computes()) {
      channel_block_candidate_ = expanded->name;
      if (!is_nchw_map(expanded) || program_.is_output(expanded) || expanded->axes[1].extent % lanes != 0 ||
          !expands_along_channels(expanded, kMinChannelTileReductionInBlocks))
        continue;
      ChannelBlocks blocks;
      blocks.roles[expanded->name] = ChannelBlockRole::kExpanded;
      const std::vector<Tensor> readers = program_.readers(expanded);
      if (!std::all_of(readers.begin(), readers.end(),
                       [&](const Tensor& reader) { return reads_blocks(reader, expanded, true, blocks); }) ||
          std::any_of(blocks.roles.begin(), blocks.roles.end(),
                      [&](const auto& role) { return channel_blocked_.count(role.first) > 0; }) ||
          std::any_of(blocks.weights.begin(), blocks.weights.end(),
                      [&](const std::string& weight) { return packs_.count(weight) > 0; }))
        continue;
      // The shorter reductions only where a depthwise convolution reads the map (where they were measured).
      if (blocks.weights.empty() && !expands_along_channels(expanded, kMinChannelTileReduction)) continue;
      if (!blocks.weights.empty()) short_expansions_.insert(expanded->name);
      pooled_channels_.insert(blocks.pooled_channels.begin(), blocks.pooled_channels.end());
      for (const auto& [name, role] : blocks.roles) {
        channel_blocked_[name] = role;
        if (role == ChannelBlockRole::kExpanded || role == ChannelBlockRole::kEpilogue ||
            role == ChannelBlockRole::kMap)
          packs_[name] = {1, lanes};
      }
      for (const std::string& weight : blocks.weights) packs_[weight] = {0, lanes};
    }
    channel_block_candidate_.clear();
  }

  // The TEs of one set of maps in blocks of channels, by role, and the depthwise weights packed alike.
  struct ChannelBlocks {
    std::map<std::string, ChannelBlockRole> roles;
    std::set<std::string> weights;
    std::map<std::string, std::string> pooled_channels;  // pooling -> its axis over the map's channels
  };

  // Whether `reader` can read `map` stored in blocks of channels, and the roles that takes (into `blocks`): a channel
  // tile (it broadcasts each element), a pooling over the plane, an elementwise map of map's shape that only channel
  // tiles read, or (where `depthwise` allows) a depthwise convolution with its weight packed whose stored epilogue
  // only such readers read.
  bool reads_blocks(const Tensor& reader, const Tensor& map, bool depthwise, ChannelBlocks& blocks) {
    if (reads_as_broadcast(reader, map)) return true;
    if (std::string c = pooled_channel(reader, map); !c.empty()) {
      blocks.roles[reader->name] = ChannelBlockRole::kPool;
      blocks.pooled_channels[reader->name] = c;
      return true;
    }
    if (maps_alike(reader, map)) {
      const std::vector<Tensor> readers = program_.readers(reader);
      blocks.roles[reader->name] = ChannelBlockRole::kMap;
      return !program_.is_output(reader) && !readers.empty() &&
             std::all_of(readers.begin(), readers.end(),
                         [&](const Tensor& q) { return reads_as_broadcast(q, reader); });
    }
    if (!depthwise) return false;
    const std::string weight = depthwise_weight(reader, map);
    if (weight.empty()) return false;
    Tensor epilogue = epilogue_of(reader);
    if (!epilogue || !is_nchw_map(epilogue) || !same_extents(epilogue, reader) || program_.is_output(epilogue))
      return false;
    blocks.roles[reader->name] = ChannelBlockRole::kDepthwise;
    blocks.roles[epilogue->name] = ChannelBlockRole::kEpilogue;
    blocks.weights.insert(weight);
    const std::vector<Tensor> readers = program_.readers(epilogue);
    return std::all_of(readers.begin(), readers.end(),
                       [&](const Tensor& r) { return reads_blocks(r, epilogue, false, blocks); });
  }

  // The weight of t where t is a depthwise convolution of map alone (sum over a window of map[.., c, .., ..] times
  // weight[c, ..], c t's channel, the weight a model weight no band holds), else "".
  std::string depthwise_weight(const Tensor& t, const Tensor& map) {
    const ReduceNode* r = t->reduction();
    if (!r || r->op != ReduceOp::kSum || r->axes.size() != 2 || !is_nchw_map(t) || band_of_.count(t->name) ||
        t->axes[1].extent != map->axes[1].extent)
      return "";
    Tensor weight;
    const std::vector<std::pair<Tensor, std::vector<Expr>>> reads = reads_of(t);
    for (const auto& [tensor, indices] : reads) {
      if (!tensor->is_placeholder() && !tensor.same_as(map)) return "";
      if (tensor->is_placeholder() && weight && !weight.same_as(tensor)) return "";
      const Expr channel = indices.size() > 1 ? simplify(indices[tensor->is_placeholder() ? 0 : 1]) : Expr();
      const auto* c = channel ? channel.as<VarNode>() : nullptr;
      if (!c || c->name != t->axes[1].name()) return "";
      if (tensor->is_placeholder()) weight = tensor;
    }
    return weight && is_weight(weight->name) ? weight->name : "";
  }

  // Whether cpu_root would compute the expansion t hosts as a channel tile with its epilogue along the channels: a
  // reduction of vectorized pixels whose plane leaves lanes idle (predicted: producers are decided after readers).
  bool expands_along_channels(const Tensor& t, int64_t min_reduction) {
    if (t->reduction() || !epilogue_along_channels(t)) return false;
    Tensor r = hosted_reduction(t, InnerLoops::kVectorizeSpatial);
    return r && runs_as_channel_tile(t, r, min_reduction);
  }

  // Whether cpu_root computes root t's reduction r (t itself, or one t hosts) as a channel tile: the first choice of
  // its path for a reduction of vectorized pixels, where the plane leaves lanes idle (predicted as that path decides).
  bool runs_as_channel_tile(const Tensor& t, const Tensor& r, int64_t min_reduction) {
    if (is_bf16_pairs(t) || hosted_panel_reduction(t) || hosted_reduction_along_memory(t) ||
        !hosted_reduction(t, InnerLoops::kVectorizeSpatial).same_as(r))
      return false;
    std::optional<PlaneTile> plane = plane_tile(t, r);
    const int64_t lanes = plane ? plane->lanes : t->axes.back().extent;
    return lanes % options_.simd_fp32_lanes != 0 && channel_tile(t, r, min_reduction).has_value();
  }

  // Whether reduction q reads map only through its channels' reduction axis (a 1 x 1 convolution's input,
  // [.., k, h, w] with k reduced) and runs as a channel tile, which broadcasts each element it reads, whatever the
  // map's layout: in its own root or in its epilogue's (no band's).
  bool reads_as_broadcast(const Tensor& q, const Tensor& map) {
    const ReduceNode* r = q->reduction();
    if (!r || band_of_.count(q->name)) return false;
    bool read = false;
    for (const auto& [tensor, indices] : reads_of(q)) {
      if (!tensor.same_as(map)) continue;
      const Expr channel = simplify(indices[1]);
      const auto* k = channel.as<VarNode>();
      if (!k || std::none_of(r->axes.begin(), r->axes.end(), [&](const IterVar& a) { return a.name() == k->name; }))
        return false;
      read = true;
    }
    if (!read) return false;
    Tensor host = epilogue_of(q);
    if (!host) host = kept_fused(q) ? Tensor() : q;
    return host && runs_as_channel_tile(host, q, kMinChannelTileReduction);
  }

  // The axis c of reduction p where p sums map over its plane, channel by channel (map[.., c, k0, k1] with k0, k1 its
  // reduction axes and c one of its own, over all of map's channels), else "".
  std::string pooled_channel(const Tensor& p, const Tensor& map) {
    const ReduceNode* r = p->reduction();
    if (!r || r->axes.size() != 2) return "";
    const std::vector<std::pair<Tensor, std::vector<Expr>>> reads = reads_of(p);
    std::string pooled;
    for (const auto& [tensor, indices] : reads) {
      if (!tensor.same_as(map)) continue;
      const Expr channel = simplify(indices[1]), row = simplify(indices[2]), column = simplify(indices[3]);
      const auto *c = channel.as<VarNode>(), *k0 = row.as<VarNode>(), *k1 = column.as<VarNode>();
      const int position = c ? axis_position(p, c->name) : -1;
      if (!k0 || !k1 || k0->name != r->axes[0].name() || k1->name != r->axes[1].name() || position < 0 ||
          p->axes[position].extent != map->axes[1].extent || (!pooled.empty() && pooled != c->name))
        return "";
      pooled = c->name;
    }
    return pooled;
  }

  // Whether m is elementwise over map: of its shape, reading it at its own coordinates, hosting no reduction.
  bool maps_alike(const Tensor& m, const Tensor& map) {
    if (m->reduction() || !same_extents(m, map) || hosted_reduction_where(m, [](const Tensor&) { return true; }))
      return false;
    const std::vector<std::pair<Tensor, std::vector<Expr>>> reads = reads_of(m);
    bool read = false;
    for (const auto& [tensor, indices] : reads) {
      if (!tensor.same_as(map)) continue;
      for (size_t d = 0; d < indices.size(); ++d) {
        const Expr index = simplify(indices[d]);
        const auto* v = index.as<VarNode>();
        if (map->axes[d].extent > 1 && (!v || v->name != m->axes[d].name())) return false;
      }
      read = true;
    }
    return read;
  }

  // The position of t's spatial axis named `name`, or -1.
  static int axis_position(const Tensor& t, const std::string& name) {
    for (size_t d = 0; d < t->axes.size(); ++d)
      if (t->axes[d].name() == name) return int(d);
    return -1;
  }

  // A TE over blocks of channels: its channels split by the lanes, the blocks (with the axes before them) outermost (a
  // root's parallel loop), inside them the plane (an epilogue or a map) or the plane's reduction (a pooling, also
  // where it is computed inside its reader), the lanes vectorized innermost.
  void channel_block_root(const Tensor& t, ChannelBlockRole role, Schedule& s, bool root = true) {
    const std::string& name = t->name;
    const std::string c = role == ChannelBlockRole::kPool ? pooled_channels_.at(name) : axis(t, 1);
    s.split(name, c, options_.simd_fp32_lanes);
    std::vector<std::string> outer, inner;
    for (const IterVar& a : t->axes) {
      if (a.name() == c) {
        outer.push_back(c + ".o");
        continue;
      }
      (role == ChannelBlockRole::kPool || a.name() == axis(t, 0) ? outer : inner).push_back(a.name());
    }
    std::vector<std::string> order = outer;
    if (role == ChannelBlockRole::kPool)
      for (const IterVar& k : t->reduction()->axes) order.push_back(k.name());
    order.insert(order.end(), inner.begin(), inner.end());
    order.push_back(c + ".i");
    s.reorder(name, order);
    if (root) fused_parallel_loop(name, outer, s);
    s.vectorize(name, c + ".i");
  }

  // The depthwise convolution inside its epilogue's block of channels: each output row's pixels (in chunks the
  // accumulators hold) a vector of the block's channels, the window's taps outside them, each tap's input vector
  // shared by the pixels it reaches.
  void channel_block_depthwise_loops(const Tensor& t, Schedule& s) {
    const std::string& name = t->name;
    const std::string c = axis(t, 1), h = axis(t, 2);
    std::string w = axis(t, 3);
    s.split(name, c, options_.simd_fp32_lanes);
    const int64_t width = t->axes[3].extent,
                  pixels = largest_divisor_up_to(width, std::min<int64_t>(14, accumulator_vectors()));
    std::vector<std::string> order = {axis(t, 0), c + ".o", h};
    if (pixels < width) {
      s.split(name, w, pixels);
      order.push_back(w + ".o");
      w += ".i";
    }
    for (const IterVar& k : t->reduction()->axes) order.push_back(k.name());
    order.push_back(w);
    order.push_back(c + ".i");
    s.reorder(name, order);
    s.unroll(name, w);
    s.vectorize(name, c + ".i");
  }

  void band_decisions(const Tensor& t, const DepthwiseBand& band, Schedule& s) {
    const std::string& name = t->name;
    // Every member of a band is an NCHW map: its batch, channel, row and column axes.
    const std::string n = axis(t, 0), c = axis(t, 1), h = axis(t, 2), w = axis(t, 3);
    if (t.same_as(band.epilogue)) {
      // [batch, channels / 4, rows / band_rows] in parallel; inside, band_rows rows of 4 channels.
      s.split(name, h, band.rows).split(name, c, kBandChannels);
      s.reorder(name, {n, c + ".o", h + ".o", h + ".i", c + ".i", w});
      s.fuse(name, n, c + ".o").fuse(name, n + "+" + c + ".o", h + ".o");
      s.parallel(name, n + "+" + c + ".o+" + h + ".o").vectorize(name, w);
      attach_loop_[name] = n + "+" + c + ".o+" + h + ".o";
    } else if (t.same_as(band.depthwise)) {
      // The stencil tile of the depthwise convolution (band.depthwise_tile: 4 channels x a row where it fits), window
      // taps outside.
      const ReduceNode* r = t->reduction();
      s.compute_at(name, band.epilogue->name, attach_loop_.at(band.epilogue->name));
      s.split(name, c, kBandChannels);
      std::vector<std::string> order = {n, c + ".o", h};
      const RowTileAxes tile = split_row_tile(t, c + ".i", band.depthwise_tile, order, s);
      order.push_back(r->axes[0].name());
      order.push_back(r->axes[1].name());
      order.push_back(tile.channels);
      order.push_back(tile.pixels);
      s.reorder(name, order).unroll(name, tile.channels).vectorize(name, tile.pixels);
      attach_loop_[name] = c + ".o";
    } else if (t.same_as(band.expanded)) {
      // The band's expanded rows, one row of its 4 channels at a time.
      s.compute_at(name, band.depthwise->name, attach_loop_.at(band.depthwise->name));
      s.reorder(name, {n, h, c, w}).vectorize(name, w);
      attach_loop_[name] = h;
    } else {
      // The expansion of one row (band.expansion_tile: 4 channels x the row where it fits), each load of the input row
      // shared by the tile's channels.
      const ReduceNode* r = t->reduction();
      s.compute_at(name, band.expanded->name, attach_loop_.at(band.expanded->name));
      std::vector<std::string> order = {n, h};
      const RowTileAxes tile = split_row_tile(t, c, band.expansion_tile, order, s);
      for (const IterVar& k : r->axes) order.push_back(k.name());
      order.push_back(tile.channels);
      order.push_back(tile.pixels);
      s.reorder(name, order).unroll(name, tile.channels).vectorize(name, tile.pixels);
    }
  }

  struct RowTileAxes {
    std::string channels, pixels;
  };
  // Splits t's `channels` axis (4 channels of the band inside the loop it is computed at: the depthwise convolution's
  // axis split by 4, the expansion's whole axis bounded to 4 by compute_at) and t's row into `tile`, appending the
  // loops over tiles to `order`; returns the tile's axes.
  static RowTileAxes split_row_tile(const Tensor& t, const std::string& channels, DepthwiseBand::RowTile tile,
                                    std::vector<std::string>& order, Schedule& s) {
    RowTileAxes axes{channels, axis(t, 3)};
    if (tile.channels < kBandChannels) {
      s.split(t->name, channels, tile.channels);
      order.push_back(channels + ".o");
      axes.channels = channels + ".i";
    }
    if (tile.pixels < t->axes[3].extent) {
      s.split(t->name, axes.pixels, tile.pixels);
      order.push_back(axes.pixels + ".o");
      axes.pixels += ".i";
    }
    return axes;
  }

  // The layout with each band's two plan stages in one step: no barrier between the expansion and its reader.
  StageLayout merge_band_steps(StageLayout layout) const {
    for (const DepthwiseBand& band : bands_) {
      auto holds = [&](const std::string& te) {
        return std::find_if(layout.begin(), layout.end(), [&](const LayoutStep& step) {
          return std::find(step.computes.begin(), step.computes.end(), te) != step.computes.end();
        });
      };
      auto first = holds(band.expansion->name), second = holds(band.depthwise->name);
      if (first == layout.end() || second != first + 1 || second->kernel_before) continue;
      first->computes.insert(first->computes.end(), second->computes.begin(), second->computes.end());
      // The second step's prefetches go with it, where a step runs before to hide them under.
      if (first != layout.begin() && !first->kernel_before)
        first->prefetch.insert(first->prefetch.end(), second->prefetch.begin(), second->prefetch.end());
      layout.erase(second);
    }
    return layout;
  }

  // Whether t's last axis runs in chunks of knobs.gate_chunk over the threads: a 1-D output, or a [1, n] one of
  // kGateChunkedWidth or more (an ONNX file's LSTM gates and states: in rows of 64, its paper LSTM ran 1.3x slower).
  // Narrower [1, n] outputs keep whole rows of up to max_vector_lanes: in gate chunks, MMoE's layers of 16 to 128
  // units ran 2.5x slower, with 9 barriers where 1 had been.
  static constexpr int64_t kGateChunkedWidth = 256;
  bool in_gate_chunks(const Tensor& t) const {
    return t->axes.size() == 1 || (one_output_axis(t) && t->axes.back().extent >= kGateChunkedWidth);
  }

  // The elements of t's last axis that one iteration of its root's parallel loop computes (cpu_root): a gate chunk
  // where in_gate_chunks, else the whole row up to max_vector_lanes or its largest divisor up to that; 1 where no
  // divisor splits the axis (an iteration per element).
  int64_t last_axis_chunk(const Tensor& t) const {
    const int64_t extent = t->axes.back().extent;
    const bool chunked = in_gate_chunks(t);
    const int64_t cap = chunked ? knobs().gate_chunk : options_.max_vector_lanes;
    if (!chunked && extent <= cap) return extent;
    const int64_t lanes = largest_divisor_up_to(extent, cap);
    return lanes > 1 && lanes < extent ? lanes : 1;
  }

  void gpu_root(const Tensor& t, Schedule& s) {
    int64_t threads = 1;
    // Threads take the innermost axes first, so neighbouring threads touch neighbouring elements.
    std::vector<int64_t> thread_extent(t->axes.size(), 1);
    for (size_t n = t->axes.size(); n-- > 0;) {
      int64_t f = largest_divisor_up_to(t->axes[n].extent, options_.gpu_threads / threads);
      thread_extent[n] = std::max<int64_t>(1, f);
      threads *= thread_extent[n];
    }
    bind_blocks_and_threads(s, t, thread_extent);
  }

  const Program& program_;
  const PartitionPlan& plan_;
  FixedScheduleOptions options_;
  std::map<std::string, int> stage_of_;
  std::set<std::string> inlined_;
  std::map<std::string, int64_t> pads_;  // stored computes -> elements added to their last dimension
  std::map<std::string, std::string> attach_loop_;
  std::map<std::string, int64_t> hosted_tile_;  // reduction -> its innermost extent per iteration of its reader's loop
  std::map<std::string, size_t> hosted_rows_;   // reduction -> the axis its reader computes register_tile rows of
  std::map<std::string, PlaneTile> hosted_planes_;            // reduction -> the plane tile of the reader that hosts it
  std::map<std::string, ChannelTile> hosted_channels_;        // reduction -> the channel tile of its host
  std::map<std::string, std::pair<int64_t, int64_t>> packs_;  // weight or stored map -> its pack: dimension, block
  std::set<std::string> panel_packed_;                  // reductions along memory computed as panels of a packed weight
  std::map<std::string, StencilTile> hosted_stencils_;  // reduction -> the stencil tile of the reader that hosts it
  std::map<std::string, std::vector<Decision>> per_stage_;
  std::vector<std::vector<std::string>> stage_tes_;  // per plan stage (in kernel order): its TEs
  std::vector<int> kernel_of_stage_;
  std::vector<DepthwiseBand> bands_;
  std::map<std::string, size_t> band_of_;  // the four stored or hosted TEs of each band -> its index in bands_
  std::map<std::string, ChannelBlockRole> channel_blocked_;  // TEs over channel blocks (find_channel_blocks)
  std::string channel_block_candidate_;                      // the map find_channel_blocks weighs, while it runs
  std::set<std::string> short_expansions_;  // kExpanded maps a depthwise convolution reads (their channel tiles take
                                            // kMinChannelTileReductionInBlocks)
  std::map<std::string, std::string> pooled_channels_;  // kPool TEs -> their axis over the map's channels
};

// A knob: its range and how to read and write it in FixedScheduleOptions (booleans as 0 and 1).
struct Knob {
  KnobRange range;
  int (*get)(const FixedScheduleOptions&);
  void (*set)(FixedScheduleOptions&, int);
};

// A member of TemplateKnobs as a Knob.
template <auto member>
Knob template_knob(const char* name, std::vector<int> values) {
  using Value = std::remove_reference_t<decltype(std::declval<TemplateKnobs&>().*member)>;
  return Knob{KnobRange{name, std::move(values), int(TemplateKnobs{}.*member)},
              [](const FixedScheduleOptions& o) { return int(o.knobs.*member); },
              [](FixedScheduleOptions& o, int v) { o.knobs.*member = static_cast<Value>(v); }};
}

// The ranges: values around each default, wide enough that a search can find a better one; every value lowers on
// the examples, the task workloads and the small paper models under every strategy
// (tests/space/template_knobs_test.cc). The order is template_knob_ranges()'s: max_vector_lanes, then TemplateKnobs'
// members in declaration order.
const std::vector<Knob>& knobs_table() {
  static const std::vector<Knob> table = {
      Knob{KnobRange{"max_vector_lanes", {8, 16, 32, 64, 128}, FixedScheduleOptions{}.max_vector_lanes},
           [](const FixedScheduleOptions& o) { return o.max_vector_lanes; },
           [](FixedScheduleOptions& o, int v) { o.max_vector_lanes = v; }},
      template_knob<&TemplateKnobs::register_tile>("register_tile", {1, 2, 4, 8}),
      template_knob<&TemplateKnobs::gemv_rows>("gemv_rows", {1, 2, 4, 8, 16}),
      template_knob<&TemplateKnobs::gate_chunk>("gate_chunk", {4, 8, 16, 32, 64}),
      template_knob<&TemplateKnobs::accumulator_vectors>("accumulator_vectors", {0, 8, 12, 16, 20, 24, 28}),
      template_knob<&TemplateKnobs::plane_row_share>("plane_row_share", {0, 1, 2, 4, 8}),
      template_knob<&TemplateKnobs::min_stencil_iterations>("min_stencil_iterations", {1, 16, 64, 256}),
      template_knob<&TemplateKnobs::min_reduction_lanes>("min_reduction_lanes", {2, 4, 8, 16, 32}),
      template_knob<&TemplateKnobs::reuse_operand_order>("reuse_operand_order", {0, 1}),
      template_knob<&TemplateKnobs::cache_write>("cache_write", {0, 1}),
      template_knob<&TemplateKnobs::prefetch>("prefetch", {0, 1}),
      template_knob<&TemplateKnobs::stencil_tiles>("stencil_tiles", {0, 1}),
      template_knob<&TemplateKnobs::plane_tiles>("plane_tiles", {0, 1}),
      template_knob<&TemplateKnobs::pack_weights>("pack_weights", {0, 1}),
      template_knob<&TemplateKnobs::panel_vectors>("panel_vectors", {0, 1, 2, 3, 4}),
      template_knob<&TemplateKnobs::channel_tiles>("channel_tiles", {0, 1}),
      template_knob<&TemplateKnobs::channel_vectors>("channel_vectors", {0, 1, 2, 3, 4}),
      template_knob<&TemplateKnobs::band_rows>("band_rows", {0, 2, 4, 8, 16}),
      template_knob<&TemplateKnobs::pad_rows>("pad_rows", {0, 1}),
      template_knob<&TemplateKnobs::channel_blocks>("channel_blocks", {0, 1}),
  };
  return table;
}

const Knob& find_knob(const std::string& name) {
  for (const Knob& knob : knobs_table())
    if (knob.range.name == name) return knob;
  std::string known;
  for (const Knob& knob : knobs_table()) known += (known.empty() ? "" : ", ") + knob.range.name;
  throw std::invalid_argument("unknown knob '" + name + "' (knobs: " + known + ")");
}

// A uniform index below n drawn from rng (std::uniform_int_distribution's draws differ between standard libraries).
size_t draw_index(std::mt19937_64& rng, size_t n) { return size_t(rng() % n); }

std::string knob_settings(const FixedScheduleOptions& options, bool with_max_vector_lanes) {
  std::string out;
  for (const Knob& knob : knobs_table()) {
    if (!with_max_vector_lanes && knob.range.name == "max_vector_lanes") continue;
    out += (out.empty() ? "" : " ") + knob.range.name + "=" + std::to_string(knob.get(options));
  }
  return out;
}

}  // namespace

std::string TemplateKnobs::to_string() const {
  FixedScheduleOptions options;
  options.knobs = *this;
  return knob_settings(options, false);
}

const std::vector<KnobRange>& template_knob_ranges() {
  static const std::vector<KnobRange> ranges = [] {
    std::vector<KnobRange> out;
    for (const Knob& knob : knobs_table()) out.push_back(knob.range);
    return out;
  }();
  return ranges;
}

int knob_value(const FixedScheduleOptions& options, const std::string& name) { return find_knob(name).get(options); }

void set_knob(FixedScheduleOptions& options, const std::string& name, int value) {
  const Knob& knob = find_knob(name);
  const std::vector<int>& values = knob.range.values;
  if (std::find(values.begin(), values.end(), value) == values.end()) {
    std::string range;
    for (int v : values) range += (range.empty() ? "" : ", ") + std::to_string(v);
    throw std::invalid_argument("knob " + name + ": " + std::to_string(value) + " is not one of {" + range + "}");
  }
  knob.set(options, value);
}

std::string knobs_to_string(const FixedScheduleOptions& options) { return knob_settings(options, true); }

FixedScheduleOptions sample_template_knobs(std::mt19937_64& rng, const FixedScheduleOptions& base) {
  FixedScheduleOptions out = base;
  for (const Knob& knob : knobs_table()) knob.set(out, knob.range.values[draw_index(rng, knob.range.values.size())]);
  return out;
}

FixedScheduleOptions mutate_one_knob(const FixedScheduleOptions& options, std::mt19937_64& rng) {
  const Knob& knob = knobs_table()[draw_index(rng, knobs_table().size())];
  std::vector<int> others;
  for (int v : knob.range.values)
    if (v != knob.get(options)) others.push_back(v);
  FixedScheduleOptions out = options;
  knob.set(out, others[draw_index(rng, others.size())]);
  return out;
}

StageLayout plan_layout(const PartitionPlan& plan) {
  StageLayout layout;
  for (size_t k = 0; k < plan.kernels.size(); ++k)
    for (size_t s = 0; s < plan.kernels[k].stages.size(); ++s) {
      const PlanStage& stage = plan.kernels[k].stages[s];
      layout.push_back(LayoutStep{stage.tes, stage.barrier_before, k > 0 && s == 0, stage.prefetch});
    }
  return layout;
}

Schedule strategy_schedule(const Program& program, const PartitionPlan& plan, const FixedScheduleOptions& options) {
  return StrategyScheduler(program, plan, options).run();
}

FixedScheduleOptions fixed_options_for_target(FixedScheduleOptions options, const Target& target) {
  if (target.kind != TargetKind::kCpu) return options;
  if (target.cpu.simd_fp32_lanes > 0) options.simd_fp32_lanes = int(target.cpu.simd_fp32_lanes);
  options.l2_bytes = target.cpu.l2_bytes;
  options.amx_bf16 = target.cpu.amx_bf16;
  return options;
}

StrategyProgram make_strategy_program(const Program& program, const std::string& strategy, const Target& target,
                                      const FixedScheduleOptions& options) {
  StrategyProgram out;
  out.plan = make_plan(strategy, program, target);
  out.schedule = strategy_schedule(program, out.plan, fixed_options_for_target(options, target));
  return out;
}

}  // namespace ingot
