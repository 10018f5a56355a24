// Stage intervals of hand-built CPU functions: where grid and kernel barriers cut them, the buffers each stores, the
// float operations it executes and the bytes of global buffers it touches.
#include "lower/stage_intervals.h"

#include <gtest/gtest.h>

#include "tests/support/cpu_test_kernels.h"

namespace ingot {
namespace {

using cpu_test::global_buffer;

TEST(StageIntervals, GridBarriersCutAKernelAndKernelBarriersStartTheNext) {
  // Kernel 0: t = x * x + 1 over 8 elements (2 flops each); grid barrier; inside a local allocation, y[i] = t[i] * 3
  // for 4 of them (1 flop), a grid barrier, z[i] = t[i] (no flops). Kernel 1: a 4 x 8 reduction w[i] += x[8 i + j] *
  // t[j] (2 flops each) under a condition whose other branch does nothing.
  Buffer x = global_buffer("x", {32}), t = global_buffer("t", {8}), y = global_buffer("y", {4}),
         z = global_buffer("z", {8}), w = global_buffer("w", {4});
  Buffer scratch = make_buffer("scratch", DType::kFloat32, {4}, MemoryScope::kLocal);
  Expr i = var("i"), j = var("j");
  Stmt first = for_loop(i, 8, LoopKind::kParallel, store(t, i, load(x, i) * load(x, i) + 1.0));
  Stmt scaled = for_loop(
      i, 4, LoopKind::kParallel,
      allocate(scratch, seq({store(scratch, Expr(0), load(t, i) * 3.0), store(y, i, load(scratch, Expr(0)))})));
  Stmt copied = for_loop(i, 8, LoopKind::kParallel, store(z, i, load(t, i)));
  Stmt reduction = for_loop(
      i, 4, LoopKind::kParallel,
      if_then_else(lt(i, Expr(4)),
                   for_loop(j, 8, LoopKind::kSerial, store(w, i, load(w, i) + load(x, i * 8 + j) * load(t, j)))));
  LoopFunction f{"intervals",
                 {x},
                 {y, z, w},
                 {t},
                 seq({first, barrier(BarrierKind::kGrid), scaled, barrier(BarrierKind::kGrid), copied,
                      barrier(BarrierKind::kKernel), reduction})};
  std::vector<StageInterval> intervals = stage_intervals(f);
  ASSERT_EQ(intervals.size(), 4u);
  EXPECT_EQ(intervals[0].kernel, 0u);
  EXPECT_EQ(intervals[0].stores, std::vector<std::string>{"t"});
  EXPECT_EQ(intervals[0].flops, 8 * 2);
  EXPECT_EQ(intervals[0].bytes, (32 + 8) * 4);  // x and t, each once

  EXPECT_EQ(intervals[1].kernel, 0u);
  EXPECT_EQ(intervals[1].stores, std::vector<std::string>{"y"});  // not the local scratch
  EXPECT_EQ(intervals[1].flops, 4 * 1);
  EXPECT_EQ(intervals[1].bytes, (8 + 4) * 4);

  EXPECT_EQ(intervals[2].kernel, 0u);
  EXPECT_EQ(intervals[2].stores, std::vector<std::string>{"z"});
  EXPECT_EQ(intervals[2].flops, 0);

  EXPECT_EQ(intervals[3].kernel, 1u);
  EXPECT_EQ(intervals[3].stores, std::vector<std::string>{"w"});
  EXPECT_EQ(intervals[3].flops, 4 * 8 * 2);
  EXPECT_EQ(intervals[3].bytes, (4 + 32 + 8) * 4);
}

TEST(StageIntervals, AFunctionWithoutBarriersIsOneInterval) {
  std::vector<StageInterval> intervals = stage_intervals(cpu_test::matmul_function());
  ASSERT_EQ(intervals.size(), 1u);
  EXPECT_EQ(intervals[0].stores, std::vector<std::string>{"C"});
  // A zero-fill, a multiply-add per k and a copy-out per output column: 2 flops per multiply-add only.
  EXPECT_EQ(intervals[0].flops, cpu_test::kMatmulM * cpu_test::kMatmulK * cpu_test::kMatmulN * 2);
}

}  // namespace
}  // namespace ingot
