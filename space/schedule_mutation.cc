// Mutations and crossover of schedules (space/schedule_mutation.h): each kind lists the moves it could make on a
// schedule (stripped of explicit_vectors), draws some without repetition, and keeps the first that lowers.
// Runs wherever lower() runs: it lowers each draw once or twice and touches nothing else.
#include "space/schedule_mutation.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "ir/horizontal_batch.h"
#include "lower/lower.h"
#include "lower/vector_tiles.h"
#include "space/explicit_vectors.h"

namespace ingot {

namespace {

using Decisions = std::vector<Decision>;

bool is_gpu_schedule(const Schedule& s) {
  return std::any_of(s.decisions().begin(), s.decisions().end(),
                     [](const Decision& d) { return d.kind == DecisionKind::kBind; });
}

Decisions without_explicit_vectors(const Schedule& s) {
  Decisions out;
  for (const Decision& d : s.decisions())
    if (d.kind != DecisionKind::kExplicitVectors) out.push_back(d);
  return out;
}

std::vector<int64_t> divisors(int64_t n) {
  std::vector<int64_t> low, high;
  for (int64_t d = 1; d * d <= n; ++d)
    if (n % d == 0) {
      low.push_back(d);
      if (d != n / d) high.push_back(n / d);
    }
  low.insert(low.end(), high.rbegin(), high.rend());
  return low;
}

// The schedule of `decisions` with `layout` and, on a CPU schedule, its explicit_vectors re-derived, when lower()
// accepts it; nullopt when it refuses.
std::optional<Schedule> lowered_schedule(const Program& program, Decisions decisions, const StageLayout& layout,
                                         bool gpu, const MutationOptions& options) {
  Schedule s(std::move(decisions));
  s.set_layout(layout);
  try {
    if (gpu || !is_explicit_vector_width(options.simd_fp32_lanes)) {
      lower(program, s);
      return s;
    }
    Schedule out = with_explicit_vectors(program, s, options.simd_fp32_lanes);  // lowers s once
    if (!(out == s)) lower(program, out);                                       // and checks what it added
    return out;
  } catch (const ScheduleError&) {
    return std::nullopt;
  }
}

// One loop of a stage as lowering's replay sees it.
struct Loop {
  std::string name;
  int64_t extent = 0;
  bool reduce = false;
  LoopKind kind = LoopKind::kSerial;
  bool annotated = false;  // parallel, vectorize, unroll or bind
  bool shifted = false;    // a shifted split's outer loop, which lowering peels (it refuses annotating, splitting
                           // or fusing it; unroll, parallel grow and cache_write moves skip it)
};

int position(const std::vector<Loop>& loops, const std::string& name) {
  for (size_t p = 0; p < loops.size(); ++p)
    if (loops[p].name == name) return int(p);
  return -1;
}

// The loops of t's stage after its decisions among ds[0, end), replayed as lowering replays them from `domain` (the
// extents of t's axes) and t's reduce axes. Decisions lowering would refuse are skipped.
std::vector<Loop> replay_loops(const Tensor& t, const std::vector<int64_t>& domain, const Decisions& ds, size_t end) {
  std::vector<Loop> loops;
  for (size_t d = 0; d < t->axes.size(); ++d) loops.push_back(Loop{t->axes[d].name(), domain[d], false});
  if (const ReduceNode* r = t->reduction())
    for (const IterVar& k : r->axes) loops.push_back(Loop{k.name(), k.extent, true});
  auto annotate = [&](const Decision& d, LoopKind kind) {
    if (int p = position(loops, d.axes[0]); p >= 0) {
      loops[p].kind = kind;
      loops[p].annotated = true;
    }
  };
  for (size_t n = 0; n < end && n < ds.size(); ++n) {
    const Decision& d = ds[n];
    if (d.stage != t->name || d.axes.empty()) continue;
    switch (d.kind) {
      case DecisionKind::kSplit: {
        int p = position(loops, d.axes[0]);
        if (p < 0 || d.factor < 1) break;
        Loop parent = loops[p];
        Loop outer{parent.name + ".o", (parent.extent + d.factor - 1) / d.factor, parent.reduce};
        outer.shifted = d.tail == SplitTail::kShift && parent.extent % d.factor != 0;
        Loop inner{parent.name + ".i", d.tail == SplitTail::kGuard ? d.factor : std::min(d.factor, parent.extent),
                   parent.reduce};
        loops[p] = outer;
        loops.insert(loops.begin() + p + 1, inner);
        break;
      }
      case DecisionKind::kReorder: {
        std::vector<int> positions;
        for (const std::string& a : d.axes) positions.push_back(position(loops, a));
        std::vector<int> slots = positions;
        std::sort(slots.begin(), slots.end());
        if (slots.empty() || slots[0] < 0 || std::adjacent_find(slots.begin(), slots.end()) != slots.end()) break;
        std::vector<Loop> before = loops;
        for (size_t k = 0; k < slots.size(); ++k) loops[slots[k]] = before[positions[k]];
        break;
      }
      case DecisionKind::kFuse: {
        if (d.axes.size() != 2) break;
        int a = position(loops, d.axes[0]), b = position(loops, d.axes[1]);
        if (a < 0 || b != a + 1) break;
        loops[a] = Loop{loops[a].name + "+" + loops[b].name, loops[a].extent * loops[b].extent, loops[a].reduce};
        loops.erase(loops.begin() + b);
        break;
      }
      case DecisionKind::kParallel: annotate(d, LoopKind::kParallel); break;
      case DecisionKind::kVectorize: annotate(d, LoopKind::kVectorized); break;
      case DecisionKind::kUnroll: annotate(d, LoopKind::kUnrolled); break;
      case DecisionKind::kBind: annotate(d, d.bind); break;
      default: break;
    }
  }
  return loops;
}

// Renames loop `from` of `stage` in d to `to`: in d's axes when d is a decision of `stage` (a reorder lists all of
// `to`, once each; any other decision names to[0]), and in a compute_at decision whose target is `stage`.
void rename_loop(Decision& d, const std::string& stage, const std::string& from, const std::vector<std::string>& to) {
  if (d.kind == DecisionKind::kComputeAt) {
    if (d.target == stage && !d.axes.empty() && d.axes[0] == from) d.axes[0] = to[0];
    return;
  }
  if (d.stage != stage) return;
  if (d.kind != DecisionKind::kReorder) {
    for (std::string& a : d.axes)
      if (a == from) a = to[0];
    return;
  }
  std::vector<std::string> order;
  auto add = [&](const std::string& a) {
    if (std::find(order.begin(), order.end(), a) == order.end()) order.push_back(a);
  };
  for (const std::string& a : d.axes) {
    if (a != from) {
      add(a);
      continue;
    }
    for (const std::string& t : to) add(t);
  }
  d.axes = order;
}

// Renames as rename_loop in every compute_at decision, and in the decisions of `stage` from index `first` on (earlier
// ones ran before the loop had its name).
void rename_from(Decisions& ds, size_t first, const std::string& stage, const std::string& from,
                 const std::vector<std::string>& to) {
  for (size_t k = 0; k < ds.size(); ++k)
    if (ds[k].kind == DecisionKind::kComputeAt || k >= first) rename_loop(ds[k], stage, from, to);
}

class Mutator {
 public:
  using Move = std::function<Decisions(std::mt19937_64&)>;  // a move may draw details (kSplit)

