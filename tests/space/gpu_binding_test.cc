// bind_blocks_and_threads: the loop nest it makes (block loop, thread loop, reductions inside), the launch that
// follows from it, and what it rejects.
#include "space/gpu_binding.h"

#include <gtest/gtest.h>

#include <stdexcept>

#include "codegen/cuda_printer.h"
#include "interp/interpreter.h"
#include "lower/lower.h"
#include "workloads/examples.h"

namespace ingot {
namespace {

TEST(GpuBinding, OuterPartsBecomeBlocksAndInnerPartsThreads) {
  Program p = matmul(64, 32, 16);
  Tensor c = p.computes().back();
  ASSERT_EQ(c->axes.size(), 2u);
  Schedule s;
  std::string thread = bind_blocks_and_threads(s, c, {4, 32});
  EXPECT_EQ(thread, c->axes[0].name() + ".i+" + c->axes[1].name() + ".i");
  LoopFunction f = lower(p, s);
  CudaLaunchConfig launch = cuda_launch_config(f);
  EXPECT_EQ(launch.grid, (std::array<int64_t, 3>{16, 1, 1}));    // 64 / 4 x 32 / 32
  EXPECT_EQ(launch.block, (std::array<int64_t, 3>{128, 1, 1}));  // 4 x 32
  // The reduction runs inside the thread loop: one thread per output element.
  std::string loops = to_string(f);
  EXPECT_LT(loops.find("threadIdx.x"), loops.find("for " + c->reduction()->axes[0].name()));
}

TEST(GpuBinding, FactorsMustMatchTheSpatialAxes) {
  Program p = matmul(8, 8, 8);
  Schedule s;
  EXPECT_THROW(bind_blocks_and_threads(s, p.computes().back(), {2}), std::invalid_argument);
}

}  // namespace
}  // namespace ingot
