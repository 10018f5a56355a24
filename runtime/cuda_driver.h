// The CUDA driver API, loaded at run time with dlopen("libcuda.so.1") so that ingot builds and runs on
// machines without a GPU: CudaDriver::open() then reports unavailable with a reason. When a GPU is there:
// load cubins (from compile/nvrtc_compiler.h), size cooperative grids, launch, and move device buffers.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace ingot {

// A failed driver call (the message names the call and the CUDA error), or a device call made while the
// driver is unavailable (the message carries the reason).
class CudaError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class CudaDriver;

// Device memory; freed on destruction. Keeps the driver alive.
class CudaBuffer {
 public:
  CudaBuffer(const CudaBuffer&) = delete;
  CudaBuffer& operator=(const CudaBuffer&) = delete;
  ~CudaBuffer();

  size_t bytes() const { return bytes_; }
  uint64_t device_pointer() const { return pointer_; }
  // Copies size bytes (at most bytes()) between this buffer and host memory; synchronous.
  void copy_from_host(const void* host, size_t size);
  void copy_to_host(void* host, size_t size) const;

 private:
  friend class CudaDriver;
  CudaBuffer(std::shared_ptr<const CudaDriver> driver, uint64_t pointer, size_t bytes)
      : driver_(std::move(driver)), pointer_(pointer), bytes_(bytes) {}
  std::shared_ptr<const CudaDriver> driver_;
  uint64_t pointer_;
  size_t bytes_;
};

// One kernel of a loaded module; unloads the module on destruction. Keeps the driver alive.
class CudaKernel {
 public:
  CudaKernel(const CudaKernel&) = delete;
  CudaKernel& operator=(const CudaKernel&) = delete;
  ~CudaKernel();

  const std::string& name() const { return name_; }
  // Blocks of block_threads threads that fit on one multiprocessor at once (cuOccupancy...).
  int max_active_blocks_per_sm(int block_threads, size_t dynamic_shared_bytes = 0) const;
  // The most blocks a cooperative launch may have: max_active_blocks_per_sm x multiprocessors.
  int64_t cooperative_grid_limit(int block_threads, size_t dynamic_shared_bytes = 0) const;
  // What the loaded code uses, as the driver reports it (cuFuncGetAttribute). NVRTC's log, where
  // compile_cuda reads ptxas's figures, comes back empty in a process that holds a CUDA context (seen with
  // CUDA 13.0 on an H200), so code that runs kernels asks the driver.
  int registers_per_thread() const;
  int static_shared_bytes() const;
  int local_bytes_per_thread() const;  // spills and stack frame

 private:
  friend class CudaDriver;
  int attribute(int attribute, const char* what) const;
  CudaKernel(std::shared_ptr<const CudaDriver> driver, void* module, void* function, std::string name)
      : driver_(std::move(driver)), module_(module), function_(function), name_(std::move(name)) {}
  std::shared_ptr<const CudaDriver> driver_;
  void* module_;
  void* function_;
  std::string name_;
};

// The driver and device 0's primary context. Calls are not synchronized against each other: use one
// thread at a time.
class CudaDriver : public std::enable_shared_from_this<CudaDriver> {
 public:
  // The process-wide driver. Never throws: without libcuda.so.1, a device or a working driver, the result
  // has available() false and reason() says why.
  static std::shared_ptr<CudaDriver> open();
  // The same for another driver library (a test can name a missing one to see the unavailable path).
  static std::shared_ptr<CudaDriver> open_library(const std::string& library);
  ~CudaDriver();

  bool available() const { return available_; }
  const std::string& reason() const { return reason_; }

  // Device facts, valid when available().
  const std::string& device_name() const { return device_name_; }
  int compute_capability() const { return compute_capability_; }  // e.g. 90
  std::string arch() const { return "sm_" + std::to_string(compute_capability_); }
  int multiprocessor_count() const { return multiprocessors_; }
  bool supports_cooperative_launch() const { return cooperative_; }

  // Everything below throws CudaError (with reason()) when the driver is unavailable or a call fails.
  std::unique_ptr<CudaBuffer> allocate(size_t bytes) const;
  std::unique_ptr<CudaKernel> load_kernel(const std::vector<char>& cubin, const std::string& kernel_name) const;
  // Queues kernel with one pointer argument per buffer, in order, on the default stream; kernels run in the
  // order queued. A cooperative launch (needed for grid barriers) fails if grid exceeds
  // kernel.cooperative_grid_limit.
  void enqueue(const CudaKernel& kernel, std::array<int64_t, 3> grid, std::array<int64_t, 3> block,
               const std::vector<const CudaBuffer*>& buffers, bool cooperative, size_t dynamic_shared_bytes = 0) const;
  // enqueue, then wait for the kernel to finish.
  void launch(const CudaKernel& kernel, std::array<int64_t, 3> grid, std::array<int64_t, 3> block,
              const std::vector<const CudaBuffer*>& buffers, bool cooperative, size_t dynamic_shared_bytes = 0) const;
  // Waits for everything queued; a fault in a queued kernel is reported here.
  void synchronize() const;

  struct Api;  // the resolved driver entry points (cuda_driver.cc)

 private:
  friend class CudaBuffer;
  friend class CudaKernel;
  CudaDriver() = default;
  void initialize(const std::string& library);
  void require_available(const char* what) const;
  void make_current() const;
  void check(int result, const char* call) const;

  std::unique_ptr<Api> api_;
  void* library_ = nullptr;
  void* context_ = nullptr;
  int device_ = 0;
  bool available_ = false;
  std::string reason_;
  std::string device_name_;
  int compute_capability_ = 0;
  int multiprocessors_ = 0;
  bool cooperative_ = false;
};

}  // namespace ingot
