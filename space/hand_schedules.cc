#include "space/hand_schedules.h"

#include <stdexcept>

#include "lower/vector_tiles.h"
#include "space/explicit_vectors.h"

namespace ingot {

Schedule tiled_gemm_schedule(const std::string& stage, const std::string& b_tensor, int64_t rows_per_tile,
                             int64_t cols_per_tile) {
  Schedule s;
  s.split(stage, "i", rows_per_tile)
      .split(stage, "j", cols_per_tile)
      .reorder(stage, {"j.o", "i.o", "k", "i.i", "j.i"})
      .parallel(stage, "j.o")
      .unroll(stage, "i.i")
      .vectorize(stage, "j.i")
      .cache_write(stage, "i.o");
  if (!b_tensor.empty()) s.cache_read(stage, b_tensor, MemoryScope::kLocal, "j.o");
  return s;
}

namespace {

int64_t tile(int64_t extent, int64_t preferred) {
  while (preferred > 1 && extent % preferred) preferred /= 2;
  return preferred;
}

// The loops of the hand schedule, before the explicit-vectors rule.
Schedule hand_loops(const Program& program) {
  const std::string& name = program.name();
  if (name == "matmul") {
    const auto& shape = program.find("C")->shape;
    return tiled_gemm_schedule("C", "B", tile(shape[0], 4), tile(shape[1], 64));
  }
  if (name == "matmul_bias_relu") {
    const auto& shape = program.find("D")->shape;
    int64_t rows = tile(shape[0], 4), cols = tile(shape[1], 64);
    Schedule s;
    s.split("D", "i", rows)
        .split("D", "j", cols)
        .reorder("D", {"j.o", "i.o", "i.i", "j.i"})
        .parallel("D", "j.o")
        .vectorize("D", "j.i")
        .compute_at("C", "D", "i.o")
        .reorder("C", {"k", "i", "j"})
        .unroll("C", "i")
        .vectorize("C", "j");
    return s;
  }
  if (name == "softmax") {
    Schedule s;
    s.compute_inline("e").parallel("row_max", "i").parallel("row_sum", "i").parallel("Y", "i").vectorize("Y", "j");
    return s;
  }
  if (name == "two_gemm") {
    const auto& h = program.find("H")->shape;
    const auto& y = program.find("Y")->shape;
    Schedule s = tiled_gemm_schedule("H", "W1", tile(h[0], 4), tile(h[1], 64));
    Schedule second = tiled_gemm_schedule("Y", "W2", tile(y[0], 4), tile(y[1], 64));
    for (const Decision& d : second.decisions()) s.append(d);
    s.compute_inline("R");
    return s;
  }
  throw std::invalid_argument("no hand schedule for program '" + name +
                              "' (hand schedules exist for matmul, matmul_bias_relu, softmax, two_gemm)");
}

}  // namespace

// Written for AVX-512: the register tiles are explicit 16-lane vectors (a fallback where AVX-512 is missing).
Schedule hand_schedule(const Program& program) {
  return with_explicit_vectors(program, hand_loops(program), kAvx512VectorLanes);
}

}  // namespace ingot
