// Compiles CUDA C++ source (from codegen/cuda_printer.h) with NVRTC to PTX and a cubin for one GPU
// architecture, and reads the kernel's resource use (registers, shared memory, spills) from the ptxas log.
// Built only with a CUDA toolkit (INGOT_HAVE_CUDA); needs no GPU. Safe to call from several threads.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace ingot {

// What ptxas reports for one entry function.
struct PtxasStats {
  bool found = false;        // the log named the kernel (or any entry function when none was asked for)
  int registers = 0;         // per thread
  int64_t shared_bytes = 0;  // static shared memory per block
  int64_t spill_stores = 0;  // bytes
  int64_t spill_loads = 0;   // bytes
  int64_t stack_frame = 0;   // bytes per thread
};

struct CudaBinary {
  std::string arch;  // "sm_90"
  std::string kernel_name;
  std::string ptx;
  std::vector<char> cubin;  // loadable with cuModuleLoadData on a device of this arch
  std::string log;          // NVRTC log, including ptxas -v output
  int registers = 0;
  int64_t shared_bytes = 0;
  int64_t spill_stores = 0;
  int64_t spill_loads = 0;
  int64_t stack_frame = 0;
  bool cache_hit = false;  // compile_cuda_cached found the cubin in the kernel cache: ptx, log and figures are empty
};

// A compile that NVRTC rejected; what() has the NVRTC error, the log and the source lines around the first
// error; log() has the NVRTC log alone.
class NvrtcError : public std::runtime_error {
 public:
  NvrtcError(const std::string& message, std::string log) : std::runtime_error(message), log_(std::move(log)) {}
  const std::string& log() const { return log_; }

 private:
  std::string log_;
};

// Compiles source for a real architecture ("sm_80", "sm_90", "sm_90a"); kernel_name picks the entry function
// whose ptxas statistics are reported (empty: the first). Throws std::invalid_argument for a bad arch and
// NvrtcError when compilation fails.
CudaBinary compile_cuda(const std::string& source, const std::string& arch, const std::string& kernel_name = "");

// compile_cuda, with the cubin kept in the kernel cache (compile/kernel_cache.h; cache_dir empty: the
// default_kernel_cache_dir of compile/cpp_compiler.h) as <hash>.cubin, by the hash of the source, the architecture and
// the NVRTC version: a kernel compiled once loads from there (a tuner that measures a candidate again, side by side
// or after a restart, and kernels that other candidates share). A hit holds the cubin alone (cache_hit). Throws as
// compile_cuda does, and std::runtime_error when the cache cannot be written.
CudaBinary compile_cuda_cached(const std::string& source, const std::string& arch, const std::string& kernel_name,
                               const std::string& cache_dir);

// Statistics of entry function kernel_name (empty: the first entry function) in a `ptxas -v` log.
PtxasStats parse_ptxas_log(const std::string& log, const std::string& kernel_name = "");

// The -I directories passed to NVRTC: the toolkit's include dir (the one ingot was built with if it still
// exists, else $CUDA_HOME/include, else /usr/local/cuda/include) and its cccl subdirectory.
std::vector<std::string> cuda_include_dirs();

// "13.0": the NVRTC version linked in.
std::string nvrtc_version();

}  // namespace ingot
