#include "space/schedule_sampler.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "analysis/access.h"
#include "space/explicit_vectors.h"
#include "space/gpu_binding.h"
#include "space/root_loop_nest.h"

namespace ingot {

namespace {

std::vector<int64_t> divisors(int64_t n) {
  std::vector<int64_t> out;
  for (int64_t d = 1; d <= n; ++d)
    if (n % d == 0) out.push_back(d);
  return out;
}

class Sampler {
 public:
  Sampler(const Program& p, std::mt19937_64& rng, const SamplerOptions& o) : program_(p), rng_(rng), options_(o) {
    for (size_t n = 0; n < o.layout.size(); ++n)
      for (const std::string& c : o.layout[n].computes) step_of_[c] = int64_t(n);
  }

  Schedule run() {
    std::vector<Tensor> computes = program_.computes();
    // Readers first: a stage placed inside its reader needs the reader's loop names.
    for (auto it = computes.rbegin(); it != computes.rend(); ++it) schedule_stage(*it);
    // Decisions are grouped per stage in topological order so the JSON reads naturally.
    Schedule out;
    for (const Tensor& t : computes)
      for (Decision& d : per_stage_[t->name]) out.append(std::move(d));
    out.set_layout(options_.layout);
    return out;
  }

 private:
  bool chance(double p) { return std::uniform_real_distribution<double>(0, 1)(rng_) < p; }
  template <class T>
  const T& pick(const std::vector<T>& xs) {
    return xs[std::uniform_int_distribution<size_t>(0, xs.size() - 1)(rng_)];
  }

  // The only stage that reads t once inlined stages are seen through, or "" when several (or none) do.
  std::string sole_reader(const Tensor& t) {
    std::vector<std::string> readers;
    std::vector<Tensor> frontier = {t};
    while (!frontier.empty()) {
      Tensor cur = frontier.back();
      frontier.pop_back();
      for (const Tensor& c : program_.readers(cur)) {
        if (inlined_.count(c->name))
          frontier.push_back(c);
        else if (std::find(readers.begin(), readers.end(), c->name) == readers.end())
          readers.push_back(c->name);
      }
    }
    return readers.size() == 1 ? readers[0] : "";
  }

  // Whether the layout lets t be computed inside its readers: all of them are in t's step (or there is no layout).
  bool fusible_in_its_step(const Tensor& t) {
    if (step_of_.empty()) return true;
    for (const Tensor& c : program_.readers(t))
      if (step_of_.at(c->name) != step_of_.at(t->name)) return false;
    return true;
  }

  void emit(const Tensor& t, Decision d) {
    d.stage = t->name;
    per_stage_[t->name].push_back(std::move(d));
  }

  // The computation of t up to the names of the tensors it reads: its shape, axes and body, with each read
  // tensor named by its position in t->inputs().
  std::string signature(const Tensor& t) {
    std::string body = tensor_definition(t), out;
    std::map<std::string, std::string> position;
    std::vector<Tensor> inputs = t->inputs();
    for (size_t n = 0; n < inputs.size(); ++n) position[inputs[n]->name] = "@" + std::to_string(n);
    position[t->name] = "@out";
    auto identifier_char = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.'; };
    for (size_t i = 0; i < body.size();) {
      if (!identifier_char(body[i])) {
        out += body[i++];
        continue;
      }
      size_t end = i;
      while (end < body.size() && identifier_char(body[end])) ++end;
      std::string word = body.substr(i, end - i);
      auto it = position.find(word);
      out += it != position.end() ? it->second : word;
      i = end;
    }
    return out;
  }

  // Stages with the same computation, the same role and a reader of the same group take the same decisions:
  // a whole model repeats a few computations many times (every LSTM cell, every BERT layer), and one
  // schedule per kind keeps the generated program small enough to compile (the C++ printer prints
  // identical loop nests once) while the search still chooses per kind of stage.
  bool follow_representative(const Tensor& t) {
    std::string reader = program_.is_output(t) ? "" : sole_reader(t);
    // Readers are scheduled first (readers before producers), so the reader's group is known; two readers
    // of one group have the same loops to attach to.
    std::string key = signature(t) + "|" + (program_.is_output(t) ? "output" : "") +
                      (fusible_in_its_step(t) ? "" : "|unfusible") + "|" +
                      (reader.empty() ? "" : std::to_string(group_.at(reader)));
    auto [it, is_new] = representative_.emplace(key, std::make_pair(t, int64_t(representative_.size())));
    group_[t->name] = it->second.second;
    if (is_new) return false;
    const Tensor& r = it->second.first;
    std::vector<Tensor> r_inputs = r->inputs(), t_inputs = t->inputs();
    for (Decision d : per_stage_[r->name]) {
      if (d.kind == DecisionKind::kComputeAt) d.target = reader;
      if (d.kind == DecisionKind::kCacheRead)
        for (size_t n = 0; n < r_inputs.size(); ++n)
          if (r_inputs[n]->name == d.tensor) {
            d.tensor = t_inputs[n]->name;
            break;
          }
      emit(t, d);
    }
    if (inlined_.count(r->name)) inlined_.insert(t->name);
    if (auto points = attach_points_.find(r->name); points != attach_points_.end())
      attach_points_[t->name] = points->second;
    return true;
  }

