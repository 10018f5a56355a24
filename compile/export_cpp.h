// Export of a built program as standalone C++: the kernel source (what the CPU recipe of codegen/pipeline.h
// prints), a header that documents its C entry point and buffers, and a small example main that fills the inputs
// exactly as ingot's random_inputs does, runs the kernel and writes each output to <name>.bin. The three files
// compile alone with one plain command (see ExportedProgram::build_command).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "interp/interpreter.h"
#include "ir/stmt.h"

namespace ingot {

struct ExportedProgram {
  std::string name;           // C identifier used for the file names
  std::string kernel_source;  // <name>.cpp
  std::string header;         // <name>.h
  std::string example_main;   // <name>_main.cpp
  std::string
      build_command;  // g++ -O3 -march=native -fopenmp <name>.cpp <name>_main.cpp -o <name>, + vector_math_flags()
};

// input_seed: the seed the example main uses for its inputs (input n gets seed + n, like random_inputs).
// input_ranges: the value range of each input the example main fills, as random_inputs takes them.
ExportedProgram export_cpp(const LoopFunction& function, uint64_t input_seed = 1, const InputRanges& input_ranges = {});

// Writes the three files and a README into dir (created if missing); returns the paths written. Throws
// std::runtime_error naming a file that cannot be written.
std::vector<std::string> write_exported_program(const ExportedProgram& exported, const std::string& dir);

}  // namespace ingot