  Mutator(const Program& program, const Schedule& schedule, const MutationOptions& options)
      : program_(program),
        input_(schedule),
        options_(options),
        ds_(without_explicit_vectors(schedule)),
        gpu_(is_gpu_schedule(schedule)) {
    for (const Tensor& t : program.computes()) topo_[t->name] = int(topo_.size());
  }

  std::vector<Move> moves(MutationKind kind) {
    switch (kind) {
      case MutationKind::kResplit: return resplits();
      case MutationKind::kUnroll: return unrolls();
      case MutationKind::kReorder: return reorders();
      case MutationKind::kParallelGranularity: return parallel_granularities();
      case MutationKind::kCacheWrite: return cache_writes();
      case MutationKind::kComputeLocation: return compute_locations();
      case MutationKind::kSplit: return splits();
      case MutationKind::kVectorAxis: return vector_axes();
    }
    return {};
  }

  // Up to max_attempts of the moves, drawn without repetition; the first that lowers and changes the schedule.
  std::optional<Schedule> try_moves(std::vector<Move> moves, std::mt19937_64& rng) const {
    for (int attempt = 0; attempt < options_.max_attempts && !moves.empty(); ++attempt) {
      size_t pick = std::uniform_int_distribution<size_t>(0, moves.size() - 1)(rng);
      Decisions ds = moves[pick](rng);
      moves[pick] = std::move(moves.back());
      moves.pop_back();
      if (ds == ds_) continue;
      std::optional<Schedule> out = lowered_schedule(program_, std::move(ds), input_.layout(), gpu_, options_);
      if (out && !(*out == input_)) return out;
    }
    return std::nullopt;
  }

