#include "runtime/cuda_driver.h"

#include <dlfcn.h>

#include <limits>
#include <map>
#include <mutex>

namespace ingot {

namespace {

// The few driver API types and constants used here, declared by hand so that this file builds without the
// CUDA toolkit (values from cuda.h, stable across driver versions).
using CUresult = int;
using CUdevice = int;
using CUcontext = void*;
using CUmodule = void*;
using CUfunction = void*;
using CUstream = void*;
using CUdeviceptr = unsigned long long;

constexpr CUresult kCudaSuccess = 0;
constexpr CUresult kCudaErrorNoDevice = 100;
constexpr int kAttrMultiprocessorCount = 16;
constexpr int kAttrComputeCapabilityMajor = 75;
constexpr int kAttrComputeCapabilityMinor = 76;
constexpr int kAttrCooperativeLaunch = 95;
constexpr int kFuncAttrSharedSizeBytes = 1;
constexpr int kFuncAttrLocalSizeBytes = 3;
constexpr int kFuncAttrNumRegs = 4;

}  // namespace

struct CudaDriver::Api {
  CUresult (*cuInit)(unsigned int) = nullptr;
  CUresult (*cuDeviceGetCount)(int*) = nullptr;
  CUresult (*cuDeviceGet)(CUdevice*, int) = nullptr;
  CUresult (*cuDeviceGetAttribute)(int*, int, CUdevice) = nullptr;
  CUresult (*cuDeviceGetName)(char*, int, CUdevice) = nullptr;
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext*, CUdevice) = nullptr;
  CUresult (*cuDevicePrimaryCtxRelease)(CUdevice) = nullptr;
  CUresult (*cuCtxSetCurrent)(CUcontext) = nullptr;
  CUresult (*cuCtxSynchronize)() = nullptr;
  CUresult (*cuModuleLoadData)(CUmodule*, const void*) = nullptr;
  CUresult (*cuModuleUnload)(CUmodule) = nullptr;
  CUresult (*cuModuleGetFunction)(CUfunction*, CUmodule, const char*) = nullptr;
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream,
                             void**, void**) = nullptr;
  CUresult (*cuLaunchCooperativeKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                        unsigned, CUstream, void**) = nullptr;
  CUresult (*cuOccupancyMaxActiveBlocksPerMultiprocessor)(int*, CUfunction, int, size_t) = nullptr;
  CUresult (*cuFuncGetAttribute)(int*, int, CUfunction) = nullptr;
  CUresult (*cuMemAlloc)(CUdeviceptr*, size_t) = nullptr;
  CUresult (*cuMemFree)(CUdeviceptr) = nullptr;
  CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void*, size_t) = nullptr;
  CUresult (*cuMemcpyDtoH)(void*, CUdeviceptr, size_t) = nullptr;
  CUresult (*cuGetErrorName)(CUresult, const char**) = nullptr;
  CUresult (*cuGetErrorString)(CUresult, const char**) = nullptr;
};

namespace {

// Resolves the first of names that the library exports (versioned names first: cuMemAlloc is
// cuMemAlloc_v2 since CUDA 3.2); false when none is there.
template <class Fn>
bool resolve(void* library, Fn& fn, std::initializer_list<const char*> names, std::string& missing) {
  for (const char* name : names) {
    if (void* symbol = dlsym(library, name)) {
      fn = reinterpret_cast<Fn>(symbol);
      return true;
    }
  }
  missing = *names.begin();
  return false;
}

// Names of the errors met while opening a driver, for when cuGetErrorName itself fails (as in the stub).
const char* fallback_error_name(CUresult result) {
  switch (result) {
    case 3: return "CUDA_ERROR_NOT_INITIALIZED";
    case 34: return "CUDA_ERROR_STUB_LIBRARY";
    case 35: return "CUDA_ERROR_INSUFFICIENT_DRIVER";
    case 100: return "CUDA_ERROR_NO_DEVICE";
    case 999: return "CUDA_ERROR_UNKNOWN";
    default: return nullptr;
  }
}

std::string describe(const CudaDriver::Api& api, CUresult result) {
  const char* name = nullptr;
  const char* text = nullptr;
  if (api.cuGetErrorName) api.cuGetErrorName(result, &name);
  if (api.cuGetErrorString) api.cuGetErrorString(result, &text);
  if (!name) name = fallback_error_name(result);
  std::string out = name ? name : "CUDA error " + std::to_string(result);
  if (text) out += std::string(" (") + text + ")";
  return out;
}

unsigned as_dim(int64_t v, const char* what) {
  if (v < 1 || v > std::numeric_limits<unsigned>::max())
    throw CudaError(std::string("launch: ") + what + " dimension " + std::to_string(v) + " is out of range");
  return static_cast<unsigned>(v);
}

}  // namespace

