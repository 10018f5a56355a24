#include "compile/export_cuda.h"

#include <map>
#include <regex>
#include <sstream>
#include <stdexcept>

#include "codegen/cuda_printer.h"
#include "codegen/pipeline.h"

namespace ingot {

namespace {

// Device buffers are cut from the workspace at this alignment, as cudaMalloc aligns its allocations.
constexpr int64_t kWorkspaceAlignment = 256;

// A name for a // comment: users' tensor names may hold any character.
std::string comment_text(const std::string& name) {
  std::string out;
  for (unsigned char c : name) out += c >= 32 && c < 127 ? char(c) : '?';
  return out;
}

// The launch helpers of the exported host code: fit_grid's rule and the cooperative limit as cuda_run finds it.
constexpr const char* kLaunchHelpers = R"CUDA(
namespace {

// Shrinks z, then y, then x until the grid has at most max_blocks blocks: the kernels' block loops are grid-stride
// loops, so any smaller grid computes the same.
dim3 ingot_fit_grid(dim3 grid, long long max_blocks) {
  unsigned* dims[3] = {&grid.x, &grid.y, &grid.z};
  for (int d = 2; d >= 0; --d) {
    const long long blocks = (long long)grid.x * grid.y * grid.z;
    if (blocks <= max_blocks) break;
    const long long others = blocks / *dims[d];
    *dims[d] = (unsigned)(max_blocks / others > 1 ? max_blocks / others : 1);
  }
  return grid;
}

// A kernel with grid barriers is launched cooperatively with at most as many blocks as the current device holds at
// once; the others are plain launches.
cudaError_t ingot_launch(const void* kernel, dim3 grid, dim3 block, bool cooperative, void** args,
                         cudaStream_t stream) {
  if (!cooperative) return cudaLaunchKernel(kernel, grid, block, args, 0, stream);
  int device = 0, multiprocessors = 0, per_multiprocessor = 0;
  cudaError_t error = cudaGetDevice(&device);
  if (error == cudaSuccess)
    error = cudaDeviceGetAttribute(&multiprocessors, cudaDevAttrMultiProcessorCount, device);
  if (error == cudaSuccess)
    error = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_multiprocessor, kernel,
                                                          int(block.x * block.y * block.z), 0);
  if (error != cudaSuccess) return error;
  const long long limit = (long long)multiprocessors * per_multiprocessor;
  if (limit < 1) return cudaErrorCooperativeLaunchTooLarge;
  return cudaLaunchCooperativeKernel(kernel, ingot_fit_grid(grid, limit), block, args, 0, stream);
}

}  // namespace
)CUDA";

// The CUDA main's run: every buffer in device memory, the inputs copied there once before the runs, each run timed
// to the end of its kernels.
constexpr const char* kCudaRun = R"CUDA(  auto cuda_ok = [](cudaError_t error, const char* what) {
    if (error != cudaSuccess) std::fprintf(stderr, "%s: %s (%s)\n", what, cudaGetErrorString(error), cudaGetErrorName(error));
    return error == cudaSuccess;
  };
  std::vector<void*> args;
  for (size_t n = 0; n < inputs.size() + outputs.size(); ++n) {
    const Tensor& t = n < inputs.size() ? inputs[n] : outputs[n - inputs.size()];
    void* device = nullptr;
    if (!cuda_ok(cudaMalloc(&device, std::max<size_t>(t.bytes, 1)), "cudaMalloc")) return 3;
    args.push_back(device);
    if (n < inputs.size() &&
        !cuda_ok(cudaMemcpy(device, t.data, t.bytes, cudaMemcpyHostToDevice), "copying an input to the device"))
      return 3;
  }
  void* workspace = nullptr;
  if (ingot_workspace_bytes() > 0 &&
      !cuda_ok(cudaMalloc(&workspace, size_t(ingot_workspace_bytes())), "cudaMalloc of the workspace"))
    return 3;
  std::vector<double> milliseconds;
  for (long run = 0; run < std::max(repeat, 1L); ++run) {
    auto start = std::chrono::steady_clock::now();
    if (!cuda_ok(ingot_run(args.data(), workspace, 0), "ingot_run") ||
        !cuda_ok(cudaDeviceSynchronize(), "running the kernels"))
      return 3;
    milliseconds.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  for (size_t n = 0; n < outputs.size(); ++n)
    if (!cuda_ok(cudaMemcpy(outputs[n].data, args[inputs.size() + n], outputs[n].bytes, cudaMemcpyDeviceToHost),
                 "copying an output to the host"))
      return 3;
  for (void* device : args) cudaFree(device);
  cudaFree(workspace);
)CUDA";

std::string dim3_text(const std::array<int64_t, 3>& d) {
  return "dim3(" + std::to_string(d[0]) + ", " + std::to_string(d[1]) + ", " + std::to_string(d[2]) + ")";
}

}  // namespace

