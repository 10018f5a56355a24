// Golden generated code: the C++ and CUDA printed for a fixed set of programs and schedules (each small paper
// model under each fusion strategy, the matmul hand schedule, sampled schedules) compared whole with the files in
// tests/codegen/golden/. A change of generated code therefore shows as a diff of those files in review; rewrite
// them with INGOT_UPDATE_GOLDEN=1 (tests/support/golden_file.h). Targets are fixed, never this machine's.
#include <gtest/gtest.h>

#include <random>

#include "codegen/pipeline.h"
#include "space/hand_schedules.h"
#include "space/schedule_sampler.h"
#include "space/strategy_schedule.h"
#include "tests/support/fixed_targets.h"
#include "tests/support/golden_file.h"
#include "workloads/examples.h"
#include "workloads/registry.h"

namespace ingot {
namespace {

using test_support::avx2_cpu;
using test_support::avx512_cpu;

std::filesystem::path golden(const std::string& name) { return test_support::repo_path("tests/codegen/golden") / name; }

Program small_model(const std::string& model) { return make_workload(model, find_workload(model)->small); }

std::string cpp_of(const Program& program, const Schedule& schedule) {
  return compile_to_cpp_source(program, schedule).source;
}

// Every kernel of the function, in order, as the CUDA runtime compiles them one at a time.
std::string cuda_of(const Program& program, const Schedule& schedule) {
  std::string text;
  for (const std::string& kernel : compile_to_cuda_sources(program, schedule)) text += kernel + "\n";
  return text;
}

const std::vector<std::string> kModels = {"lstm", "mmoe", "bert", "resnext", "swin", "efficientnet"};
const std::vector<std::string> kStrategies = {"unfused", "rules", "subgraph", "global"};

class GoldenStrategyCode : public ::testing::TestWithParam<std::string> {};

TEST_P(GoldenStrategyCode, CppOnAvx512) {
  Program p = small_model(GetParam());
  for (const std::string& strategy : kStrategies)
    test_support::expect_golden(golden(GetParam() + "_small_" + strategy + "_avx512.cc.golden"),
                                cpp_of(p, make_strategy_program(p, strategy, avx512_cpu()).schedule));
}

// Eight lanes take other tiles (no stencil tiles, narrower plane tiles, smaller register tiles).
TEST_P(GoldenStrategyCode, CppOnAvx2) {
  Program p = small_model(GetParam());
  for (const char* strategy : {"unfused", "global"})
    test_support::expect_golden(golden(GetParam() + "_small_" + std::string(strategy) + "_avx2.cc.golden"),
                                cpp_of(p, make_strategy_program(p, strategy, avx2_cpu()).schedule));
}

TEST_P(GoldenStrategyCode, CudaOnSm90) {
  Program p = small_model(GetParam());
  FixedScheduleOptions gpu;
  gpu.gpu = true;
  for (const char* strategy : {"unfused", "global"})
    test_support::expect_golden(golden(GetParam() + "_small_" + std::string(strategy) + "_sm_90.cu.golden"),
                                cuda_of(p, make_strategy_program(p, strategy, *find_target("sm_90"), gpu).schedule));
}

INSTANTIATE_TEST_SUITE_P(SmallPaperModels, GoldenStrategyCode, ::testing::ValuesIn(kModels));

TEST(GoldenCode, MatmulHandSchedule) {
  Program p = matmul(64, 64, 64);
  test_support::expect_golden(golden("matmul_64_hand.cc.golden"), cpp_of(p, hand_schedule(p)));
}

// The sampler's first schedules for fixed seeds, on the CPU and bound to the GPU.
TEST(GoldenCode, SampledSchedules) {
  for (const char* workload : {"matmul", "mlp"}) {
    const WorkloadInfo* info = find_workload(workload);
    Program p = make_workload(workload, info->small);
    for (uint64_t seed : {1, 2, 3}) {
      std::mt19937_64 rng(seed);
      std::string name = std::string(workload) + "_small_sampled_" + std::to_string(seed);
      test_support::expect_golden(golden(name + ".cc.golden"), cpp_of(p, sample_schedule(p, rng)));
    }
    std::mt19937_64 rng(1);
    SamplerOptions gpu;
    gpu.gpu = true;
    test_support::expect_golden(golden(std::string(workload) + "_small_sampled_1_gpu.cu.golden"),
                                cuda_of(p, sample_schedule(p, rng, gpu)));
  }
}

}  // namespace
}  // namespace ingot