 private:
  // The compute a decision names, or null for a placeholder or an unknown name.
  Tensor compute(const std::string& name) const {
    Tensor t = program_.find(name);
    return t && !t->is_placeholder() ? t : Tensor();
  }

  bool has_decision(const std::string& stage, DecisionKind kind) const {
    return std::any_of(ds_.begin(), ds_.end(), [&](const Decision& d) { return d.stage == stage && d.kind == kind; });
  }

  // The extents of t's axes in its stage: its shape, or for a stage computed at a reader's loop the region lowering
  // computes there (the shape of its local buffer in the lowered input).
  std::vector<int64_t> domain(const Tensor& t) {
    if (!has_decision(t->name, DecisionKind::kComputeAt)) return t->shape;
    if (!regions_) {
      regions_.emplace();
      Schedule s(ds_);
      s.set_layout(input_.layout());
      try {
        for_each_stmt(lower(program_, s).body, [&](const Stmt& st) {
          if (auto* a = as<AllocateNode>(st)) (*regions_)[a->buffer->name] = a->buffer->shape;
        });
      } catch (const ScheduleError&) {
        // An input lowering refuses: its shapes stand in, and lowering judges each draw.
      }
    }
    auto it = regions_->find(t->name);
    return it != regions_->end() && it->second.size() == t->shape.size() ? it->second : t->shape;
  }

  // Where a new decision of `stage` goes: after its last decision, or for a stage with none after the decisions of
  // the computes before it.
  size_t insert_position(const std::string& stage) const {
    size_t own = 0, before = 0;
    bool found = false;
    int me = topo_.at(stage);
    for (size_t n = 0; n < ds_.size(); ++n) {
      if (ds_[n].stage == stage) {
        own = n + 1;
        found = true;
      }
      auto it = topo_.find(ds_[n].stage);
      if (it != topo_.end() && it->second < me) before = n + 1;
    }
    return found ? own : before;
  }

  Move insert_move(size_t at, Decision d) const {
    return [this, at, d](std::mt19937_64&) {
      Decisions ds = ds_;
      ds.insert(ds.begin() + at, d);
      return ds;
    };
  }

  Move erase_move(size_t at) const {
    return [this, at](std::mt19937_64&) {
      Decisions ds = ds_;
      ds.erase(ds.begin() + at);
      return ds;
    };
  }

  bool inlined(const std::string& stage) const { return has_decision(stage, DecisionKind::kComputeInline); }

  std::vector<Move> resplits() {
    std::vector<Move> out;
    for (size_t n = 0; n < ds_.size(); ++n) {
      const Decision& d = ds_[n];
      Tensor t = compute(d.stage);
      if (d.kind != DecisionKind::kSplit || !t || d.axes.empty()) continue;
      std::vector<Loop> loops = replay_loops(t, domain(t), ds_, n);
      int p = position(loops, d.axes[0]);
      if (p < 0) continue;
      int64_t extent = loops[p].extent;
      std::vector<int64_t> factors;
      if (d.tail == SplitTail::kExact) {
        for (int64_t f : divisors(extent))
          if (f > 1 && f < extent && f != d.factor) factors.push_back(f);
      } else if (d.tail == SplitTail::kShift) {  // factors whose last block recomputes at most 1 in 16
        for (int64_t f = 2; f < extent; ++f)
          if (f != d.factor && (f - extent % f) % f * kMaxShiftedShare <= extent) factors.push_back(f);
      } else {
        for (int64_t f = 2; f < extent; ++f)
          if (f != d.factor && (extent % f == 0 || f <= kMaxGuardedFactor)) factors.push_back(f);
      }
      for (int64_t f : factors)
        out.push_back([this, n, f](std::mt19937_64&) {
          Decisions ds = ds_;
          ds[n].factor = f;
          return ds;
        });
    }
    return out;
  }
  static constexpr int64_t kMaxGuardedFactor = 64;
  static constexpr int64_t kMaxShiftedShare = 16;  // a shifted split's recomputed elements at most 1 / this

