#include "codegen/pipeline.h"

#include <cstdlib>
#include <span>

#include "codegen/cuda_printer.h"
#include "lower/kernels.h"
#include "lower/lower.h"
#include "lower/merge_parallel_stages.h"
#include "lower/verify_loop_function.h"

namespace ingot {

namespace {

// What follows every pass: the dump of what it produced, then the verifier.
void after_pass(const std::string& pass, std::span<const LoopFunction> functions, const PipelineOptions& options) {
  if (options.dump_after_each_pass) {
    *options.dump_after_each_pass << "// loop IR after " << pass << ":\n";
    for (const LoopFunction& f : functions) *options.dump_after_each_pass << to_string(f);
  }
  if (options.verify)
    for (const LoopFunction& f : functions) verify_loop_function(f, pass);
}

}  // namespace

bool verify_loop_ir_by_default() {
#ifndef NDEBUG
  return true;
#else
  const char* env = std::getenv("INGOT_VERIFY_LOOP_IR");
  return env && *env && std::string(env) != "0";
#endif
}

LoopFunction lower_program(const Program& program, const Schedule& schedule, const PipelineOptions& options) {
  LoopFunction lowered = lower(program, schedule);
  after_pass("lower", {&lowered, 1}, options);
  return lowered;
}

LoopFunction prepare_for_cpu(const LoopFunction& lowered, const PipelineOptions& options) {
  LoopFunction merged = merge_parallel_stages(lowered);
  after_pass("merge_parallel_stages", {&merged, 1}, options);
  return merged;
}

PrintedCpp cpp_source(const LoopFunction& lowered, const PipelineOptions& options) {
  return print_cpp_with_lines(prepare_for_cpu(lowered, options), options.cpp);
}

std::vector<LoopFunction> prepare_for_gpu(const LoopFunction& lowered, const PipelineOptions& options) {
  std::vector<LoopFunction> kernels = split_kernels(lowered);
  after_pass("split_kernels", kernels, options);
  return kernels;
}

LoopFunction lower_for_cpu(const Program& program, const Schedule& schedule, const PipelineOptions& options) {
  LoopFunction lowered = lower_program(program, schedule, options);
  return prepare_for_cpu(lowered, options);
}

PrintedCpp compile_to_cpp_source(const Program& program, const Schedule& schedule, const PipelineOptions& options) {
  return print_cpp_with_lines(lower_for_cpu(program, schedule, options), options.cpp);
}

std::vector<LoopFunction> lower_for_gpu(const Program& program, const Schedule& schedule,
                                        const PipelineOptions& options) {
  LoopFunction lowered = lower_program(program, schedule, options);
  return prepare_for_gpu(lowered, options);
}

std::vector<std::string> compile_to_cuda_sources(const Program& program, const Schedule& schedule,
                                                 const PipelineOptions& options) {
  std::vector<std::string> sources;
  for (const LoopFunction& kernel : lower_for_gpu(program, schedule, options)) sources.push_back(print_cuda(kernel));
  return sources;
}

}  // namespace ingot
