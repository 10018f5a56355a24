// Codegen's recipe in one place, in the order it runs: lower a program with its schedule (lowering ends by
// simplifying), then for the CPU merge parallel stages and print C++, for the GPU split the kernels and print CUDA
// one kernel at a time. After each pass the IR may be dumped and checked by the loop-IR verifier
// (lower/verify_loop_function.h). Everything that turns a schedule into code goes through here.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "codegen/cpp_printer.h"
#include "ir/program.h"
#include "ir/schedule.h"
#include "ir/stmt.h"

namespace ingot {

// True in debug builds (no NDEBUG) and where the environment sets INGOT_VERIFY_LOOP_IR to anything but "" or "0"
// (the test suite does, see CMakeLists.txt); false otherwise.
bool verify_loop_ir_by_default();

struct PipelineOptions {
  // Receives, after each pass, a line `// loop IR after <pass>:` and the IR (to_string; each kernel after
  // split_kernels). Null: no dump.
  std::ostream* dump_after_each_pass = nullptr;
  // Runs verify_loop_function after each pass: a broken IR throws LoopIrError naming the pass.
  bool verify = verify_loop_ir_by_default();
  // How the C++ printer prints (its profile marks).
  CppPrintOptions cpp;
};

// ---- The passes' steps, for callers that keep the function between them ----

// Pass "lower" (lower/lower.h): throws ScheduleError for an invalid schedule.
LoopFunction lower_program(const Program& program, const Schedule& schedule, const PipelineOptions& options = {});

// CPU: pass "merge_parallel_stages" (lower/merge_parallel_stages.h) on a lowered function: what print_cpp prints.
LoopFunction prepare_for_cpu(const LoopFunction& lowered, const PipelineOptions& options = {});
// prepare_for_cpu, then print_cpp_with_lines (std::invalid_argument for what the CPU backend cannot print).
PrintedCpp cpp_source(const LoopFunction& lowered, const PipelineOptions& options = {});

// GPU: pass "split_kernels" (lower/kernels.h) on a lowered function: what print_cuda prints, one function each.
std::vector<LoopFunction> prepare_for_gpu(const LoopFunction& lowered, const PipelineOptions& options = {});

// ---- The whole recipes, from a program and its schedule ----

// lower, merge_parallel_stages.
LoopFunction lower_for_cpu(const Program& program, const Schedule& schedule, const PipelineOptions& options = {});
// lower_for_cpu, then print_cpp_with_lines.
PrintedCpp compile_to_cpp_source(const Program& program, const Schedule& schedule, const PipelineOptions& options = {});

// lower, split_kernels.
std::vector<LoopFunction> lower_for_gpu(const Program& program, const Schedule& schedule,
                                        const PipelineOptions& options = {});
// lower_for_gpu, then print_cuda of each kernel, in order.
std::vector<std::string> compile_to_cuda_sources(const Program& program, const Schedule& schedule,
                                                 const PipelineOptions& options = {});

}  // namespace ingot