  std::vector<Move> unrolls() {
    std::vector<Move> out;
    for (size_t n = 0; n < ds_.size(); ++n)
      if (ds_[n].kind == DecisionKind::kUnroll) out.push_back(erase_move(n));
    for (const Tensor& t : program_.computes()) {
      if (inlined(t->name)) continue;
      for (const Loop& l : replay_loops(t, domain(t), ds_, ds_.size()))
        if (!l.annotated && !l.shifted && l.extent >= 2 && l.extent <= kMaxUnrollExtent)
          out.push_back(insert_move(insert_position(t->name), make_decision(DecisionKind::kUnroll, t->name, {l.name})));
    }
    return out;
  }
  static constexpr int64_t kMaxUnrollExtent = 16;

  std::vector<Move> reorders() const {
    std::vector<Move> out;
    for (size_t n = 0; n < ds_.size(); ++n) {
      if (ds_[n].kind != DecisionKind::kReorder) continue;
      for (size_t p = 0; p + 1 < ds_[n].axes.size(); ++p)
        out.push_back([this, n, p](std::mt19937_64&) {
          Decisions ds = ds_;
          std::swap(ds[n].axes[p], ds[n].axes[p + 1]);
          return ds;
        });
    }
    return out;
  }

  std::vector<Move> parallel_granularities() const {
    std::vector<Move> out;
    for (size_t n = 0; n < ds_.size(); ++n) {
      const Decision& d = ds_[n];
      Tensor t = compute(d.stage);
      if (d.kind != DecisionKind::kParallel || !t || d.axes.empty()) continue;
      const std::string stage = d.stage, parallel = d.axes[0];
      // Drop: the fuse that made the parallel loop, the latest one before it.
      for (size_t j = n; j-- > 0;) {
        const Decision& f = ds_[j];
        if (f.stage != stage || f.kind != DecisionKind::kFuse || f.axes.size() != 2 ||
            f.axes[0] + "+" + f.axes[1] != parallel)
          continue;
        out.push_back([this, j, stage, parallel](std::mt19937_64&) {
          Decisions ds = ds_;
          std::vector<std::string> parts = ds[j].axes;
          ds.erase(ds.begin() + j);
          rename_from(ds, j, stage, parallel, parts);
          return ds;
        });
        break;
      }
      // Grow: fuse the next loop (at the parallel decision) into it.
      std::vector<Loop> loops = replay_loops(t, t->shape, ds_, n);
      int p = position(loops, parallel);
      if (p < 0 || p + 1 >= int(loops.size()) || loops[p].reduce) continue;
      const Loop& next = loops[p + 1];
      if (next.reduce || next.annotated || next.shifted) continue;
      bool blocked = false;
      for (size_t k = n; k < ds_.size(); ++k) {
        const Decision& later = ds_[k];
        bool shapes_it = later.kind == DecisionKind::kSplit || later.kind == DecisionKind::kFuse ||
                         later.kind == DecisionKind::kVectorize || later.kind == DecisionKind::kUnroll ||
                         later.kind == DecisionKind::kBind || later.kind == DecisionKind::kParallel;
        if (later.stage == stage && shapes_it &&
            std::find(later.axes.begin(), later.axes.end(), next.name) != later.axes.end())
          blocked = true;
      }
      if (blocked) continue;
      out.push_back([this, n, stage, parallel, inner = next.name](std::mt19937_64&) {
        Decisions ds = ds_;
        ds.insert(ds.begin() + n, make_decision(DecisionKind::kFuse, stage, {parallel, inner}));
        std::string fused = parallel + "+" + inner;
        rename_from(ds, n + 1, stage, parallel, {fused});
        rename_from(ds, n + 1, stage, inner, {fused});
        return ds;
      });
    }
    return out;
  }

  std::vector<Move> cache_writes() const {
    std::vector<Move> out;
    for (const Tensor& t : program_.computes()) {
      if (!t->reduction() || inlined(t->name)) continue;
      bool has = false;
      for (size_t n = 0; n < ds_.size(); ++n)
        if (ds_[n].stage == t->name && ds_[n].kind == DecisionKind::kCacheWrite) {
          out.push_back(erase_move(n));
          has = true;
        }
      if (has) continue;
      // At the parallel loop; on a GPU inside the thread loops; else at the outermost loop.
      std::vector<Loop> loops = replay_loops(t, t->shape, ds_, ds_.size());
      std::string at = loops.front().name;
      for (const Loop& l : loops) {
        if (l.kind == LoopKind::kParallel) at = l.name;
        if (is_gpu_thread(l.kind)) at = l.name;
      }
      // Not outside a shifted split's outer loop, whose blocks overlap (lowering refuses such a tile).
      if (std::any_of(loops.begin() + position(loops, at) + 1, loops.end(), [](const Loop& l) { return l.shifted; }))
        continue;
      out.push_back(insert_move(insert_position(t->name), make_decision(DecisionKind::kCacheWrite, t->name, {at})));
    }
    return out;
  }

