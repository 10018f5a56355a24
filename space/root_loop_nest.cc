#include "space/root_loop_nest.h"

namespace ingot {

std::vector<std::string> root_loop_order(const RootLoopNest& nest) {
  std::vector<std::string> order = nest.outer;
  order.insert(order.end(), nest.reduction_outer.begin(), nest.reduction_outer.end());
  order.insert(order.end(), nest.inner.begin(), nest.inner.end());
  order.insert(order.end(), nest.reduction_inner.begin(), nest.reduction_inner.end());
  order.insert(order.end(), nest.tile.begin(), nest.tile.end());
  if (!nest.innermost.empty()) order.push_back(nest.innermost);
  return order;
}

std::vector<std::string> arrange_root_loop_nest(const std::string& stage, const RootLoopNest& nest, Schedule& s) {
  std::vector<std::string> order = root_loop_order(nest);
  if (order.size() > 1) s.reorder(stage, order);

  std::vector<std::string> outer = nest.outer;
  if (nest.fused > 1 && nest.fused <= outer.size()) {
    std::string fused = outer[0];
    for (size_t n = 1; n < nest.fused; ++n) {
      s.fuse(stage, fused, outer[n]);
      fused += "+" + outer[n];
    }
    outer.erase(outer.begin(), outer.begin() + std::ptrdiff_t(nest.fused));
    outer.insert(outer.begin(), fused);
  }
  if (nest.parallel) s.parallel(stage, outer.empty() ? order.front() : outer.front());
  return outer;
}

void mark_root_loop_nest(const std::string& stage, const RootLoopNest& nest, Schedule& s) {
  if (nest.vectorize_reduction && !nest.reduction_inner.empty()) {
    s.vectorize(stage, nest.reduction_inner.back());
    for (const std::string& loop : nest.tile) s.unroll(stage, loop);
  } else {
    if (nest.innermost_kind == RootLoopNest::Innermost::kVectorized) s.vectorize(stage, nest.innermost);
    if (nest.innermost_kind == RootLoopNest::Innermost::kUnrolled) s.unroll(stage, nest.innermost);
    if (nest.unroll_reduction_inner && !nest.reduction_inner.empty()) s.unroll(stage, nest.reduction_inner.back());
  }
}

}  // namespace ingot
