#include "space/sketch_space.h"

#include <array>

#include "space/schedule_mutation.h"

namespace ingot {

namespace {
// The thread-loop extents a GPU sketch draws from (at most; strategy_schedule takes divisors of the axes).
constexpr std::array<int, 5> kGpuThreadsPerBlock = {32, 64, 128, 256, 512};
}  // namespace

SketchSpace::SketchSpace(Program program, PartitionPlan plan, FixedScheduleOptions fixed, SamplerOptions sampler,
                         double sampler_share)
    : program_(std::move(program)),
      plan_(std::move(plan)),
      fixed_(std::move(fixed)),
      sampler_(std::move(sampler)),
      sampler_share_(sampler_share),
      fixed_schedule_(strategy_schedule(program_, plan_, fixed_)) {}

Schedule SketchSpace::draw(std::mt19937_64& rng) const {
  if (std::uniform_real_distribution<double>(0.0, 1.0)(rng) < sampler_share_)
    return sample_schedule(program_, rng, sampler_);
  FixedScheduleOptions knobs = sample_template_knobs(rng, fixed_);
  // On a GPU the CPU knobs hardly apply; the threads per block are what the fixed schedule fixes.
  if (fixed_.gpu) knobs.gpu_threads = kGpuThreadsPerBlock[rng() % kGpuThreadsPerBlock.size()];
  Schedule s = strategy_schedule(program_, plan_, knobs);
  MutationOptions mutation;
  mutation.simd_fp32_lanes = fixed_.simd_fp32_lanes;
  const int mutations = int(rng() % 3);
  for (int m = 0; m < mutations; ++m)
    if (std::optional<Schedule> child = mutate(program_, s, rng, mutation)) s = std::move(*child);
  return s;
}

}  // namespace ingot