  std::vector<Move> compute_locations() const {
    std::vector<Move> out;
    for (size_t n = 0; n < ds_.size(); ++n) {
      const Decision& d = ds_[n];
      Tensor reader = compute(d.target);
      if (d.kind != DecisionKind::kComputeAt || !reader || d.axes.empty()) continue;
      for (const Loop& l : replay_loops(reader, reader->shape, ds_, ds_.size())) {
        if (l.name == d.axes[0] || l.kind == LoopKind::kVectorized) continue;
        out.push_back([this, n, loop = l.name](std::mt19937_64&) {
          Decisions ds = ds_;
          ds[n].axes[0] = loop;
          return ds;
        });
      }
    }
    return out;
  }

  // kSplit: one move per loop a stage has at some point of its replay that is serial, not annotated, neither made by a
  // fuse nor split later, of at least 4 iterations and with a divisor d, 1 < d < E. The move draws d (half the time
  // among 2, 4 and 8 where one divides) and, half the time, the register-tile variant.
  std::vector<Move> splits() {
    std::vector<Move> out;
    for (const Tensor& t : program_.computes()) {
      if (inlined(t->name)) continue;
      std::vector<int64_t> dom = domain(t);
      std::vector<Loop> seen;  // every loop of the stage's replay, in the order they appear
      std::set<std::string> split_later;
      auto see = [&](size_t end) {
        for (const Loop& l : replay_loops(t, dom, ds_, end))
          if (position(seen, l.name) < 0) seen.push_back(l);
      };
      see(0);
      for (size_t n = 0; n < ds_.size(); ++n) {
        if (ds_[n].stage != t->name) continue;
        see(n + 1);
        if (ds_[n].kind == DecisionKind::kSplit && !ds_[n].axes.empty()) split_later.insert(ds_[n].axes[0]);
      }
      std::vector<Loop> last = replay_loops(t, dom, ds_, ds_.size());
      for (const Loop& l : seen) {
        if (split_later.count(l.name) || l.extent < 4) continue;
        if (int p = position(last, l.name); p >= 0 && (last[p].annotated || last[p].kind != LoopKind::kSerial))
          continue;
        std::optional<size_t> at = split_position(t->name, l.name);
        if (!at) continue;  // made by a fuse
        std::vector<int64_t> all, small;
        for (int64_t f : divisors(l.extent))
          if (f > 1 && f < l.extent) {
            all.push_back(f);
            if (f == 2 || f == 4 || f == 8) small.push_back(f);
          }
        if (all.empty()) continue;
        out.push_back([this, t, dom, x = l.name, at = *at, all, small](std::mt19937_64& rng) {
          auto coin = [&] { return std::uniform_int_distribution<int>(0, 1)(rng) == 1; };
          const std::vector<int64_t>& from = !small.empty() && coin() ? small : all;
          int64_t factor = from[std::uniform_int_distribution<size_t>(0, from.size() - 1)(rng)];
          bool tile = coin();
          return split_loop(t, dom, x, at, factor, tile);
        });
      }
    }
    return out;
  }
  static constexpr int64_t kMaxTileUnroll = 16;

