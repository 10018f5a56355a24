#include "runtime/cuda_driver.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <random>

#include "codegen/cuda_printer.h"
#include "tests/support/cuda_test_functions.h"
#ifdef INGOT_HAVE_CUDA
#include "compile/nvrtc_compiler.h"
#endif

namespace ingot {
namespace {

using ::testing::HasSubstr;

void expect_device_calls_fail(const CudaDriver& driver) {
  ASSERT_FALSE(driver.available());
  try {
    driver.allocate(16);
    ADD_FAILURE() << "allocate succeeded without a device";
  } catch (const CudaError& e) {
    EXPECT_THAT(e.what(), HasSubstr("CUDA is unavailable"));
    EXPECT_THAT(e.what(), HasSubstr(driver.reason()));
  }
  EXPECT_THROW(driver.load_kernel(std::vector<char>(16, 0), "k"), CudaError);
  EXPECT_THROW(driver.synchronize(), CudaError);
}

TEST(CudaDriver, OpenSaysWhetherAGpuIsUsable) {
  std::shared_ptr<CudaDriver> driver = CudaDriver::open();
  ASSERT_NE(driver, nullptr);
  EXPECT_EQ(driver, CudaDriver::open());  // one per process
  if (!driver->available()) {
    std::printf("CUDA unavailable: %s\n", driver->reason().c_str());
    EXPECT_FALSE(driver->reason().empty());
    expect_device_calls_fail(*driver);
    return;
  }
  EXPECT_GE(driver->compute_capability(), 50);
  EXPECT_GT(driver->multiprocessor_count(), 0);
  EXPECT_FALSE(driver->device_name().empty());
  EXPECT_EQ(driver->arch(), "sm_" + std::to_string(driver->compute_capability()));
}

TEST(CudaDriver, MissingDriverLibraryIsReportedNotThrown) {
  std::shared_ptr<CudaDriver> driver = CudaDriver::open_library("libingot_no_such_cuda.so.1");
  ASSERT_NE(driver, nullptr);
  EXPECT_FALSE(driver->available());
  EXPECT_THAT(driver->reason(), HasSubstr("libingot_no_such_cuda.so.1 not found"));
  expect_device_calls_fail(*driver);
}

// The toolkit's stub libcuda exports the whole driver API but fails cuInit: opening it checks that every
// entry point resolves and that a failing cuInit is reported. It runs in a child process because the stub
// has the soname libcuda.so.1 and would shadow the real driver for the rest of this process.
TEST(CudaDriverDeathTest, StubDriverResolvesAllEntryPointsAndReportsCuInit) {
  const char* home = std::getenv("CUDA_HOME");
  std::string stub;
  for (const std::string& root : {std::string(home && *home ? home : ""), std::string("/usr/local/cuda")}) {
    if (root.empty()) continue;
    for (const char* lib :
         {"/lib64/stubs/libcuda.so", "/lib/stubs/libcuda.so", "/targets/x86_64-linux/lib/stubs/libcuda.so"})
      if (stub.empty() && std::filesystem::exists(root + lib)) stub = root + lib;
  }
  if (stub.empty()) GTEST_SKIP() << "no CUDA toolkit stub libcuda.so";
  EXPECT_EXIT(
      {
        std::shared_ptr<CudaDriver> driver = CudaDriver::open_library(stub);
        std::fprintf(stderr, "reason: %s\n", driver->reason().c_str());
        std::exit(driver->available() ? 1 : 0);
      },
      ::testing::ExitedWithCode(0), "reason: cuInit failed: CUDA_ERROR_STUB_LIBRARY");
}

#ifdef INGOT_HAVE_CUDA
// The driver when a GPU is usable, else null.
std::shared_ptr<CudaDriver> device_or_null() {
  std::shared_ptr<CudaDriver> driver = CudaDriver::open();
  return driver->available() ? driver : nullptr;
}

std::vector<float> random_floats(size_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(gen);
  return v;
}

std::unique_ptr<CudaBuffer> upload(const CudaDriver& driver, const std::vector<float>& host) {
  auto buffer = driver.allocate(host.size() * sizeof(float));
  buffer->copy_from_host(host.data(), host.size() * sizeof(float));
  return buffer;
}

std::vector<float> download(const CudaBuffer& buffer) {
  std::vector<float> host(buffer.bytes() / sizeof(float));
  buffer.copy_to_host(host.data(), buffer.bytes());
  return host;
}

#endif  // INGOT_HAVE_CUDA

// The device tests below compile with NVRTC, so they need the toolkit at build time and a GPU at run time.

TEST(CudaDriver, VectorAddRunsOnTheDevice) {
#ifndef INGOT_HAVE_CUDA
  GTEST_SKIP() << "built without the CUDA toolkit: no NVRTC to compile kernels";
#else
  auto driver = device_or_null();
  if (!driver) GTEST_SKIP() << "no usable GPU: " << CudaDriver::open()->reason();
  // Printed kernels take only buffers, so n is a constant here.
  const std::string source = R"(
extern "C" __global__ void vector_add(const float* __restrict__ a, const float* __restrict__ b,
                                      float* __restrict__ c) {
  const int n = 1000;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
})";
  CudaBinary bin = compile_cuda(source, driver->arch(), "vector_add");
  auto kernel = driver->load_kernel(bin.cubin, "vector_add");
  const size_t n = 1000;
  std::vector<float> a = random_floats(n, 1), b = random_floats(n, 2);
  auto da = upload(*driver, a), db = upload(*driver, b), dc = driver->allocate(n * sizeof(float));
  driver->launch(*kernel, {int64_t((n + 255) / 256), 1, 1}, {256, 1, 1}, {da.get(), db.get(), dc.get()}, false);
  std::vector<float> c = download(*dc);
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(c[i], a[i] + b[i]) << "element " << i;
#endif
}

TEST(CudaDriver, PrintedTwoStageKernelRunsCooperatively) {
#ifndef INGOT_HAVE_CUDA
  GTEST_SKIP() << "built without the CUDA toolkit: no NVRTC to compile kernels";
#else
  auto driver = device_or_null();
  if (!driver) GTEST_SKIP() << "no usable GPU: " << CudaDriver::open()->reason();
  if (!driver->supports_cooperative_launch()) GTEST_SKIP() << driver->device_name() << " has no cooperative launch";
  LoopFunction f = two_stage_function();
  CudaLaunchConfig launch = cuda_launch_config(f);
  ASSERT_TRUE(launch.cooperative);
  CudaBinary bin = compile_cuda(print_cuda(f), driver->arch(), launch.kernel_name);
  auto kernel = driver->load_kernel(bin.cubin, launch.kernel_name);
  int64_t limit = kernel->cooperative_grid_limit(static_cast<int>(launch.threads_per_block()));
  ASSERT_GT(limit, 0);
  EXPECT_GT(kernel->registers_per_thread(), 0);
  EXPECT_EQ(kernel->local_bytes_per_thread(), 0);
  launch = fit_grid(launch, limit);

  std::vector<float> x = random_floats(4 * 256, 3);
  auto dx = upload(*driver, x);
  auto dy = driver->allocate(4 * sizeof(float)), dz = driver->allocate(sizeof(float));
  auto dw = driver->allocate(4 * 256 * sizeof(float));
  driver->launch(*kernel, launch.grid, launch.block, {dx.get(), dy.get(), dz.get(), dw.get()}, true);

  // Reference, in the kernel's order of operations: W[b, t] = 2 X[b, 255 - t] + 1; Y[b] = sum_t W[b, t].
  std::vector<float> w(4 * 256), y(4, 0.0f);
  for (int b = 0; b < 4; ++b)
    for (int t = 0; t < 256; ++t) w[b * 256 + t] = x[b * 256 + 255 - t] * 2.0f + 1.0f;
  for (int b = 0; b < 4; ++b)
    for (int k = 0; k < 256; ++k) y[b] += w[b * 256 + k];
  EXPECT_EQ(download(*dw), w);
  EXPECT_EQ(download(*dy), y);
  EXPECT_EQ(download(*dz)[0], std::max(y[0], y[3]));

  // The same kernel on a single block still covers every iteration (grid-stride loops).
  CudaLaunchConfig one_block = fit_grid(launch, 1);
  std::vector<float> zeros(4 * 256, 0.0f);
  dw->copy_from_host(zeros.data(), zeros.size() * sizeof(float));
  driver->launch(*kernel, one_block.grid, one_block.block, {dx.get(), dy.get(), dz.get(), dw.get()}, true);
  EXPECT_EQ(download(*dw), w);
  EXPECT_EQ(download(*dy), y);
#endif
}

TEST(CudaDriver, PrintedTiledMatmulMatchesTheHost) {
#ifndef INGOT_HAVE_CUDA
  GTEST_SKIP() << "built without the CUDA toolkit: no NVRTC to compile kernels";
#else
  auto driver = device_or_null();
  if (!driver) GTEST_SKIP() << "no usable GPU: " << CudaDriver::open()->reason();
  LoopFunction f = tiled_matmul_function();
  CudaLaunchConfig launch = cuda_launch_config(f);
  CudaBinary bin = compile_cuda(print_cuda(f), driver->arch(), launch.kernel_name);
  auto kernel = driver->load_kernel(bin.cubin, launch.kernel_name);
  const int m = 32, n = 64, k = 64;
  std::vector<float> a = random_floats(m * k, 4), b = random_floats(k * n, 5);
  auto da = upload(*driver, a), db = upload(*driver, b), dc = driver->allocate(m * n * sizeof(float));
  // Half the threads the kernel wants in x: block-stride thread loops still cover the tile.
  driver->launch(*kernel, launch.grid, {8, 16, 1}, {da.get(), db.get(), dc.get()}, false);
  std::vector<float> c = download(*dc);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double expected = 0;
      for (int l = 0; l < k; ++l) expected += double(a[i * k + l]) * b[l * n + j];
      ASSERT_NEAR(c[i * n + j], expected, 1e-4) << "C[" << i << ", " << j << "]";
    }
#endif
}

}  // namespace
}  // namespace ingot
