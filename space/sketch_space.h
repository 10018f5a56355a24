// The search space around a fusion plan's strategy schedule (the evolutionary search's sketches): a draw is the
// plan's strategy schedule under template knobs drawn from their ranges (space/strategy_schedule.h), then up to two
// random mutations (space/schedule_mutation.h); a share of the draws comes from the random sampler within the plan's
// layout, for what no template reaches. The fixed schedule (every knob at its default) is one point of it.
#pragma once

#include <cstdint>
#include <optional>
#include <random>

#include "analysis/partition_plan.h"
#include "ir/program.h"
#include "ir/schedule.h"
#include "space/schedule_sampler.h"
#include "space/space_generator.h"
#include "space/strategy_schedule.h"

namespace ingot {

class SketchSpace final : public SpaceGenerator {
 public:
  // fixed: the target's options (lanes, GPU) and the knobs' defaults; sampler: the sampler's, within the plan's
  // layout. Throws what strategy_schedule throws.
  SketchSpace(Program program, PartitionPlan plan, FixedScheduleOptions fixed, SamplerOptions sampler,
              double sampler_share = 0.2);
  const Program& program() const override { return program_; }
  std::optional<int64_t> size() const override { return std::nullopt; }
  // The plan's strategy schedule with the default knobs: what `ingot tune` used to leave unsearched.
  const Schedule& fixed_schedule() const { return fixed_schedule_; }

 protected:
  Schedule draw(std::mt19937_64& rng) const override;

 private:
  Program program_;
  PartitionPlan plan_;
  FixedScheduleOptions fixed_;
  SamplerOptions sampler_;
  double sampler_share_;
  Schedule fixed_schedule_;
};

}  // namespace ingot
