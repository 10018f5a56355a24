// Codegen's recipe: the passes it runs and dumps, in order; the sources it prints are what the printers printed
// when the C++ printer merged parallel stages itself; the verifier runs after each pass and names it.
#include "codegen/pipeline.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <sstream>
#include <stdexcept>

#include "analysis/strategies.h"
#include "codegen/cuda_printer.h"
#include "lower/kernels.h"
#include "lower/lower.h"
#include "lower/merge_parallel_stages.h"
#include "lower/verify_loop_function.h"
#include "space/strategy_schedule.h"
#include "tests/support/cpu_test_kernels.h"
#include "workloads/registry.h"

namespace ingot {
namespace {

using cpu_test::global_buffer;

// A small BERT under `rules` (the plan for sm_80, a fixed target): several kernels, parallel stages that merge on
// the CPU.
struct Case {
  Program program;
  Schedule cpu, gpu;
};
const Case& small_bert() {
  static const Case c = [] {
    Program p = make_workload("bert", find_workload("bert")->small);
    Target target = resolve_target("sm_80");
    FixedScheduleOptions gpu;
    gpu.gpu = true;
    PartitionPlan plan = make_plan("rules", p, target);
    return Case{p, strategy_schedule(p, plan), strategy_schedule(p, plan, gpu)};
  }();
  return c;
}

// The headers of a dump, in order.
std::vector<std::string> dumped_passes(const std::string& dump) {
  std::vector<std::string> passes;
  const std::string header = "// loop IR after ";
  for (size_t at = dump.find(header); at != std::string::npos; at = dump.find(header, at + 1))
    passes.push_back(dump.substr(at + header.size(), dump.find(":\n", at) - at - header.size()));
  return passes;
}

TEST(Pipeline, DumpsTheIrAfterEachPassInOrder) {
  const Case& c = small_bert();
  std::ostringstream cpu_dump;
  PipelineOptions options;
  options.dump_after_each_pass = &cpu_dump;
  LoopFunction merged = lower_for_cpu(c.program, c.cpu, options);
  EXPECT_EQ(dumped_passes(cpu_dump.str()), (std::vector<std::string>{"lower", "merge_parallel_stages"}));
  LoopFunction lowered = lower(c.program, c.cpu);
  EXPECT_EQ(cpu_dump.str(), "// loop IR after lower:\n" + to_string(lowered) +
                                "// loop IR after merge_parallel_stages:\n" + to_string(merged));
  EXPECT_EQ(to_string(merged), to_string(merge_parallel_stages(lowered)));

  std::ostringstream gpu_dump;
  options.dump_after_each_pass = &gpu_dump;
  std::vector<LoopFunction> kernels = lower_for_gpu(c.program, c.gpu, options);
  EXPECT_EQ(dumped_passes(gpu_dump.str()), (std::vector<std::string>{"lower", "split_kernels"}));
  ASSERT_GT(kernels.size(), 1u);
  std::string split = "// loop IR after split_kernels:\n";
  for (const LoopFunction& k : kernels) split += to_string(k);
  EXPECT_EQ(gpu_dump.str(), "// loop IR after lower:\n" + to_string(lower(c.program, c.gpu)) + split);

  // Without the option nothing is written anywhere; the result is the same.
  EXPECT_EQ(to_string(lower_for_cpu(c.program, c.cpu)), to_string(merged));
}

// The C++ printer merged parallel stages itself before the pipeline did: the recipe prints the same bytes.
TEST(Pipeline, PrintsWhatThePrintersPrintedBefore) {
  const Case& c = small_bert();
  PrintedCpp printed = compile_to_cpp_source(c.program, c.cpu);
  LoopFunction lowered = lower(c.program, c.cpu);
  PrintedCpp before = print_cpp_with_lines(merge_parallel_stages(lowered));
  EXPECT_EQ(printed.source, before.source);
  EXPECT_EQ(printed.vectorized_loops.size(), before.vectorized_loops.size());
  EXPECT_EQ(cpp_source(lowered).source, before.source);
  // Merging changed something here, so the pipeline's step is what keeps the bytes.
  EXPECT_NE(print_cpp(lowered), before.source);

  std::vector<std::string> cuda = compile_to_cuda_sources(c.program, c.gpu);
  std::vector<std::string> cuda_before;
  for (const LoopFunction& k : split_kernels(lower(c.program, c.gpu))) cuda_before.push_back(print_cuda(k));
  EXPECT_EQ(cuda, cuda_before);
}

TEST(Pipeline, VerifiesAfterEachPassAndNamesThePass) {
  // j is bound nowhere: lowering never does that, and the verifier stops the recipe after its first pass on this
  // function before the printer sees it.
  Buffer x = global_buffer("x", {4}), y = global_buffer("y", {4});
  Expr i = var("i"), j = var("j");
  LoopFunction f{"unbound", {x}, {y}, {}, for_loop(i, 4, LoopKind::kParallel, store(y, i, load(x, j)))};
  PipelineOptions options;
  options.verify = true;
  EXPECT_THAT([&] { cpp_source(f, options); },
              testing::ThrowsMessage<LoopIrError>(testing::HasSubstr("of 'unbound' after merge_parallel_stages")));
  EXPECT_THAT([&] { prepare_for_gpu(f, options); },
              testing::ThrowsMessage<LoopIrError>(testing::HasSubstr("of 'unbound' after split_kernels")));
  options.verify = false;
  EXPECT_THAT([&] { cpp_source(f, options); }, testing::Throws<std::invalid_argument>());
}

TEST(Pipeline, VerifiesByDefaultInDebugBuildsAndWhenTheEnvironmentAsks) {
  const char* old = std::getenv("INGOT_VERIFY_LOOP_IR");
  std::string saved = old ? old : "";
  ::setenv("INGOT_VERIFY_LOOP_IR", "1", 1);
  EXPECT_TRUE(verify_loop_ir_by_default());
  EXPECT_TRUE(PipelineOptions{}.verify);
  ::setenv("INGOT_VERIFY_LOOP_IR", "0", 1);
#ifdef NDEBUG
  EXPECT_FALSE(verify_loop_ir_by_default());
#else
  EXPECT_TRUE(verify_loop_ir_by_default());
#endif
  if (old)
    ::setenv("INGOT_VERIFY_LOOP_IR", saved.c_str(), 1);
  else
    ::unsetenv("INGOT_VERIFY_LOOP_IR");
}

}  // namespace
}  // namespace ingot
