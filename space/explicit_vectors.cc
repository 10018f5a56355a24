#include "space/explicit_vectors.h"

#include <set>
#include <stdexcept>

#include "lower/lower.h"
#include "lower/vector_tiles.h"

namespace ingot {

namespace {

// The stage and loop of a lowered loop variable "<stage>.<loop>" (loop names hold dots too: the longest stage name
// that prefixes it wins).
std::pair<std::string, std::string> stage_and_loop(const Program& program, const std::string& loop_var) {
  std::string stage;
  for (const Tensor& t : program.computes()) {
    const std::string& name = t->name;
    if (name.size() > stage.size() && loop_var.size() > name.size() + 1 &&
        loop_var.compare(0, name.size(), name) == 0 && loop_var[name.size()] == '.')
      stage = name;
  }
  if (stage.empty()) throw std::logic_error("explicit_vectors: loop '" + loop_var + "' belongs to no compute");
  return {stage, loop_var.substr(stage.size() + 1)};
}

}  // namespace

Schedule with_explicit_vectors(const Program& program, Schedule schedule, int64_t simd_fp32_lanes) {
  if (simd_fp32_lanes != kExplicitVectorLanes) return schedule;
  std::set<std::string> seen;
  for (const std::string& site : explicit_vector_sites(lower(program, schedule).body, kExplicitVectorLanes)) {
    if (!seen.insert(site).second) continue;
    auto [stage, loop] = stage_and_loop(program, site);
    schedule.explicit_vectors(stage, loop, kExplicitVectorLanes);
  }
  return schedule;
}

}  // namespace ingot
