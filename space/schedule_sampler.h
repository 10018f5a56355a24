// Samples random, valid schedules for a whole program: per compute, inline / compute_at / root, then tiling,
// loop order, parallel or GPU binding, vectorize (a reduction along memory: its reduction axis, possibly around a
// register tile of rows), unroll, cache_write and cache_read choices. The same seed
// gives the same schedule. It is the search space's first generator (random search) and the source of the
// property tests that check generated code against the interpreter.
#pragma once

#include <cstdint>
#include <random>

#include "ir/program.h"
#include "ir/schedule.h"

namespace ingot {

struct SamplerOptions {
  bool gpu = false;           // bind loops to blockIdx/threadIdx instead of parallel/vectorize
  int max_vector_lanes = 64;  // vectorize an innermost loop only up to this extent
  int max_threads = 256;      // gpu: largest thread-loop extent
  int simd_fp32_lanes = 16;   // CPU: fp32 lanes of the target's vectors; register tiles get explicit_vectors at 16, 8
  // A partition plan's layout (space/strategy_schedule.h plan_layout): when set, every sampled schedule carries
  // it, and a compute is inlined or computed inside its reader only when the two are in one step (stage).
  StageLayout layout;
};

// Every decision it emits is accepted by lower() (checked by tests over many seeds). On the CPU the schedule ends with
// the explicit-vectors rule (space/explicit_vectors.h): its register tiles that qualify are held in vectors.
Schedule sample_schedule(const Program& program, std::mt19937_64& rng, const SamplerOptions& options = {});

}  // namespace ingot
