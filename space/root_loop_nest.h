// The loop nest of a stage computed at its root on a CPU, as the strategy scheduler and the random sampler both build
// it: spatial loops (the leading ones fused into the parallel loop), the reduction's outer loops, spatial loops inside
// them, the reduction's inner loops, register-tile loops unrolled inside the reduction, and the innermost spatial
// loop. The generators choose the splits and which loop plays which part; arrange_ and mark_root_loop_nest write the
// decisions (two calls: each generator keeps its cache_write where its candidates' identities always had it). Runs
// while a schedule is being built, after the stage's splits.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "ir/schedule.h"

namespace ingot {

struct RootLoopNest {
  enum class Innermost { kPlain, kVectorized, kUnrolled };

  std::vector<std::string> outer;            // spatial loops outside the reduction, outermost first
  size_t fused = 1;                          // how many leading outer loops become one (fused) loop
  bool parallel = false;                     // the first loop of the nest runs in parallel (it must be spatial)
  std::vector<std::string> reduction_outer;  // reduction loops outside `inner`
  std::vector<std::string> inner;            // spatial loops between the reduction's outer and inner loops
  std::vector<std::string> reduction_inner;  // the last one vectorized when vectorize_reduction
  std::vector<std::string> tile;             // unrolled inside the reduction (register-tile rows and columns)
  std::string innermost;                     // the innermost spatial loop, "" for none
  Innermost innermost_kind = Innermost::kPlain;
  bool vectorize_reduction = false;     // a simd reduction along memory: one dot product per output
  bool unroll_reduction_inner = false;  // the innermost reduction loop unrolled (without vectorize_reduction)
};

// The nest's loops, outermost first, before fusion.
std::vector<std::string> root_loop_order(const RootLoopNest& nest);
// Writes the nest's loop order (when it has two loops or more), fusion and parallel loop for stage. Returns the outer
// loops after fusion (the fused loop first): where producers may be attached and a local output tile may be kept.
std::vector<std::string> arrange_root_loop_nest(const std::string& stage, const RootLoopNest& nest, Schedule& s);
// Writes the nest's vectorized and unrolled loops for stage.
void mark_root_loop_nest(const std::string& stage, const RootLoopNest& nest, Schedule& s);

}  // namespace ingot