  // kVectorAxis: one move per vectorize decision (removing it) and per loop the stage could vectorize instead: a
  // spatial loop of its final replay that no decision annotates, of at least 4 iterations. That move drops the stage's
  // vectorize decisions and appends, after its last decision, a reorder moving the loop behind those after it (when
  // there are any) and `vectorize` of it.
  std::vector<Move> vector_axes() {
    std::vector<Move> out;
    if (gpu_) return out;
    for (const Tensor& t : program_.computes()) {
      if (inlined(t->name)) continue;
      std::vector<size_t> vectorizes;
      for (size_t n = 0; n < ds_.size(); ++n)
        if (ds_[n].stage == t->name && ds_[n].kind == DecisionKind::kVectorize) vectorizes.push_back(n);
      for (size_t n : vectorizes) out.push_back(erase_move(n));
      std::vector<Loop> last = replay_loops(t, domain(t), ds_, ds_.size());
      // The stage's own decisions all come before its insert position: dropping them moves it back by as many.
      size_t at = insert_position(t->name) - vectorizes.size();
      for (size_t p = 0; p < last.size(); ++p) {
        if (last[p].reduce || last[p].annotated || last[p].extent < kMinVectorExtent) continue;
        std::vector<std::string> order;  // the loops from x inward, x last
        for (size_t q = p + 1; q < last.size(); ++q) order.push_back(last[q].name);
        order.push_back(last[p].name);
        out.push_back([this, stage = t->name, vectorizes, at, order](std::mt19937_64&) {
          Decisions ds = ds_;
          for (size_t k = vectorizes.size(); k-- > 0;) ds.erase(ds.begin() + vectorizes[k]);
          Decisions added;
          if (order.size() > 1) added.push_back(make_decision(DecisionKind::kReorder, stage, order));
          added.push_back(make_decision(DecisionKind::kVectorize, stage, {order.back()}));
          ds.insert(ds.begin() + at, added.begin(), added.end());
          return ds;
        });
      }
    }
    return out;
  }
  static constexpr int64_t kMinVectorExtent = 4;

  // Where a split of `stage`'s loop x goes: right after the split that made x, or for one of the compute's own axes at
  // the stage's first decision (after the decisions of the computes before it when it has none); nullopt for a loop a
  // fuse made.
  std::optional<size_t> split_position(const std::string& stage, const std::string& x) const {
    std::optional<size_t> first;
    for (size_t n = ds_.size(); n-- > 0;) {
      const Decision& d = ds_[n];
      if (d.stage != stage) continue;
      first = n;
      if (d.kind == DecisionKind::kSplit && !d.axes.empty() && (d.axes[0] + ".o" == x || d.axes[0] + ".i" == x))
        return n + 1;
      if (d.kind == DecisionKind::kFuse && d.axes.size() == 2 && d.axes[0] + "+" + d.axes[1] == x) return std::nullopt;
    }
    return first ? *first : insert_position(stage);
  }

  // The input with `split stage x by factor` inserted at `at` and the later references to x renamed: a reorder names
  // x.o, x.i in its place, an unroll or vectorize names x.i, anything else (a fuse, and a compute_at at x) names x.o;
  // a loop a later fuse (or a split of what it made) names after x is renamed with it. The tile variant then moves x.i
  // to the innermost position before the stage's vectorized loop (the last when there is none) and unrolls it when
  // factor <= kMaxTileUnroll.
  Decisions split_loop(const Tensor& t, const std::vector<int64_t>& dom, const std::string& x, size_t at,
                       int64_t factor, bool tile) const {
    const std::string& stage = t->name;
    const std::string outer = x + ".o", inner = x + ".i";
    Decisions ds = ds_;
    Decision split = make_decision(DecisionKind::kSplit, stage, {x});
    split.factor = factor;
    ds.insert(ds.begin() + at, split);
    std::map<std::string, std::string> renamed = {{x, outer}};  // later loop names: old -> new
    auto rename = [&](std::string& a) {
      if (auto it = renamed.find(a); it != renamed.end()) a = it->second;
    };
    for (size_t k = at + 1; k < ds.size(); ++k) {
      Decision& d = ds[k];
      if (d.stage != stage || d.kind == DecisionKind::kComputeAt || d.axes.empty()) continue;
      if (d.kind == DecisionKind::kReorder) {
        std::vector<std::string> order;
        for (const std::string& a : d.axes) {
          if (a == x) {
            order.push_back(outer);
            order.push_back(inner);
          } else {
            order.push_back(a);
            rename(order.back());
          }
        }
        d.axes = order;
      } else if (d.kind == DecisionKind::kUnroll || d.kind == DecisionKind::kVectorize) {
        if (d.axes[0] == x)
          d.axes[0] = inner;
        else
          rename(d.axes[0]);
      } else if (d.kind == DecisionKind::kFuse && d.axes.size() == 2) {
        std::string before = d.axes[0] + "+" + d.axes[1];
        for (std::string& a : d.axes) rename(a);
        if (std::string after = d.axes[0] + "+" + d.axes[1]; after != before) renamed[before] = after;
      } else if (d.kind == DecisionKind::kSplit) {
        std::string before = d.axes[0];
        rename(d.axes[0]);
        if (d.axes[0] != before)
          for (const char* part : {".o", ".i"}) renamed[before + part] = d.axes[0] + part;
      } else {
        for (std::string& a : d.axes) rename(a);
      }
    }
    for (Decision& d : ds)
      if (d.kind == DecisionKind::kComputeAt && d.target == stage && !d.axes.empty()) rename(d.axes[0]);
    if (tile) move_inward(t, dom, ds, at, inner);
    if (tile && factor <= kMaxTileUnroll) {
      size_t end = 0;
      for (size_t k = 0; k < ds.size(); ++k)
        if (ds[k].stage == stage) end = k + 1;
      ds.insert(ds.begin() + end, make_decision(DecisionKind::kUnroll, stage, {inner}));
    }
    return ds;
  }