  void schedule_stage(const Tensor& t) {
    if (follow_representative(t)) return;
    Schedule s;
    bool reduction = t->reduction() != nullptr;
    bool output = program_.is_output(t);
    std::string reader = output || !fusible_in_its_step(t) ? "" : sole_reader(t);
    // Inlined only into a sole reader: a tensor inlined into several readers is computed once per reader, and
    // along a recurrence (each LSTM c read by the next c and by h) the copies nest into expressions that
    // grow with every step.
    if (!reduction && !output && !reader.empty() && chance(0.5)) {
      inlined_.insert(t->name);
      s.compute_inline(t->name);
      adopt(t, s);
      return;
    }
    if (!output && !reader.empty() && !options_.gpu && chance(0.35)) {
      const std::vector<std::string>& loops = attach_points_[reader];
      if (!loops.empty()) {
        s.compute_at(t->name, reader, pick(loops));
        std::vector<std::string> leaves = natural_leaves(t);
        if (!reduction && chance(0.5)) s.vectorize(t->name, leaves.back());
        adopt(t, s);
        return;
      }
    }
    if (options_.gpu)
      schedule_gpu_root(t, s);
    else
      schedule_cpu_root(t, s);
    adopt(t, s);
  }

  void adopt(const Tensor& t, const Schedule& s) {
    for (const Decision& d : s.decisions()) emit(t, d);
  }

  std::vector<std::string> natural_leaves(const Tensor& t) {
    std::vector<std::string> names;
    for (const IterVar& a : t->axes) names.push_back(a.name());
    if (auto* r = t->reduction())
      for (const IterVar& k : r->axes) names.push_back(k.name());
    return names;
  }

  // Picks an inner extent for an axis: a divisor most of the time, sometimes a guarded non-divisor.
  std::pair<int64_t, bool> tile(int64_t extent, int64_t cap) {
    if (extent > 3 && chance(0.15)) {
      int64_t f = std::uniform_int_distribution<int64_t>(2, std::min<int64_t>(extent - 1, cap))(rng_);
      return {f, extent % f != 0};
    }
    std::vector<int64_t> ds;
    for (int64_t d : divisors(extent))
      if (d <= cap) ds.push_back(d);
    return {pick(ds), false};
  }

