// The example programs, lowered with GPU schedules (blocks, threads, a shared-memory cache, grid barriers
// between stages), print as CUDA that NVRTC compiles for sm_80 and sm_90 without spills.
#include <gtest/gtest.h>

#include <random>

#include "codegen/cuda_printer.h"
#include "compile/nvrtc_compiler.h"
#include "lower/lower.h"
#include "space/schedule_sampler.h"
#include "workloads/examples.h"

namespace ingot {
namespace {

class LoweredForGpu : public ::testing::TestWithParam<std::string> {};

TEST_P(LoweredForGpu, CompilesForAmpereAndHopper) {
  const ExampleProgram& e = find_example(GetParam());
  Program p = e.make_default();
  std::mt19937_64 rng(31);
  SamplerOptions gpu;
  gpu.gpu = true;
  LoopFunction f = lower(p, sample_schedule(p, rng, gpu));
  std::string source = print_cuda(f);
  CudaLaunchConfig launch = cuda_launch_config(f);
  bool multi_stage = false;
  for_each_stmt(f.body, [&](const Stmt& s) {
    if (auto* b = as<BarrierNode>(s)) multi_stage |= b->barrier_kind == BarrierKind::kGrid;
  });
  EXPECT_EQ(launch.cooperative, multi_stage);
  for (const char* arch : {"sm_80", "sm_90"}) {
    CudaBinary bin = compile_cuda(source, arch, cuda_kernel_name(f));
    EXPECT_GT(bin.registers, 0) << arch << "\n" << bin.log;
    EXPECT_FALSE(bin.cubin.empty()) << arch;
    EXPECT_NE(bin.ptx.find(cuda_kernel_name(f)), std::string::npos) << arch;
    EXPECT_EQ(bin.spill_stores, 0) << arch << "\n" << bin.log;
  }
}

INSTANTIATE_TEST_SUITE_P(Examples, LoweredForGpu, ::testing::Values("matmul_bias_relu", "softmax", "two_gemm"));

TEST(LoweredForGpu, SharedMemoryTileCompiles) {
  Program p = matmul(256, 256, 256);
  Schedule s;
  s.split("C", "i", 16)
      .split("C", "j", 16)
      .split("C", "k", 16)
      .reorder("C", {"i.o", "j.o", "k.o", "i.i", "j.i", "k.i"})
      .fuse("C", "i.o", "j.o")
      .fuse("C", "i.i", "j.i")
      .bind("C", "i.o+j.o", LoopKind::kBlockX)
      .bind("C", "i.i+j.i", LoopKind::kThreadX)
      .cache_read("C", "A", MemoryScope::kShared, "k.o")
      .cache_read("C", "B", MemoryScope::kShared, "k.o");
  LoopFunction f = lower(p, s);
  CudaBinary bin = compile_cuda(print_cuda(f), "sm_90", cuda_kernel_name(f));
  EXPECT_EQ(bin.shared_bytes, 2 * 16 * 16 * 4) << bin.log;
  EXPECT_GT(bin.registers, 0);
}

}  // namespace
}  // namespace ingot