std::shared_ptr<CudaDriver> CudaDriver::open() { return open_library("libcuda.so.1"); }

std::shared_ptr<CudaDriver> CudaDriver::open_library(const std::string& library) {
  // One driver per library for the whole process, never destroyed: tearing the context down during exit
  // races libcuda's own teardown.
  static std::mutex mutex;
  static auto* drivers = new std::map<std::string, std::shared_ptr<CudaDriver>>();
  std::lock_guard<std::mutex> lock(mutex);
  std::shared_ptr<CudaDriver>& driver = (*drivers)[library];
  if (!driver) {
    driver.reset(new CudaDriver());
    try {
      driver->initialize(library);
    } catch (const std::exception& e) {
      driver->available_ = false;
      driver->reason_ = std::string("CUDA driver initialization failed: ") + e.what();
    } catch (...) {
      driver->available_ = false;
      driver->reason_ = "CUDA driver initialization failed";
    }
  }
  return driver;
}

void CudaDriver::initialize(const std::string& library) {
  api_ = std::make_unique<Api>();
  library_ = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!library_) {
    const char* error = dlerror();
    reason_ = library + " not found (" + (error ? error : "dlopen failed") + "): no NVIDIA driver on this machine";
    return;
  }
  Api& a = *api_;
  std::string missing;
  bool ok = resolve(library_, a.cuInit, {"cuInit"}, missing) &&
            resolve(library_, a.cuDeviceGetCount, {"cuDeviceGetCount"}, missing) &&
            resolve(library_, a.cuDeviceGet, {"cuDeviceGet"}, missing) &&
            resolve(library_, a.cuDeviceGetAttribute, {"cuDeviceGetAttribute"}, missing) &&
            resolve(library_, a.cuDeviceGetName, {"cuDeviceGetName"}, missing) &&
            resolve(library_, a.cuDevicePrimaryCtxRetain, {"cuDevicePrimaryCtxRetain"}, missing) &&
            resolve(library_, a.cuDevicePrimaryCtxRelease,
                    {"cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease"}, missing) &&
            resolve(library_, a.cuCtxSetCurrent, {"cuCtxSetCurrent"}, missing) &&
            resolve(library_, a.cuCtxSynchronize, {"cuCtxSynchronize"}, missing) &&
            resolve(library_, a.cuModuleLoadData, {"cuModuleLoadData"}, missing) &&
            resolve(library_, a.cuModuleUnload, {"cuModuleUnload"}, missing) &&
            resolve(library_, a.cuModuleGetFunction, {"cuModuleGetFunction"}, missing) &&
            resolve(library_, a.cuLaunchKernel, {"cuLaunchKernel"}, missing) &&
            resolve(library_, a.cuLaunchCooperativeKernel, {"cuLaunchCooperativeKernel"}, missing) &&
            resolve(library_, a.cuOccupancyMaxActiveBlocksPerMultiprocessor,
                    {"cuOccupancyMaxActiveBlocksPerMultiprocessor"}, missing) &&
            resolve(library_, a.cuFuncGetAttribute, {"cuFuncGetAttribute"}, missing) &&
            resolve(library_, a.cuMemAlloc, {"cuMemAlloc_v2"}, missing) &&
            resolve(library_, a.cuMemFree, {"cuMemFree_v2"}, missing) &&
            resolve(library_, a.cuMemcpyHtoD, {"cuMemcpyHtoD_v2"}, missing) &&
            resolve(library_, a.cuMemcpyDtoH, {"cuMemcpyDtoH_v2"}, missing) &&
            resolve(library_, a.cuGetErrorName, {"cuGetErrorName"}, missing) &&
            resolve(library_, a.cuGetErrorString, {"cuGetErrorString"}, missing);
  if (!ok) {
    reason_ = library + " lacks " + missing + ": the NVIDIA driver is too old";
    return;
  }
  CUresult r = a.cuInit(0);
  if (r == kCudaErrorNoDevice) {
    reason_ = "no CUDA device (cuInit: " + describe(a, r) + ")";
    return;
  }
  if (r != kCudaSuccess) {
    reason_ = "cuInit failed: " + describe(a, r);
    return;
  }
  int count = 0;
  r = a.cuDeviceGetCount(&count);
  if (r != kCudaSuccess || count == 0) {
    reason_ = r != kCudaSuccess ? "cuDeviceGetCount failed: " + describe(a, r) : "no CUDA device";
    return;
  }
  CUdevice device = 0;
  if ((r = a.cuDeviceGet(&device, 0)) != kCudaSuccess) {
    reason_ = "cuDeviceGet failed: " + describe(a, r);
    return;
  }
  device_ = device;
  int major = 0, minor = 0, sms = 0, cooperative = 0;
  char name[256] = {};
  if ((r = a.cuDeviceGetAttribute(&major, kAttrComputeCapabilityMajor, device)) != kCudaSuccess ||
      (r = a.cuDeviceGetAttribute(&minor, kAttrComputeCapabilityMinor, device)) != kCudaSuccess ||
      (r = a.cuDeviceGetAttribute(&sms, kAttrMultiprocessorCount, device)) != kCudaSuccess ||
      (r = a.cuDeviceGetAttribute(&cooperative, kAttrCooperativeLaunch, device)) != kCudaSuccess ||
      (r = a.cuDeviceGetName(name, sizeof name - 1, device)) != kCudaSuccess) {
    reason_ = "querying CUDA device 0 failed: " + describe(a, r);
    return;
  }
  CUcontext context = nullptr;
  if ((r = a.cuDevicePrimaryCtxRetain(&context, device)) != kCudaSuccess) {
    reason_ = "cuDevicePrimaryCtxRetain failed: " + describe(a, r);
    return;
  }
  context_ = context;
  compute_capability_ = major * 10 + minor;
  multiprocessors_ = sms;
  cooperative_ = cooperative != 0;
  device_name_ = name;
  available_ = true;
}