  void schedule_cpu_root(const Tensor& t, Schedule& s) {
    const std::string& name = t->name;
    std::vector<std::string> outer, inner, red_outer, red_inner;
    std::vector<int64_t> inner_extent;
    for (const IterVar& a : t->axes) {
      auto [f, guard] = tile(a.extent, 64);
      if (f == 1 || f == a.extent) {
        (f == 1 ? outer : inner).push_back(a.name());
        if (f != 1) inner_extent.push_back(a.extent);
        continue;
      }
      s.split(name, a.name(), f, guard ? SplitTail::kGuard : SplitTail::kExact);
      outer.push_back(a.name() + ".o");
      inner.push_back(a.name() + ".i");
      inner_extent.push_back(f);
    }
    if (auto* r = t->reduction())
      for (const IterVar& k : r->axes) {
        auto [f, guard] = tile(k.extent, 32);
        if (f == 1 || f == k.extent) {
          (f == 1 ? red_outer : red_inner).push_back(k.name());
          continue;
        }
        s.split(name, k.name(), f, guard ? SplitTail::kGuard : SplitTail::kExact);
        red_outer.push_back(k.name() + ".o");
        red_inner.push_back(k.name() + ".i");
      }
    // Loop order: spatial outer, reduce outer, spatial inner but the last, reduce inner, last spatial inner.
    std::string last;
    int64_t last_extent = 0;
    if (!inner.empty()) {
      last = inner.back();
      last_extent = inner_extent.back();
      inner.pop_back();
    }
    // A reduction along memory (W[row, k]) may instead run its innermost reduction loop last, vectorized as a
    // simd reduction (a dot product per output).
    bool reduction_vectorized = false;
    if (const ReduceNode* r = t->reduction(); r && !red_inner.empty()) {
      const std::string& k = r->axes.back().name();
      bool innermost_is_k = red_inner.back() == k || red_inner.back() == k + ".i";
      if (innermost_is_k && reduction_axes_along_memory(t).count(k)) reduction_vectorized = chance(0.5);
    }
    // ... around a register tile: 2 to 8 outputs of the last spatial loop unrolled inside the reduction, one
    // accumulator each (the C++ printer's multi-accumulator simd reduction).
    std::string register_tile;
    if (reduction_vectorized && !last.empty() && chance(0.5)) {
      std::vector<int64_t> factors;
      for (int64_t f : {2, 4, 8})
        if (f < last_extent && last_extent % f == 0) factors.push_back(f);
      if (last_extent <= 8) {
        register_tile = last;
        last.clear();
      } else if (!factors.empty()) {
        int64_t f = pick(factors);
        s.split(name, last, f);
        register_tile = last + ".i";
        last += ".o";
        last_extent /= f;
      }
    }
    RootLoopNest nest;
    nest.outer = outer;
    nest.reduction_outer = red_outer;
    nest.inner = inner;
    if (reduction_vectorized && !last.empty()) nest.inner.push_back(last);
    nest.reduction_inner = red_inner;
    if (!register_tile.empty()) nest.tile.push_back(register_tile);
    if (!reduction_vectorized) nest.innermost = last;
    if (outer.size() >= 2 && chance(0.5)) nest.fused = 2;
    std::vector<std::string> order = root_loop_order(nest);
    size_t loops = order.size() - (nest.fused - 1);
    bool first_is_spatial = !outer.empty() || (red_outer.empty() && !nest.inner.empty());
    nest.parallel = first_is_spatial && chance(0.8);
    nest.vectorize_reduction = reduction_vectorized;
    bool vectorized = false;
    if (!reduction_vectorized) {
      if (!last.empty() && loops > 1 && last_extent <= options_.max_vector_lanes && chance(0.8)) {
        nest.innermost_kind = RootLoopNest::Innermost::kVectorized;
        vectorized = true;
      }
      nest.unroll_reduction_inner = !red_inner.empty() && chance(0.4);
    }
    // The sampler always wrote a loop order, even of one loop: kept, so that its candidates keep their hashes (their
    // identities in existing databases).
    if (order.size() == 1) s.reorder(name, order);
    std::vector<std::string> points = arrange_root_loop_nest(name, nest, s);
    mark_root_loop_nest(name, nest, s);
    // A tile outside the reduction holds whole sums; one inside it (after a reduction loop) holds partial sums.
    if (t->reduction() && !red_outer.empty() && chance(0.2))
      s.cache_write(name, red_outer.back());
    else if (t->reduction() && !points.empty() && chance(0.5))
      s.cache_write(name, points.back());
    // Attach points for producers: spatial loops outside the reduction, never the vectorized loop.
    if (red_outer.empty() && red_inner.empty())
      for (const std::string& n : inner) points.push_back(n);
    if (!vectorized && !last.empty()) points.push_back(last);
    attach_points_[name] = points;
    if (!red_outer.empty() && chance(0.3)) {
      std::vector<Tensor> inputs = t->inputs();
      std::vector<std::string> placeholders;
      for (const Tensor& in : inputs)
        if (in->is_placeholder()) placeholders.push_back(in->name);
      if (!placeholders.empty()) s.cache_read(name, pick(placeholders), MemoryScope::kLocal, red_outer.back());
    }
  }

  void schedule_gpu_root(const Tensor& t, Schedule& s) {
    int64_t threads = 1;
    std::vector<int64_t> factors;
    for (const IterVar& a : t->axes) {
      std::vector<int64_t> ds;
      for (int64_t d : divisors(a.extent))
        if (d * threads <= options_.max_threads) ds.push_back(d);
      factors.push_back(pick(ds));
      threads *= factors.back();
    }
    std::string thread = bind_blocks_and_threads(s, t, factors);
    if (t->reduction() && !thread.empty() && chance(0.5)) s.cache_write(t->name, thread);
    attach_points_[t->name] = {};
  }

  const Program& program_;
  std::mt19937_64& rng_;
  SamplerOptions options_;
  std::map<std::string, std::vector<Decision>> per_stage_;
  std::map<std::string, std::vector<std::string>> attach_points_;
  std::set<std::string> inlined_;
  std::map<std::string, std::pair<Tensor, int64_t>> representative_;  // group key -> first stage, group id
  std::map<std::string, int64_t> group_;                              // stage -> its group's id
  std::map<std::string, int64_t> step_of_;                            // compute -> its layout step
};

}  // namespace

Schedule sample_schedule(const Program& program, std::mt19937_64& rng, const SamplerOptions& options) {
  Schedule s = Sampler(program, rng, options).run();
  return options.gpu ? s : with_explicit_vectors(program, std::move(s), options.simd_fp32_lanes);
}

}  // namespace ingot
