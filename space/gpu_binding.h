// Binds a compute's loops to the GPU in the one shape ingot's GPU schedules use: every spatial axis split by
// its thread factor, the outer parts fused into one blockIdx.x loop, the inner parts into one threadIdx.x loop,
// the reduction axes inside. Shared by the sampler's random GPU schedules and the fixed strategy schedules.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/schedule.h"
#include "ir/tensor.h"

namespace ingot {

// thread_factors has one factor per spatial axis of t (each dividing its extent). Returns the name of the
// fused thread loop, or "" when t has no spatial axis (nothing is bound).
std::string bind_blocks_and_threads(Schedule& s, const Tensor& t, const std::vector<int64_t>& thread_factors);

}  // namespace ingot