CudaDriver::~CudaDriver() {
  if (context_ && api_ && api_->cuDevicePrimaryCtxRelease) api_->cuDevicePrimaryCtxRelease(device_);
}

void CudaDriver::require_available(const char* what) const {
  if (!available_) throw CudaError(std::string(what) + ": CUDA is unavailable: " + reason_);
}

void CudaDriver::check(int result, const char* call) const {
  if (result != kCudaSuccess) throw CudaError(std::string(call) + " failed: " + describe(*api_, result));
}

void CudaDriver::make_current() const { check(api_->cuCtxSetCurrent(context_), "cuCtxSetCurrent"); }

std::unique_ptr<CudaBuffer> CudaDriver::allocate(size_t bytes) const {
  require_available("allocate");
  make_current();
  CUdeviceptr pointer = 0;
  // A zero-byte request still gets a distinct, valid allocation.
  check(api_->cuMemAlloc(&pointer, bytes == 0 ? 1 : bytes), "cuMemAlloc");
  return std::unique_ptr<CudaBuffer>(new CudaBuffer(shared_from_this(), pointer, bytes));
}

std::unique_ptr<CudaKernel> CudaDriver::load_kernel(const std::vector<char>& cubin,
                                                    const std::string& kernel_name) const {
  require_available("load_kernel");
  if (cubin.empty()) throw CudaError("load_kernel: empty cubin for '" + kernel_name + "'");
  make_current();
  CUmodule module = nullptr;
  CUresult r = api_->cuModuleLoadData(&module, cubin.data());
  if (r != kCudaSuccess)
    throw CudaError("cuModuleLoadData of '" + kernel_name + "' failed on " + arch() + ": " + describe(*api_, r));
  CUfunction function = nullptr;
  r = api_->cuModuleGetFunction(&function, module, kernel_name.c_str());
  if (r != kCudaSuccess) {
    api_->cuModuleUnload(module);
    throw CudaError("cuModuleGetFunction('" + kernel_name + "') failed: " + describe(*api_, r));
  }
  return std::unique_ptr<CudaKernel>(new CudaKernel(shared_from_this(), module, function, kernel_name));
}

void CudaDriver::launch(const CudaKernel& kernel, std::array<int64_t, 3> grid, std::array<int64_t, 3> block,
                        const std::vector<const CudaBuffer*>& buffers, bool cooperative,
                        size_t dynamic_shared_bytes) const {
  enqueue(kernel, grid, block, buffers, cooperative, dynamic_shared_bytes);
  check(api_->cuCtxSynchronize(), "cuCtxSynchronize after launch");
}

