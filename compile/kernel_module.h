// A compiled CPU kernel loaded into the process: dlopens a library built from cpp_printer.h's source,
// checks its C ABI, owns its workspace and calls ingot_run. Use it after compile_cpp; one module may be run
// many times, from one thread at a time (the workspace is shared between calls).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ir/host_tensor.h"
#include "ir/stmt.h"

namespace ingot {

class KernelModule {
 public:
  // Loads the library with RTLD_NOW | RTLD_LOCAL and checks its ABI version. Throws std::runtime_error
  // naming the library and, for a missing symbol, the symbol.
  explicit KernelModule(const std::string& library_path);
  // Also checks that the library's argument counts and workspace size are those the C++ printer gives
  // `expected`, and remembers its buffers so that run() on HostTensors checks their dtypes and sizes.
  KernelModule(const std::string& library_path, const LoopFunction& expected);
  ~KernelModule();
  KernelModule(KernelModule&& other) noexcept;
  KernelModule& operator=(KernelModule&& other) noexcept;
  KernelModule(const KernelModule&) = delete;
  KernelModule& operator=(const KernelModule&) = delete;

  const std::string& library_path() const { return path_; }
  int num_inputs() const { return num_inputs_; }
  int num_outputs() const { return num_outputs_; }
  int64_t workspace_bytes() const { return workspace_bytes_; }

  // args: one pointer per buffer, inputs then outputs. Throws std::invalid_argument on a wrong count.
  void run(const std::vector<void*>& args);
  // Same, from host tensors; with an expected LoopFunction, also checks each tensor's dtype and element
  // count against its buffer.
  void run(const std::vector<const HostTensor*>& inputs, const std::vector<HostTensor*>& outputs);

  // Sets the OpenMP thread count (n >= 1) for later run() calls made from this thread, through the OpenMP
  // runtime the library is linked with (so it also applies to other OpenMP code this thread runs). Returns
  // false when the library has no OpenMP runtime (compiled without -fopenmp): it always runs on one thread.
  bool set_num_threads(int n);

  // The profile marks (codegen/cpp_printer.h, CppPrintOptions::profile) made since the last call, in order, and
  // forgets them. Throws std::runtime_error for a library printed without profile marks.
  std::vector<double> read_profile_marks();

 private:
  struct BufferSignature {
    std::string name;
    DType dtype;
    int64_t num_elements;
  };
  struct FreeWorkspace {
    void operator()(void* p) const;
  };
  void load(const std::string& library_path);
  void* symbol(const char* name);
  void unload();

  std::string path_;
  void* handle_ = nullptr;
  void (*run_)(void* const*, void*) = nullptr;
  int num_inputs_ = 0;
  int num_outputs_ = 0;
  int64_t workspace_bytes_ = 0;
  std::unique_ptr<void, FreeWorkspace> workspace_;
  std::vector<BufferSignature> signature_;  // inputs then outputs; empty when no LoopFunction was given
};

// The inputs as `f` takes them: in f.inputs' order, each packed input (f.packed_inputs) replaced by its packed copy,
// which `packed` holds (pack once, before the runs). Throws std::invalid_argument for a count or shape that is not
// the function's.
std::vector<const HostTensor*> pack_inputs(const LoopFunction& f, const std::vector<const HostTensor*>& inputs,
                                           std::vector<HostTensor>& packed);

}  // namespace ingot
