#include "runtime/cuda_run.h"

#include <chrono>
#include <map>
#include <memory>
#include <stdexcept>

#include "codegen/pipeline.h"
#include "results/run_statistics.h"
#include "runtime/cuda_driver.h"
#include "runtime/repeat_timing.h"
#ifdef INGOT_HAVE_CUDA
#include "compile/nvrtc_compiler.h"
#endif

namespace ingot {

#ifndef INGOT_HAVE_CUDA

CudaRunResult cuda_run(const Program&, const LoopFunction&, const TensorMap&, const TensorMap&, const CudaRunOptions&) {
  throw CudaError("cuda_run: ingot was built without the CUDA toolkit, so it cannot compile kernels");
}

#else

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

const HostTensor& find_tensor(const TensorMap& tensors, const std::string& name, const char* what) {
  auto it = tensors.find(name);
  if (it == tensors.end()) throw std::invalid_argument(std::string("cuda_run: no ") + what + " tensor '" + name + "'");
  return it->second;
}

struct QueuedKernel {
  const CudaKernel* kernel;
  CudaLaunchConfig launch;
  std::vector<const CudaBuffer*> arguments;
};

}  // namespace

CudaRunResult cuda_run(const Program& program, const LoopFunction& function, const TensorMap& inputs,
                       const TensorMap& expected, const CudaRunOptions& options) {
  std::shared_ptr<CudaDriver> driver = CudaDriver::open();
  if (!driver->available()) throw CudaError("cuda_run: no usable GPU: " + driver->reason());
  CudaRunResult result;
  result.device = driver->device_name() + " (" + driver->arch() + ")";

  // Every buffer of the function lives in device memory for the whole run; kernels pass them by name.
  std::map<std::string, std::unique_ptr<CudaBuffer> > device;
  for (const auto* list : {&function.inputs, &function.outputs, &function.workspace})
    for (const Buffer& b : *list)
      device[b->name] = driver->allocate(size_t(std::max<int64_t>(1, b->num_elements() * dtype_bytes(b->dtype))));
  for (const Tensor& t : program.placeholders()) {
    const HostTensor& host = find_tensor(inputs, t->name, "input");
    auto it = device.find(t->name);
    if (it == device.end()) throw std::invalid_argument("cuda_run: the function has no input '" + t->name + "'");
    if (host.num_bytes() != it->second->bytes())
      throw std::invalid_argument("cuda_run: input '" + t->name + "' has the wrong size");
    HostTensor packed;
    for (const PackedLayout& layout : function.packed_inputs)
      if (layout.tensor == t->name) packed = layout.pack(host);
    it->second->copy_from_host(packed.num_elements() ? packed.data() : host.data(), host.num_bytes());
  }

  std::map<std::string, std::unique_ptr<CudaKernel> > binaries;  // canonical source -> kernel
  std::vector<QueuedKernel> queue;
  Clock::time_point compile_start = Clock::now();
  for (const LoopFunction& k : prepare_for_gpu(function)) {
    std::string source = print_cuda_canonical(k);
    auto [it, is_new] = binaries.try_emplace(source);
    // The kernel's figures come from the driver (CudaKernelLaunch), so only the cubin of the compile is needed.
    if (is_new)
      it->second = driver->load_kernel(
          compile_cuda_cached(source, driver->arch(), "ingot_kernel", options.kernel_cache_dir).cubin, "ingot_kernel");
    const CudaKernel& kernel = *it->second;
    CudaKernelLaunch launch;
    launch.name = k.name;
    launch.launch = cuda_launch_config(k);
    launch.registers = kernel.registers_per_thread();
    launch.shared_bytes = kernel.static_shared_bytes();
    launch.local_bytes = kernel.local_bytes_per_thread();
    if (launch.launch.cooperative) {
      if (!driver->supports_cooperative_launch())
        throw CudaError("cuda_run: kernel '" + k.name + "' has grid barriers but " + driver->device_name() +
                        " has no cooperative launch");
      launch.cooperative_limit = kernel.cooperative_grid_limit(static_cast<int>(launch.launch.threads_per_block()));
      if (launch.cooperative_limit < 1)
        throw CudaError("cuda_run: kernel '" + k.name + "' does not fit on a multiprocessor (" +
                        std::to_string(launch.registers) + " registers, " + std::to_string(launch.shared_bytes) +
                        " B shared per block)");
      launch.launch = fit_grid(launch.launch, launch.cooperative_limit);
    }
    QueuedKernel queued{it->second.get(), launch.launch, {}};
    for (const auto* list : {&k.inputs, &k.outputs, &k.workspace})
      for (const Buffer& b : *list) queued.arguments.push_back(device.at(b->name).get());
    queue.push_back(std::move(queued));
    result.kernels.push_back(std::move(launch));
  }
  result.distinct_binaries = static_cast<int>(binaries.size());
  result.compile_seconds = seconds_since(compile_start);

  auto run_once = [&] {
    for (const QueuedKernel& q : queue)
      driver->enqueue(*q.kernel, q.launch.grid, q.launch.block, q.arguments, q.launch.cooperative);
    driver->synchronize();
  };
  run_once();
  result.correct = true;
  for (const Tensor& t : program.outputs()) {
    const HostTensor& want = find_tensor(expected, t->name, "expected");
    HostTensor got(t->dtype, t->shape);
    device.at(t->name)->copy_to_host(got.data(), got.num_bytes());
    result.checks.push_back(
        compare(got, want, options.rtol, absolute_tolerance(options.atol, want, t->name, options.rounding_noise)));
    result.correct &= result.checks.back().ok;
  }
  if (!result.correct) return result;

  result.seconds =
      time_repeats(run_once, {options.warmup_runs, options.min_repeat_ms, options.min_repeats, options.max_repeats});
  result.statistics = run_statistics(result.seconds);
  return result;
}

#endif  // INGOT_HAVE_CUDA

}  // namespace ingot