  // Moves loop `inner` of t's stage (made by the split at ds[at]) to the innermost position before the stage's
  // vectorized loop (the last position when there is none): within each reorder list that names it (just before the
  // vectorized loop where the list names it, else last), or, when that does not put it there, by a reorder of all
  // the stage's loops after its last split or reorder before its first fuse after `at`.
  static void move_inward(const Tensor& t, const std::vector<int64_t>& dom, Decisions& ds, size_t at,
                          const std::string& inner) {
    const std::string& stage = t->name;
    std::vector<Loop> final_loops = replay_loops(t, dom, ds, ds.size());
    auto vectorized = std::find_if(final_loops.begin(), final_loops.end(),
                                   [](const Loop& l) { return l.kind == LoopKind::kVectorized; });
    const std::string vector_loop = vectorized == final_loops.end() ? "" : vectorized->name;
    auto move_before_vector_loop = [&](std::vector<std::string>& list) {
      list.erase(std::remove(list.begin(), list.end(), inner), list.end());
      list.insert(std::find(list.begin(), list.end(), vector_loop), inner);
    };
    auto in_place = [&](const Decisions& of) {
      std::vector<Loop> loops = replay_loops(t, dom, of, of.size());
      int p = position(loops, inner);
      return p >= 0 && (vector_loop.empty() ? p + 1 == int(loops.size())
                                            : p + 1 < int(loops.size()) && loops[p + 1].name == vector_loop);
    };
    if (in_place(ds)) return;
    Decisions lists = ds;
    for (size_t k = at + 1; k < lists.size(); ++k)
      if (lists[k].stage == stage && lists[k].kind == DecisionKind::kReorder &&
          std::find(lists[k].axes.begin(), lists[k].axes.end(), inner) != lists[k].axes.end())
        move_before_vector_loop(lists[k].axes);
    if (lists != ds && in_place(lists)) {
      ds = std::move(lists);
      return;
    }
    size_t after = at;
    for (size_t k = at + 1; k < ds.size(); ++k) {
      if (ds[k].stage != stage) continue;
      if (ds[k].kind == DecisionKind::kFuse) break;
      if (ds[k].kind == DecisionKind::kSplit || ds[k].kind == DecisionKind::kReorder) after = k;
    }
    std::vector<std::string> order;
    for (const Loop& l : replay_loops(t, dom, ds, after + 1)) order.push_back(l.name);
    move_before_vector_loop(order);
    ds.insert(ds.begin() + after + 1, make_decision(DecisionKind::kReorder, stage, order));
  }

