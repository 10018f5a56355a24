// Runs a lowered program on the GPU: cuts it into kernels (lower/kernels.h), compiles each distinct kernel
// once with NVRTC for the device, fits every cooperative grid to what the device holds at once, uploads the
// inputs, runs the kernels in order, checks the outputs against expected tensors (the interpreter's) and
// times whole runs. The GPU counterpart of runtime/local_run.h: needs a CUDA toolkit when built and a GPU when run.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "codegen/cuda_printer.h"
#include "ir/host_tensor.h"
#include "ir/program.h"
#include "ir/stmt.h"
#include "results/run_statistics.h"

namespace ingot {

struct CudaRunOptions {
  int warmup_runs = 1;
  double min_repeat_ms = 100;  // keep repeating until this much time was spent...
  int min_repeats = 3;         // ...and at least this many runs
  int max_repeats = 1000;
  double rtol = kDefaultRtol;
  double atol = kDefaultAtol;    // scaled by magnitude(expected), as in LocalRunOptions
  RoundingNoise rounding_noise;  // as in LocalRunOptions
  // Where compiled kernels are kept (compile_cuda_cached: a kernel compiled once loads from there); "" = the
  // default kernel cache.
  std::string kernel_cache_dir;
};

// One kernel as launched.
struct CudaKernelLaunch {
  std::string name;
  CudaLaunchConfig launch;        // the grid fitted to the cooperative limit where the kernel has grid barriers
  int64_t cooperative_limit = 0;  // blocks that fit on the device at once (0: not cooperative)
  int registers = 0;              // per thread, as the driver reports the loaded kernel
  int64_t shared_bytes = 0;       // static, per block, as the driver reports it
  int64_t local_bytes = 0;        // per thread (spills and stack frame), as the driver reports it
};

struct CudaRunResult {
  std::string device;                     // "NVIDIA H100 80GB HBM3 (sm_90)"
  std::vector<CudaKernelLaunch> kernels;  // in launch order
  int distinct_binaries = 0;              // NVRTC compiles: kernels that differ only in names share one
  double compile_seconds = 0;
  std::vector<Comparison> checks;  // one per program output, in order
  bool correct = false;
  std::vector<double> seconds;  // every timed run (all kernels queued, then waited for); empty when wrong
  RunStatistics statistics;     // of seconds
};

// `function` is `program` lowered (its inputs are the program's placeholders, its outputs the program's
// outputs). Throws CudaError when no GPU is usable (the message says why) or a launch fails, NvrtcError when a
// kernel does not compile, std::invalid_argument for a missing input or expected tensor. A wrong answer is not
// an exception: correct is false, checks say where, and nothing is timed.
CudaRunResult cuda_run(const Program& program, const LoopFunction& function, const TensorMap& inputs,
                       const TensorMap& expected, const CudaRunOptions& options = {});

}  // namespace ingot