void CudaDriver::enqueue(const CudaKernel& kernel, std::array<int64_t, 3> grid, std::array<int64_t, 3> block,
                         const std::vector<const CudaBuffer*>& buffers, bool cooperative,
                         size_t dynamic_shared_bytes) const {
  require_available("launch");
  if (kernel.driver_.get() != this) throw CudaError("launch: kernel '" + kernel.name() + "' belongs to another driver");
  const unsigned gx = as_dim(grid[0], "grid"), gy = as_dim(grid[1], "grid"), gz = as_dim(grid[2], "grid");
  const unsigned bx = as_dim(block[0], "block"), by = as_dim(block[1], "block"), bz = as_dim(block[2], "block");
  std::vector<CUdeviceptr> pointers;
  for (const CudaBuffer* b : buffers) {
    if (!b) throw CudaError("launch: null buffer argument for '" + kernel.name() + "'");
    pointers.push_back(b->device_pointer());
  }
  std::vector<void*> params;
  for (CUdeviceptr& p : pointers) params.push_back(&p);
  make_current();
  if (cooperative) {
    if (!cooperative_) throw CudaError("launch: " + device_name_ + " does not support cooperative launches");
    const int64_t blocks = grid[0] * grid[1] * grid[2];
    const int64_t limit =
        kernel.cooperative_grid_limit(static_cast<int>(block[0] * block[1] * block[2]), dynamic_shared_bytes);
    if (blocks > limit)
      throw CudaError("launch: cooperative kernel '" + kernel.name() + "' asks for " + std::to_string(blocks) +
                      " blocks but at most " + std::to_string(limit) + " can be co-resident (use fit_grid)");
    check(api_->cuLaunchCooperativeKernel(kernel.function_, gx, gy, gz, bx, by, bz,
                                          static_cast<unsigned>(dynamic_shared_bytes), nullptr, params.data()),
          "cuLaunchCooperativeKernel");
  } else {
    check(api_->cuLaunchKernel(kernel.function_, gx, gy, gz, bx, by, bz, static_cast<unsigned>(dynamic_shared_bytes),
                               nullptr, params.data(), nullptr),
          "cuLaunchKernel");
  }
}

void CudaDriver::synchronize() const {
  require_available("synchronize");
  make_current();
  check(api_->cuCtxSynchronize(), "cuCtxSynchronize");
}

CudaBuffer::~CudaBuffer() {
  // Errors are ignored: a destructor cannot report them, and a failed free leaks at worst.
  if (pointer_ && driver_->api_->cuCtxSetCurrent(driver_->context_) == kCudaSuccess) driver_->api_->cuMemFree(pointer_);
}

void CudaBuffer::copy_from_host(const void* host, size_t size) {
  if (size > bytes_)
    throw CudaError("copy_from_host: " + std::to_string(size) + " bytes into a buffer of " + std::to_string(bytes_));
  driver_->make_current();
  driver_->check(driver_->api_->cuMemcpyHtoD(pointer_, host, size), "cuMemcpyHtoD");
}

void CudaBuffer::copy_to_host(void* host, size_t size) const {
  if (size > bytes_)
    throw CudaError("copy_to_host: " + std::to_string(size) + " bytes from a buffer of " + std::to_string(bytes_));
  driver_->make_current();
  driver_->check(driver_->api_->cuMemcpyDtoH(host, pointer_, size), "cuMemcpyDtoH");
}

CudaKernel::~CudaKernel() {
  if (module_ && driver_->api_->cuCtxSetCurrent(driver_->context_) == kCudaSuccess)
    driver_->api_->cuModuleUnload(module_);
}

int CudaKernel::max_active_blocks_per_sm(int block_threads, size_t dynamic_shared_bytes) const {
  driver_->make_current();
  int blocks = 0;
  driver_->check(driver_->api_->cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, function_, block_threads,
                                                                            dynamic_shared_bytes),
                 "cuOccupancyMaxActiveBlocksPerMultiprocessor");
  return blocks;
}

int CudaKernel::attribute(int attribute, const char* what) const {
  driver_->make_current();
  int value = 0;
  driver_->check(driver_->api_->cuFuncGetAttribute(&value, attribute, function_), what);
  return value;
}

int CudaKernel::registers_per_thread() const { return attribute(kFuncAttrNumRegs, "cuFuncGetAttribute(NUM_REGS)"); }

int CudaKernel::static_shared_bytes() const {
  return attribute(kFuncAttrSharedSizeBytes, "cuFuncGetAttribute(SHARED_SIZE_BYTES)");
}

int CudaKernel::local_bytes_per_thread() const {
  return attribute(kFuncAttrLocalSizeBytes, "cuFuncGetAttribute(LOCAL_SIZE_BYTES)");
}

int64_t CudaKernel::cooperative_grid_limit(int block_threads, size_t dynamic_shared_bytes) const {
  return int64_t(max_active_blocks_per_sm(block_threads, dynamic_shared_bytes)) * driver_->multiprocessor_count();
}

}  // namespace ingot
