#include "space/gpu_binding.h"

#include <stdexcept>

namespace ingot {

std::string bind_blocks_and_threads(Schedule& s, const Tensor& t, const std::vector<int64_t>& thread_factors) {
  const std::string& name = t->name;
  if (thread_factors.size() != t->axes.size())
    throw std::invalid_argument("bind_blocks_and_threads: '" + name + "' has " + std::to_string(t->axes.size()) +
                                " spatial axes but " + std::to_string(thread_factors.size()) + " thread factors");
  if (t->axes.empty()) return "";
  std::vector<std::string> outer, inner;
  for (size_t n = 0; n < t->axes.size(); ++n) {
    s.split(name, t->axes[n].name(), thread_factors[n]);
    outer.push_back(t->axes[n].name() + ".o");
    inner.push_back(t->axes[n].name() + ".i");
  }
  std::vector<std::string> order = outer;
  order.insert(order.end(), inner.begin(), inner.end());
  if (auto* r = t->reduction())
    for (const IterVar& k : r->axes) order.push_back(k.name());
  s.reorder(name, order);
  std::string block = outer[0], thread = inner[0];
  for (size_t n = 1; n < outer.size(); ++n) {
    s.fuse(name, block, outer[n]);
    block += "+" + outer[n];
  }
  for (size_t n = 1; n < inner.size(); ++n) {
    s.fuse(name, thread, inner[n]);
    thread += "+" + inner[n];
  }
  s.bind(name, block, LoopKind::kBlockX);
  s.bind(name, thread, LoopKind::kThreadX);
  return thread;
}

}  // namespace ingot
