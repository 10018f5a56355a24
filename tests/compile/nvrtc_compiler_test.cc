#include "compile/nvrtc_compiler.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "codegen/cuda_printer.h"
#include "compile/kernel_cache.h"
#include "tests/support/cuda_test_functions.h"

namespace ingot {
namespace {

using ::testing::HasSubstr;

TEST(NvrtcCompiler, FindsToolkitHeaders) {
  std::vector<std::string> dirs = cuda_include_dirs();
  ASSERT_FALSE(dirs.empty());
  EXPECT_FALSE(nvrtc_version().empty());
}

// Each printed kernel compiles for Ampere and Hopper; ptxas reports real resource use.
class NvrtcCompilesPrintedKernels : public ::testing::TestWithParam<std::string> {};

TEST_P(NvrtcCompilesPrintedKernels, TwoStageAndMatmul) {
  const std::string arch = GetParam();
  for (const LoopFunction& f : {two_stage_function(), tiled_matmul_function()}) {
    const std::string name = cuda_kernel_name(f);
    CudaBinary bin = compile_cuda(print_cuda(f), arch, name);
    SCOPED_TRACE(name + " for " + arch + "\n" + bin.log);
    EXPECT_EQ(bin.arch, arch);
    EXPECT_GT(bin.registers, 0);
    EXPECT_FALSE(bin.cubin.empty());
    EXPECT_THAT(bin.ptx, HasSubstr(".entry " + name));
    EXPECT_THAT(bin.log, HasSubstr("Compiling entry function '" + name + "' for '" + arch + "'"));
    EXPECT_EQ(bin.spill_stores, 0);
    EXPECT_EQ(bin.spill_loads, 0);
    if (name == "matmul") {
      EXPECT_EQ(bin.shared_bytes, 2 * 16 * 64 * 4);  // A_tile and B_tile
    } else {
      EXPECT_GE(bin.shared_bytes, 256 * 4);  // tile
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Archs, NvrtcCompilesPrintedKernels, ::testing::Values("sm_80", "sm_90"));

// A cubin compiled once is kept in the kernel cache by source, architecture and NVRTC version: the same kernel loads
// from there byte for byte, another architecture compiles anew, the cache counts and cleans the files, and a broken
// kernel leaves nothing behind.
TEST(NvrtcCompiler, CachedCubinsLoadFromTheKernelCache) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("ingot_cubin_cache_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  const LoopFunction f = two_stage_function();
  const std::string source = print_cuda(f), name = cuda_kernel_name(f);
  CudaBinary first = compile_cuda_cached(source, "sm_90", name, dir.string());
  EXPECT_FALSE(first.cache_hit);
  EXPECT_GT(first.registers, 0);
  CudaBinary again = compile_cuda_cached(source, "sm_90", name, dir.string());
  EXPECT_TRUE(again.cache_hit);
  EXPECT_EQ(again.cubin, first.cubin);
  EXPECT_EQ(again.cubin, compile_cuda(source, "sm_90", name).cubin);
  EXPECT_FALSE(compile_cuda_cached(source, "sm_80", name, dir.string()).cache_hit);
  EXPECT_THROW(compile_cuda_cached("__global__ void broken( {", "sm_90", "", dir.string()), NvrtcError);
  EXPECT_EQ(kernel_cache_usage(dir.string()).libraries, 2);
  EXPECT_EQ(kernel_cache_usage(dir.string()).temporary, 0);
  EXPECT_EQ(clean_kernel_cache(dir.string()).libraries, 2);
  EXPECT_FALSE(compile_cuda_cached(source, "sm_90", name, dir.string()).cache_hit);
  std::filesystem::remove_all(dir);
}

TEST(NvrtcCompiler, BrokenSourceReportsTheNvrtcErrorAndTheLine) {
  const std::string source =
      "extern \"C\" __global__ void broken(float* out) {\n"
      "  int i = threadIdx.x;\n"
      "  out[i] = undefined_value * 2.0f;\n"
      "}\n";
  try {
    compile_cuda(source, "sm_80", "broken");
    FAIL() << "compiled a broken kernel";
  } catch (const NvrtcError& e) {
    std::string message = e.what();
    EXPECT_THAT(message, HasSubstr("NVRTC_ERROR_COMPILATION"));
    EXPECT_THAT(message, HasSubstr("identifier \"undefined_value\" is undefined"));
    EXPECT_THAT(message, HasSubstr(">    3 |   out[i] = undefined_value * 2.0f;"));
    EXPECT_THAT(e.log(), HasSubstr("broken.cu(3): error"));
  }
}

TEST(NvrtcCompiler, RejectsVirtualOrUnknownArchitectures) {
  EXPECT_THROW(compile_cuda("", "compute_80"), std::invalid_argument);
  EXPECT_THROW(compile_cuda("", "80"), std::invalid_argument);
}

TEST(NvrtcCompiler, ParsesPtxasLogsPerEntryFunction) {
  const std::string log =
      "ptxas info    : 0 bytes gmem\n"
      "ptxas info    : Function properties for helper\n"
      "ptxas         .     96 bytes stack frame, 8 bytes spill stores, 8 bytes spill loads\n"
      "ptxas info    : Compiling entry function 'first' for 'sm_90'\n"
      "ptxas info    : Function properties for first\n"
      "ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Used 12 registers, 380 bytes cmem[0]\n"
      "ptxas info    : Compiling entry function 'second' for 'sm_90'\n"
      "ptxas info    : Function properties for second\n"
      "ptxas         .     40 bytes stack frame, 24 bytes spill stores, 16 bytes spill loads\n"
      "ptxas info    : Used 255 registers, used 1 barriers, 40 bytes cumulative stack size, 8192 bytes smem, "
      "368 bytes cmem[0]\n";
  PtxasStats first = parse_ptxas_log(log);
  EXPECT_TRUE(first.found);
  EXPECT_EQ(first.registers, 12);
  EXPECT_EQ(first.shared_bytes, 0);
  EXPECT_EQ(first.stack_frame, 0);
  PtxasStats second = parse_ptxas_log(log, "second");
  EXPECT_TRUE(second.found);
  EXPECT_EQ(second.registers, 255);
  EXPECT_EQ(second.shared_bytes, 8192);
  EXPECT_EQ(second.stack_frame, 40);
  EXPECT_EQ(second.spill_stores, 24);
  EXPECT_EQ(second.spill_loads, 16);
  EXPECT_FALSE(parse_ptxas_log(log, "third").found);
}

}  // namespace
}  // namespace ingot
