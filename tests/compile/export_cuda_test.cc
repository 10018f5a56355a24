// CUDA export: the kernels of a GPU schedule and the host code that launches them, written as files that nvcc builds
// with the export's one command. Each distinct kernel is defined once; a `global` program is one cooperative kernel
// whose grid is fitted at launch; the workspace is cut at 256-byte steps. Where nvcc is installed, the six small paper
// models' `global` exports build for sm_90 (and one for sm_80); where a GPU is usable they also pass their own check,
// and where none is, the built program says why and exits with 3.
#include "compile/export_cuda.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <regex>
#include <set>
#include <sstream>

#include "analysis/target.h"
#include "codegen/cuda_printer.h"
#include "codegen/pipeline.h"
#include "interp/interpreter.h"
#include "runtime/cuda_driver.h"
#include "space/strategy_schedule.h"
#include "workloads/bf16_products.h"
#include "workloads/examples.h"
#include "workloads/registry.h"

namespace ingot {
namespace {

namespace fs = std::filesystem;

struct GpuProgram {
  Program program;
  LoopFunction function;
  InputRanges ranges;
};

GpuProgram gpu_program(const Program& p, const std::string& strategy, const InputRanges& ranges = {},
                       const std::vector<std::string>& weights = {}) {
  FixedScheduleOptions options;
  options.gpu = true;
  options.weights = weights;
  Schedule s = make_strategy_program(p, strategy, resolve_target("sm_90"), options).schedule;
  return {p, lower_program(p, s), ranges};
}

GpuProgram small_model(const std::string& name, const std::string& strategy) {
  WorkloadParams small = find_workload(name)->small;
  return gpu_program(make_workload(name, small), strategy, workload_input_ranges(name, small),
                     find_workload(name)->weight_names(small));
}

ExportedProgram export_of(const GpuProgram& g, const std::string& arch = "sm_90") {
  TensorMap inputs = random_inputs(g.program, 1, g.ranges);
  TensorMap reference = interpret(g.program, inputs);
  return export_cuda(g.function, std::move(inputs), std::move(reference), arch);
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// nvcc's folder: $CUDA_HOME/bin, else /usr/local/cuda/bin, else empty (then nvcc on the PATH, if any).
std::string nvcc_folder() {
  for (const char* home : {static_cast<const char*>(std::getenv("CUDA_HOME")), "/usr/local/cuda"})
    if (home && *home && fs::exists(fs::path(home) / "bin" / "nvcc")) return (fs::path(home) / "bin").string();
  return "";
}

bool have_nvcc() { return !nvcc_folder().empty() || std::system("command -v nvcc > /dev/null 2>&1") == 0; }

struct ProgramRun {
  int exit_code = -1;
  std::string output;
};

// Writes the export into a fresh folder, builds it with its own command (nvcc's messages into build.log) and, when
// it built, runs it.
ProgramRun build_and_run(const ExportedProgram& e, const std::string& tag) {
  fs::path dir = fs::temp_directory_path() / ("ingot_export_cuda_" + std::to_string(::getpid()) + "_" + tag);
  fs::remove_all(dir);
  write_exported_program(e, dir.string());
  std::string path = nvcc_folder().empty() ? "" : "PATH=\"" + nvcc_folder() + ":$PATH\" ";
  std::string build = "cd '" + dir.string() + "' && " + path + e.build_command + " > build.log 2>&1";
  if (std::system(build.c_str()) != 0) {
    ProgramRun failed{-2, "build failed:\n" + read_text(dir / "build.log")};
    fs::remove_all(dir);
    return failed;
  }
  std::string run = "cd '" + dir.string() + "' && ./" + e.name + " > run.log 2>&1";
  int status = std::system(run.c_str());
  ProgramRun result{WIFEXITED(status) ? WEXITSTATUS(status) : -1, read_text(dir / "run.log")};
  fs::remove_all(dir);
  return result;
}

// The outcome a built export must have on this machine: its check passes on a usable GPU; without one it names the
// CUDA error and exits with 3.
void expect_checked_or_refused(const ProgramRun& run, const std::string& what) {
  ASSERT_NE(run.exit_code, -2) << what << ": " << run.output;
  auto driver = CudaDriver::open();
  if (driver->available()) {
    EXPECT_EQ(run.exit_code, 0) << what << " on " << driver->device_name() << ":\n" << run.output;
    EXPECT_NE(run.output.find("every output matches the reference"), std::string::npos) << what << run.output;
  } else {
    EXPECT_EQ(run.exit_code, 3) << what << ":\n" << run.output;
    EXPECT_NE(run.output.find("cuda"), std::string::npos) << what << ":\n" << run.output;
  }
}

TEST(ExportCuda, AGlobalProgramIsOneCooperativeKernelAndItsLaunch) {
  ExportedProgram e = export_of(gpu_program(two_gemm(16, 32, 24, 8), "global"));
  EXPECT_EQ(e.name, "two_gemm");
  EXPECT_EQ(e.kernel_file, "two_gemm.cu");
  EXPECT_EQ(e.main_file, "two_gemm_main.cpp");
  EXPECT_EQ(e.build_command, "nvcc -O3 -arch=sm_90 two_gemm.cu two_gemm_main.cpp -o two_gemm");
  EXPECT_EQ(count(e.kernel_source, "__global__"), 1u) << e.kernel_source;
  EXPECT_NE(e.kernel_source.find("extern \"C\" __global__ void __launch_bounds__"), std::string::npos);
  EXPECT_NE(e.kernel_source.find(" two_gemm_kernel_0("), std::string::npos) << e.kernel_source;
  EXPECT_NE(e.kernel_source.find("ingot_grid_sync();"), std::string::npos);
  // One launch, cooperative, of that kernel; the grid is fitted inside ingot_launch.
  EXPECT_EQ(count(e.kernel_source, "ingot_launch((const void*)"), 1u);
  EXPECT_NE(e.kernel_source.find("ingot_launch((const void*)two_gemm_kernel_0, dim3("), std::string::npos);
  EXPECT_NE(e.kernel_source.find("true, arguments, stream);"), std::string::npos);
  EXPECT_NE(e.kernel_source.find("cudaLaunchCooperativeKernel(kernel, ingot_fit_grid(grid, limit)"), std::string::npos);
  EXPECT_NE(
      e.header.find("extern \"C\" cudaError_t ingot_run(void* const* args, void* workspace, cudaStream_t stream);"),
      std::string::npos);
  EXPECT_NE(e.header.find("//   args[3]: output Y f32[16, 8]"), std::string::npos) << e.header;
  EXPECT_NE(e.main_source.find("#include <cuda_runtime.h>"), std::string::npos);
  EXPECT_NE(e.main_source.find("cudaMemcpyHostToDevice"), std::string::npos);
  EXPECT_NE(e.readme.find("two_gemm.cu"), std::string::npos);
  EXPECT_NE(e.readme.find("3 a CUDA call failed"), std::string::npos);
}

// Every workspace buffer starts at a multiple of 256 bytes, one after another, and the total covers the last.
TEST(ExportCuda, WorkspaceBuffersAreCutAt256ByteSteps) {
  GpuProgram g = gpu_program(two_gemm(16, 32, 24, 8), "global");
  ASSERT_FALSE(g.function.workspace.empty());
  ExportedProgram e = export_of(g);
  int64_t offset = 0;
  for (const Buffer& b : g.function.workspace) {
    EXPECT_NE(e.kernel_source.find("static_cast<char*>(workspace) + " + std::to_string(offset) + ";  // " + b->name),
              std::string::npos)
        << b->name << " at " << offset << "\n"
        << e.kernel_source;
    offset += (b->num_elements() * dtype_bytes(b->dtype) + 255) / 256 * 256;
  }
  EXPECT_NE(e.kernel_source.find("ingot_workspace_bytes(void) { return " + std::to_string(offset) + "; }"),
            std::string::npos);
}

// The small LSTM's unfused program repeats its cells' kernels with other buffers: each text is defined once and
// launched as often as the program runs it, with plain (not cooperative) launches.
TEST(ExportCuda, KernelsThatDifferOnlyInNamesAreDefinedOnce) {
  GpuProgram g = small_model("lstm", "unfused");
  const std::vector<LoopFunction> kernels = prepare_for_gpu(g.function);
  std::set<std::string> distinct;
  for (const LoopFunction& k : kernels) distinct.insert(print_cuda_canonical(k));
  ASSERT_LT(distinct.size(), kernels.size());
  ExportedProgram e = export_of(g);
  EXPECT_EQ(count(e.kernel_source, "__global__"), distinct.size());
  EXPECT_EQ(count(e.kernel_source, "ingot_launch((const void*)"), kernels.size());
  EXPECT_EQ(count(e.kernel_source, "false, arguments, stream);"), kernels.size());
  // Every launched kernel is defined.
  std::regex launched("ingot_launch\\(\\(const void\\*\\)(lstm_kernel_[0-9]+),");
  for (auto it = std::sregex_iterator(e.kernel_source.begin(), e.kernel_source.end(), launched);
       it != std::sregex_iterator(); ++it)
    EXPECT_NE(e.kernel_source.find(" " + (*it)[1].str() + "("), std::string::npos) << (*it)[1].str();
  EXPECT_NE(e.kernel_source.find(std::to_string(kernels.size()) + " kernels (" + std::to_string(distinct.size()) +
                                 " distinct, 0 cooperative)"),
            std::string::npos);
}

TEST(ExportCuda, RefusesAnArchitectureThatIsNotOne) {
  GpuProgram g = gpu_program(two_gemm(16, 32, 24, 8), "global");
  for (const char* arch : {"x86", "sm90", "compute_90", ""}) {
    try {
      export_of(g, arch);
      ADD_FAILURE() << arch;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("is not a CUDA architecture"), std::string::npos) << e.what();
    }
  }
}

// The CUDA printer has no bf16 form: a bf16 program is refused with its reason, not written.
TEST(ExportCuda, RefusesBf16Buffers) {
  WorkloadParams small = find_workload("mlp")->small;
  Program f32 = make_workload("mlp", small);
  Bf16Program bf16 = bf16_products(f32, find_workload("mlp")->weight_names(small));
  GpuProgram g = gpu_program(bf16.program, "global");
  try {
    export_of(g);
    ADD_FAILURE() << "a bf16 program was exported for the GPU";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("bf16"), std::string::npos) << e.what();
  }
}

// Issue 18's export, CUDA half: the six small paper models under `global` are one cooperative kernel each, built by
// the export's own nvcc command; on a GPU they pass their check (scripts/gpu_check.sh runs the same on a lent one).
TEST(ExportCuda, SmallPaperModelsUnderTheGlobalPlanBuildWithNvcc) {
  if (!have_nvcc()) GTEST_SKIP() << "no nvcc (CUDA_HOME/bin, /usr/local/cuda/bin or the PATH)";
  std::vector<std::pair<std::string, ExportedProgram>> exports;
  for (const char* name : {"bert", "lstm", "resnext", "efficientnet", "swin", "mmoe"}) {
    ExportedProgram e = export_of(small_model(name, "global"));
    EXPECT_EQ(count(e.kernel_source, "__global__"), 1u) << name;
    EXPECT_EQ(count(e.kernel_source, "true, arguments, stream);"), 1u) << name;
    exports.emplace_back(name, std::move(e));
  }
  exports.emplace_back("mlp for sm_80", export_of(small_model("mlp", "global"), "sm_80"));
  EXPECT_NE(exports.back().second.build_command.find("-arch=sm_80"), std::string::npos);
  // Two builds at a time: the machines that run the suite may have two cores.
  for (size_t first = 0; first < exports.size(); first += 2) {
    std::vector<std::future<ProgramRun>> runs;
    for (size_t n = first; n < std::min(first + 2, exports.size()); ++n)
      runs.push_back(std::async(std::launch::async,
                                [&exports, n] { return build_and_run(exports[n].second, std::to_string(n)); }));
    for (size_t n = first; n < first + runs.size(); ++n)
      expect_checked_or_refused(runs[n - first].get(), exports[n].first);
  }
}

}  // namespace
}  // namespace ingot