ExportedProgram export_cuda(const LoopFunction& function, TensorMap inputs, TensorMap reference,
                            const std::string& arch, const ExportTolerance& tolerance) {
  if (!std::regex_match(arch, std::regex("sm_[0-9]+a?")))
    throw std::invalid_argument("export: '" + arch + "' is not a CUDA architecture (sm_80, sm_90, ...)");
  const std::string name = export_file_stem(function);

  // Host variables: one per buffer of the whole program, the arguments' from args, the rest cut from the workspace.
  std::map<std::string, std::string> variable;
  std::ostringstream buffers;
  int n = 0;
  for (const auto* list : {&function.inputs, &function.outputs}) {
    for (const Buffer& b : *list) {
      variable[b->name] = "b" + std::to_string(n);
      buffers << "  void* b" << n << " = args[" << n << "];  // " << comment_text(b->name) << "\n";
      ++n;
    }
  }
  int64_t workspace_bytes = 0;
  for (const Buffer& b : function.workspace) {
    variable[b->name] = "b" + std::to_string(n);
    buffers << "  void* b" << n << " = static_cast<char*>(workspace) + " << workspace_bytes << ";  // "
            << comment_text(b->name) << "\n";
    const int64_t bytes = std::max<int64_t>(1, b->num_elements() * dtype_bytes(b->dtype));
    workspace_bytes += (bytes + kWorkspaceAlignment - 1) / kWorkspaceAlignment * kWorkspaceAlignment;
    ++n;
  }

  std::ostringstream kernels, launches;
  std::map<std::string, std::string> kernel_of_source;  // canonical text -> kernel name
  const std::vector<LoopFunction> parts = prepare_for_gpu(function);
  int cooperative = 0;
  for (const LoopFunction& k : parts) {
    const std::string kernel_name = name + "_kernel_" + std::to_string(kernel_of_source.size());
    auto [it, is_new] = kernel_of_source.try_emplace(print_cuda_canonical(k), kernel_name);
    if (is_new) kernels << print_cuda_canonical(k, kernel_name) << "\n";
    const CudaLaunchConfig launch = cuda_launch_config(k);
    cooperative += launch.cooperative;
    std::string arguments;
    for (const auto* list : {&k.inputs, &k.outputs, &k.workspace})
      for (const Buffer& b : *list) arguments += (arguments.empty() ? "&" : ", &") + variable.at(b->name);
    launches << "  {  // " << comment_text(k.name) << "\n"
             << "    void* arguments[] = {" << arguments << "};\n"
             << "    const cudaError_t error = ingot_launch((const void*)" << it->second << ", "
             << dim3_text(launch.grid) << ", " << dim3_text(launch.block) << ", "
             << (launch.cooperative ? "true" : "false") << ", arguments, stream);\n"
             << "    if (error != cudaSuccess) return error;\n"
             << "  }\n";
  }

  ExportBackend cuda;
  cuda.language = "CUDA C++";
  cuda.build_needs = "the CUDA toolkit's nvcc";
  cuda.kernel_suffix = ".cu";
  cuda.kernel_file_note = "the kernels and ingot_run, which launches them";
  cuda.build_command = "nvcc -O3 -arch=" + arch + " " + name + ".cu " + name + "_main.cpp -o " + name;
  cuda.main_includes = "\n#include <cuda_runtime.h>\n";
  cuda.main_run = kCudaRun;
  cuda.more_exit_statuses = ", 3 a CUDA call failed (no usable GPU, a failed launch)";
  cuda.readme_run_note = "It runs on the current CUDA device (CUDA_VISIBLE_DEVICES selects it).";

  std::ostringstream source;
  source << "// " << name << ": generated by ingot for " << arch << ": " << parts.size()
         << (parts.size() == 1 ? " kernel" : " kernels") << " (" << kernel_of_source.size() << " distinct, "
         << cooperative << " cooperative), launched in order by ingot_run.\n"
         << "#include \"" << name << ".h\"\n\n"
         << kernels.str() << kLaunchHelpers << "\n"
         << "extern \"C\" int ingot_abi_version(void) { return " << kCudaExportAbiVersion << "; }\n"
         << "extern \"C\" int ingot_num_inputs(void) { return " << function.inputs.size() << "; }\n"
         << "extern \"C\" int ingot_num_outputs(void) { return " << function.outputs.size() << "; }\n"
         << "extern \"C\" int64_t ingot_workspace_bytes(void) { return " << workspace_bytes << "; }\n\n"
         << "extern \"C\" cudaError_t ingot_run(void* const* args, void* workspace, cudaStream_t stream) {\n"
         << buffers.str() << launches.str() << "  return cudaSuccess;\n}\n";
  cuda.kernel_source = source.str();

  std::ostringstream h;
  h << "// " << name << ": a program compiled by ingot for " << arch << ", as standalone CUDA C++.\n"
    << "// Build: " << cuda.build_command << "\n//\n"
    << "// ingot_run(args, workspace, stream) enqueues the program's kernels on stream and returns the first error "
       "(or\n"
    << "// cudaSuccess); wait for the stream before reading the outputs. args = one device pointer per buffer, in "
       "this\n"
    << "// order, each to dense row-major elements; workspace = ingot_workspace_bytes() bytes of device memory "
       "aligned\n"
    << "// to " << kWorkspaceAlignment << " (as cudaMalloc gives; may be null when 0):\n"
    << export_buffer_list(function)
    << "// Kernels with grid barriers are launched cooperatively with as many blocks as the device holds at once.\n"
    << export_declarations("#include <cuda_runtime.h>\n\n",
                           "cudaError_t ingot_run(void* const* args, void* workspace, cudaStream_t stream)");
  cuda.header = h.str();
  return export_program(function, std::move(inputs), std::move(reference), cuda, tolerance);
}

}  // namespace ingot
