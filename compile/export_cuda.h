// Export of a lowered program as standalone CUDA C++ that checks itself on a machine with an NVIDIA GPU: every kernel
// of the program (one cooperative kernel where the partition is `global`) and the host code that launches them in
// order, a header, and the main of export_cpp.h that copies the inputs to the device, runs, copies the outputs back
// and compares them with the reference. Text generation only: it needs no CUDA toolkit or GPU here.
#pragma once

#include <string>

#include "compile/export_cpp.h"

namespace ingot {

// The value of ingot_abi_version() in a CUDA export: ingot_run(args, workspace, stream) with device pointers.
constexpr int kCudaExportAbiVersion = 1;

// The export of `function` (lowered with a GPU schedule: blocks and threads bound) for `arch` ("sm_80", "sm_90"):
// <name>.cu holds each distinct kernel once (kernels that differ only in buffer names share one, as cuda_run's
// binaries do) and `ingot_run`, which launches the kernels on a stream, each cooperative kernel's grid fitted to what
// the device holds at once (fit_grid's rule, codegen/cuda_printer.h). Built by
// `nvcc -O3 -arch=<arch> <name>.cu <name>_main.cpp -o <name>`. Inputs and reference as export_cpp; throws
// std::invalid_argument as export_cpp does, for an arch that is not sm_NN, and what the CUDA printer throws (bf16
// buffers, for one).
ExportedProgram export_cuda(const LoopFunction& function, TensorMap inputs, TensorMap reference,
                            const std::string& arch, const ExportTolerance& tolerance = {});

}  // namespace ingot