  const Program& program_;
  const Schedule& input_;
  MutationOptions options_;
  Decisions ds_;  // the input without explicit_vectors
  bool gpu_ = false;
  std::map<std::string, int> topo_;                                     // compute -> topological position
  std::optional<std::map<std::string, std::vector<int64_t>>> regions_;  // buffer -> shape in the lowered input
};

}  // namespace

const char* mutation_kind_name(MutationKind kind) {
  switch (kind) {
    case MutationKind::kResplit: return "resplit";
    case MutationKind::kUnroll: return "unroll";
    case MutationKind::kReorder: return "reorder";
    case MutationKind::kParallelGranularity: return "parallel_granularity";
    case MutationKind::kCacheWrite: return "cache_write";
    case MutationKind::kComputeLocation: return "compute_location";
    case MutationKind::kSplit: return "split";
    case MutationKind::kVectorAxis: return "vector_axis";
  }
  return "?";
}

std::vector<MutationKind> all_mutation_kinds() {
  return {MutationKind::kResplit,    MutationKind::kUnroll,
          MutationKind::kReorder,    MutationKind::kParallelGranularity,
          MutationKind::kCacheWrite, MutationKind::kComputeLocation,
          MutationKind::kSplit,      MutationKind::kVectorAxis};
}

std::optional<Schedule> mutate(const Program& program, const Schedule& schedule, std::mt19937_64& rng,
                               const MutationOptions& options) {
  // A schedule with batch decisions is about the batched program's computes: it mutates as a schedule of that.
  if (!batch_groups_of(schedule).empty()) {
    std::optional<Schedule> out = mutate(batched_program(program, schedule), without_batches(schedule), rng, options);
    return out ? std::optional<Schedule>(after_batches(schedule, *out)) : std::nullopt;
  }
  Mutator mutator(program, schedule, options);
  std::vector<std::vector<Mutator::Move>> applicable;
  for (MutationKind kind : all_mutation_kinds())
    if (std::vector<Mutator::Move> moves = mutator.moves(kind); !moves.empty()) applicable.push_back(std::move(moves));
  while (!applicable.empty()) {
    size_t pick = std::uniform_int_distribution<size_t>(0, applicable.size() - 1)(rng);
    std::vector<Mutator::Move> moves = std::move(applicable[pick]);
    applicable.erase(applicable.begin() + pick);
    if (std::optional<Schedule> out = mutator.try_moves(std::move(moves), rng)) return out;
  }
  return std::nullopt;
}

std::optional<Schedule> mutate(const Program& program, const Schedule& schedule, MutationKind kind,
                               std::mt19937_64& rng, const MutationOptions& options) {
  if (!batch_groups_of(schedule).empty()) {
    std::optional<Schedule> out =
        mutate(batched_program(program, schedule), without_batches(schedule), kind, rng, options);
    return out ? std::optional<Schedule>(after_batches(schedule, *out)) : std::nullopt;
  }
  Mutator mutator(program, schedule, options);
  return mutator.try_moves(mutator.moves(kind), rng);
}

std::optional<Schedule> crossover(const Program& program, const Schedule& a, const Schedule& b, std::mt19937_64& rng,
                                  const MutationOptions& options) {
  if (!(a.layout() == b.layout()) || batch_groups_of(a) != batch_groups_of(b)) return std::nullopt;
  if (!batch_groups_of(a).empty()) {
    std::optional<Schedule> out =
        crossover(batched_program(program, a), without_batches(a), without_batches(b), rng, options);
    return out ? std::optional<Schedule>(after_batches(a, *out)) : std::nullopt;
  }
  std::vector<std::string> stages;
  std::map<std::string, Decisions> of_a, of_b;
  for (const auto& [parent, of] : {std::pair{&a, &of_a}, std::pair{&b, &of_b}})
    for (const Decision& d : without_explicit_vectors(*parent)) {
      if (!of_a.count(d.stage) && !of_b.count(d.stage)) stages.push_back(d.stage);
      (*of)[d.stage].push_back(d);
    }
  std::vector<std::string> differing;
  for (const std::string& s : stages)
    if (of_a[s] != of_b[s]) differing.push_back(s);
  if (differing.size() < 2) return std::nullopt;  // every child would be a or b
  bool gpu = is_gpu_schedule(a) || is_gpu_schedule(b);
  std::set<std::vector<bool>> tried;
  for (int attempt = 0; attempt < options.max_attempts; ++attempt) {
    std::vector<bool> from_b(differing.size());
    for (size_t n = 0; n < from_b.size(); ++n) from_b[n] = std::uniform_int_distribution<int>(0, 1)(rng) == 1;
    if (std::all_of(from_b.begin(), from_b.end(), [&](bool x) { return x == from_b[0]; })) {
      size_t flip = std::uniform_int_distribution<size_t>(0, from_b.size() - 1)(rng);
      from_b[flip] = !from_b[flip];
    }
    if (!tried.insert(from_b).second) continue;
    std::map<std::string, bool> take_b;
    for (size_t n = 0; n < differing.size(); ++n) take_b[differing[n]] = from_b[n];
    Decisions child;
    for (const std::string& s : stages) {
      const Decisions& from = take_b.count(s) && take_b.at(s) ? of_b[s] : of_a[s];
      child.insert(child.end(), from.begin(), from.end());
    }
    std::optional<Schedule> out = lowered_schedule(program, std::move(child), a.layout(), gpu, options);
    if (out && !(*out == a) && !(*out == b)) return out;
  }
  return std::nullopt;
}

}  // namespace ingot
