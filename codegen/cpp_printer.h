// The CPU backend's printer: turns a LoopFunction into one self-contained C++ translation unit (OpenMP for
// parallel and SIMD loops) that exports the C ABI below. Use it on any LoopFunction that follows the loop
// semantics contract (stages separated by grid barriers); the result compiles alone with e.g.
// `g++ -O3 -march=native -fno-math-errno -fopenmp -fPIC -shared kernel.cc -o kernel.so` (add -DINGOT_LIBMVEC
// -lmvec on x86-64 glibc for SIMD expf, logf, tanhf and erff in vectorized loops).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/stmt.h"

namespace ingot {

// The C ABI of a printed kernel (version 1). Every generated source defines exactly these symbols:
//
//   extern "C" int ingot_abi_version(void);          // returns kCppKernelAbiVersion
//   extern "C" int ingot_num_inputs(void);           // LoopFunction::inputs.size()
//   extern "C" int ingot_num_outputs(void);          // LoopFunction::outputs.size()
//   extern "C" int64_t ingot_workspace_bytes(void);  // bytes of scratch ingot_run needs (0 when none)
//   extern "C" void ingot_run(void* const* args, void* workspace);
//
// args holds one pointer per buffer, inputs first then outputs, each in LoopFunction order, each pointing to
// the buffer's dense row-major elements (f32 -> float, i32 -> int32_t, i64 -> int64_t, bool -> uint8_t 0/1).
// workspace points to ingot_workspace_bytes() bytes, 64-byte aligned; the workspace buffers are laid out in
// LoopFunction::workspace order, each at a 64-byte-aligned offset. ingot_run uses OpenMP's default thread
// count (omp_set_num_threads in the caller changes it); it is not reentrant for one workspace.
constexpr int kCppKernelAbiVersion = 1;

// 1-based, inclusive lines of the generated source.
struct SourceLines {
  int first = 0;
  int last = 0;
};

struct PrintedCpp {
  std::string source;
  // Each kVectorized loop printed with `#pragma omp simd`: from its pragma line to its closing brace. A
  // vectorization report (g++ -fopt-info-vec) names a line inside this range: a line of the loop's body, or, for
  // a simd reduction compiled for AVX2, the pragma's line.
  std::vector<SourceLines> vectorized_loops;
};

struct CppPrintOptions {
  // Profile marks: thread 0 notes omp_get_wtime() where each kernel's parallel region starts, after each of its grid
  // barriers and, after one more barrier, where it ends: one more mark per kernel than the kernel has stage intervals
  // (lower/stage_intervals.h), in their order. The source then also defines
  //   extern "C" int ingot_profile_capacity(void);      // the most marks one run makes
  //   extern "C" int ingot_profile_read(double* seconds);  // copies the marks made since the last read, returns
  //                                                         // their count and forgets them
  // Off: the source is exactly the ABI above.
  bool profile = false;
};

// Prints f as it is: the CPU recipe (codegen/pipeline.h, cpp_source) merges its parallel stages first. Throws
// std::invalid_argument (naming the buffer, loop or expression) for what the CPU backend cannot print: f16/bf16
// values, tensor reads or reductions (not loop IR), unbound variables, unknown buffers, global allocations, and
// grid barriers that not every thread reaches (inside a loop or a condition).
PrintedCpp print_cpp_with_lines(const LoopFunction& f, const CppPrintOptions& options = {});
std::string print_cpp(const LoopFunction& f, const CppPrintOptions& options = {});

// Byte offset of each workspace buffer (LoopFunction::workspace order) and the total, as ingot_run expects.
struct CppWorkspaceLayout {
  std::vector<int64_t> offsets;
  int64_t total_bytes = 0;
};
CppWorkspaceLayout cpp_workspace_layout(const LoopFunction& f);

}  // namespace ingot
