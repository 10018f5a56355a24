// cuda_run: without a GPU it says why and touches nothing; with one, a lowered program with several kernels
// (some identical up to names, some cooperative) computes what the interpreter computes, and is timed.
#include "runtime/cuda_run.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "analysis/strategies.h"
#include "codegen/cuda_printer.h"
#include "codegen/pipeline.h"
#include "compile/nvrtc_compiler.h"
#include "interp/interpreter.h"
#include "lower/lower.h"
#include "runtime/cuda_driver.h"
#include "space/strategy_schedule.h"
#include "workloads/examples.h"

namespace ingot {
namespace {

using ::testing::HasSubstr;

TEST(CudaRun, WithoutAGpuSaysWhy) {
  auto driver = CudaDriver::open();
  if (driver->available()) GTEST_SKIP() << "a GPU is here: " << driver->device_name();
  Program p = matmul_bias_relu(4, 8, 2);
  TensorMap inputs = random_inputs(p, 1);
  TensorMap expected = interpret(p, inputs);
  try {
    cuda_run(p, lower(p, Schedule()), inputs, expected);
    ADD_FAILURE() << "cuda_run ran without a GPU";
  } catch (const CudaError& e) {
#ifdef INGOT_HAVE_CUDA
    EXPECT_THAT(e.what(), HasSubstr("no usable GPU"));
    EXPECT_THAT(e.what(), HasSubstr(driver->reason()));
#else
    EXPECT_THAT(e.what(), HasSubstr("without the CUDA toolkit"));
#endif
  }
}

#ifdef INGOT_HAVE_CUDA

// two_gemm one kernel per operator (unfused), and as one cooperative kernel with grid barriers (global). The
// registers reported for each launched kernel are the loaded kernel's; ptxas's figure for the same canonical source
// agrees where NVRTC's log has one (in a process that holds a CUDA context it came back empty with CUDA 13.0 on an
// H200, which is why cuda_run asks the driver).
TEST(CudaRun, KernelsMatchTheInterpreterOnTheGpu) {
  auto driver = CudaDriver::open();
  if (!driver->available()) GTEST_SKIP() << "no usable GPU: " << driver->reason();
  Program p = two_gemm(64, 32, 48, 16);
  TensorMap inputs = random_inputs(p, 3);
  TensorMap expected = interpret(p, inputs);
  FixedScheduleOptions gpu;
  gpu.gpu = true;
  CudaRunOptions options;
  options.min_repeat_ms = 1;
  for (const char* strategy : {"unfused", "global"}) {
    StrategyProgram sp = make_strategy_program(p, strategy, resolve_target("sm_90"), gpu);
    LoopFunction f = lower(p, sp.schedule);
    CudaRunResult r = cuda_run(p, f, inputs, expected, options);
    for (const Comparison& c : r.checks) EXPECT_TRUE(c.ok) << strategy << ": " << c.message;
    ASSERT_TRUE(r.correct) << strategy;
    EXPECT_EQ(int64_t(r.kernels.size()), sp.plan.kernel_count()) << strategy;
    EXPECT_FALSE(r.seconds.empty());
    EXPECT_GT(r.statistics.median, 0);
    EXPECT_THAT(r.device, HasSubstr(driver->arch()));
    std::vector<LoopFunction> kernels = prepare_for_gpu(f);
    ASSERT_EQ(kernels.size(), r.kernels.size()) << strategy;
    for (size_t i = 0; i < kernels.size(); ++i) {
      EXPECT_GT(r.kernels[i].registers, 0) << strategy << " " << r.kernels[i].name;
      EXPECT_EQ(r.kernels[i].local_bytes, 0) << strategy << " " << r.kernels[i].name;
      CudaBinary bin = compile_cuda(print_cuda_canonical(kernels[i]), driver->arch(), "ingot_kernel");
      if (bin.registers > 0) {
        EXPECT_EQ(r.kernels[i].registers, bin.registers) << strategy << ":\n" << bin.log;
      }
    }
  }
}

#endif  // INGOT_HAVE_CUDA

}  // namespace
}  // namespace ingot
