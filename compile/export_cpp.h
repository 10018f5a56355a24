// Export of a built program as standalone C++ that checks itself on another machine: the kernel, its header, a main
// that reads the inputs from files, runs the kernel and compares every output with a reference file, the data files
// and a README. The sources need nothing of ingot and build with one plain command (ExportedProgram::build_command).
#pragma once

#include <string>
#include <vector>

#include "compile/cpp_compiler.h"
#include "ir/host_tensor.h"
#include "ir/stmt.h"

namespace ingot {

struct ExportedProgram {
  std::string name;           // C identifier used for the file names
  std::string kernel_file;    // <name>.cpp (export_cuda: <name>.cu)
  std::string kernel_source;  // its text
  std::string header;         // <name>.h
  std::string main_file;      // <name>_main.cpp
  std::string main_source;    // its text: ./<name> [DATA_DIR] [--repeat N], see the README
  std::string readme;         // README.txt
  double rtol = 0, atol = 0;  // the main's check: ExportTolerance's, at least kBf16Tolerance with bf16 inputs
  std::map<std::string, double> rounding_allowance;  // by output: kRoundingNoiseFactor x its noise, where it has one
  std::string build_command;  // g++ -O3 <isa flags> -fno-math-errno -fopenmp <name>.cpp <name>_main.cpp -o <name>, +
                              // vector_math_flags() (export_cuda: nvcc -O3 -arch=<arch> ...)
  // A tensor's file under inputs/, reference/ and outputs/ is <tensor>.bin, with any character of the name but
  // letters, digits, '_', '-' and '.' replaced by '_'.
  TensorMap inputs;     // by input buffer name: written to inputs/
  TensorMap reference;  // by output buffer name: written to reference/
};

// The tolerance the exported main checks its outputs with, as ingot verifies (measure.rtol and measure.atol: per
// element |actual - expected| <= atol * max(1, max |expected|) + rtol * |expected| + kRoundingNoiseFactor * noise).
// `ingot export` passes the one the exported program was verified with when it was measured, so that the copy accepts
// what the tuner accepted.
struct ExportTolerance {
  double rtol = kDefaultRtol;
  double atol = kDefaultAtol;
  // Per output: besides, kRoundingNoiseFactor times its f32 rounding noise (interp/rounding_noise.h), as the runners
  // allow.
  RoundingNoise rounding_noise;
};

// inputs: a tensor for each input buffer of the function, the values the program is checked on; reference: what
// each output buffer must hold after a run on them (ingot export passes its interpreter's). Tensors that are not
// buffers of the function (the interpreter's intermediates) are dropped. Throws std::invalid_argument naming a
// buffer whose tensor is missing or has another dtype or shape, or whose dtype the export cannot hold (f16).
// isa_flags: the ISA part of the flags the program was measured with (compile/cpp_compiler.h: default_isa_flags(), or
// cpu_isa_compiler_flags of a named ISA), so that the exported program is the measured one.
ExportedProgram export_cpp(const LoopFunction& function, TensorMap inputs, TensorMap reference,
                           const std::string& isa_flags = default_isa_flags(), const ExportTolerance& tolerance = {});

// What a backend's export adds to the shared parts (data, tensor tables, checks, README): for export_cuda.
struct ExportBackend {
  std::string language;            // "C++", "CUDA C++": for the README
  std::string build_needs;         // what the build command needs, for the README
  std::string kernel_suffix;       // ".cpp", ".cu"
  std::string kernel_file_note;    // the README's line on the kernel file
  std::string kernel_source;       // the kernel file's text
  std::string header;              // <name>.h
  std::string build_command;       // one plain command, run in the export's folder
  std::string main_includes;       // lines the main includes before <name>.h
  std::string main_run;            // the main's statements from the read inputs to the outputs on the host, timed
                                   // into `milliseconds`; may return an exit status
  std::string more_exit_statuses;  // e.g. ", 3 a CUDA call failed": appended to the usage's list
  std::string readme_run_note;     // a sentence on how the run is set up
};
// The file stem of f's export (f's name as a C identifier) and the lines that list its buffers for a header.
std::string export_file_stem(const LoopFunction& f);
std::string export_buffer_list(const LoopFunction& f);
// A header's code: #pragma once, <cstdint>, `includes`, the entry points both exports define and `run_declaration`.
std::string export_declarations(const std::string& includes, const std::string& run_declaration);
// The export of f with a backend's kernel and run; checks and throws as export_cpp.
ExportedProgram export_program(const LoopFunction& f, TensorMap inputs, TensorMap reference,
                               const ExportBackend& backend, const ExportTolerance& tolerance);

// Writes the sources, README.txt and the data files (inputs/ and reference/, raw little-endian elements in row-major
// order) into dir, creating the folders that are missing; returns the paths written, the four text files first.
// Throws std::runtime_error naming a file that cannot be written.
std::vector<std::string> write_exported_program(const ExportedProgram& exported, const std::string& dir);

}  // namespace ingot
