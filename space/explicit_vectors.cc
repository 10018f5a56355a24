#include "space/explicit_vectors.h"

#include <optional>
#include <stdexcept>
#include <unordered_set>

#include "ir/horizontal_batch.h"
#include "lower/lower.h"
#include "lower/vector_tiles.h"

namespace ingot {

namespace {

// The stage and loop of a lowered loop variable "<stage>.<loop>". Loop names hold dots too ("j.i"), and so may
// stage names: the longest prefix ending before a dot that names a compute wins.
std::pair<std::string, std::string> stage_and_loop(const std::unordered_set<std::string>& computes,
                                                   const std::string& loop_var) {
  for (size_t dot = loop_var.rfind('.'); dot != std::string::npos && dot > 0; dot = loop_var.rfind('.', dot - 1))
    if (computes.count(loop_var.substr(0, dot))) return {loop_var.substr(0, dot), loop_var.substr(dot + 1)};
  throw std::logic_error("explicit_vectors: loop '" + loop_var + "' belongs to no compute");
}

}  // namespace

Schedule with_explicit_vectors(const Program& program, Schedule schedule, int64_t simd_fp32_lanes) {
  if (!is_explicit_vector_width(simd_fp32_lanes)) return schedule;
  std::unordered_set<std::string> computes, seen;
  // A schedule with batch decisions is about the batched program's computes (no copy of the program without them).
  std::optional<Program> batched;
  if (!batch_groups_of(schedule).empty()) batched = batched_program(program, schedule);
  for (const Tensor& t : (batched ? *batched : program).computes()) computes.insert(t->name);
  for (const std::string& site : explicit_vector_sites(lower(program, schedule).body, simd_fp32_lanes)) {
    if (!seen.insert(site).second) continue;
    auto [stage, loop] = stage_and_loop(computes, site);
    schedule.explicit_vectors(stage, loop, simd_fp32_lanes);
  }
  return schedule;
}

}  // namespace ingot
