// Schedules written by hand for the example programs (workloads/examples.h): the baseline a tuned search
// must beat, and the schedules the benchmarks time against the naive lowering.
#pragma once

#include <string>

#include "ir/program.h"
#include "ir/schedule.h"

namespace ingot {

// The hand schedule for an example program of any size that the tiles fit; throws std::invalid_argument
// for programs it has no schedule for.
Schedule hand_schedule(const Program& program);

// A register-tiled GEMM schedule for a compute C[i, j] = sum_k ...: rows_per_tile x cols_per_tile output
// tiles accumulated in a local buffer, columns vectorized, B packed per column panel, panels in parallel.
Schedule tiled_gemm_schedule(const std::string& stage, const std::string& b_tensor, int64_t rows_per_tile,
                             int64_t cols_per_tile);

}  // namespace ingot
