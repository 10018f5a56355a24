// The reference interpreter: evaluates a TE program directly on host tensors, with no schedule. It is the
// correctness oracle for every generated program, so it favours clarity of semantics; it evaluates each
// compute a row of its innermost axis at a time, the rows of a large compute on every core, so that paper-size models
// run in seconds.
#pragma once

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>

#include "ir/host_tensor.h"
#include "ir/program.h"

namespace ingot {

struct InterpretOptions {
  // f32 sums accumulated in double and rounded once, when stored: each reduction's result is then (nearly) the
  // correctly rounded sum of its terms. Not what generated code computes; a second opinion that shows how far f32
  // rounding alone moves a program's outputs (interp/rounding_noise.h).
  bool wide_sums = false;
  // Threads that evaluate a large compute's rows at once (0: the cores this process may run on). The results are the
  // same on any number: each element is computed by one thread, in the same order.
  int threads = 0;
  // Return the program's outputs only, each intermediate freed once its last reader is evaluated (less memory).
  bool outputs_only = false;
};

// Evaluates every compute tensor of the program. inputs maps each placeholder's name to a tensor of its
// shape and dtype; a missing or mis-shaped input, or a read outside a tensor's bounds, throws
// std::invalid_argument naming the tensor. Returns all compute tensors (outputs and intermediates) by name.
// Throws MemoryNeedError, before allocating anything, for a program whose tensors do not fit this machine's memory.
TensorMap interpret(const Program& program, const TensorMap& inputs, InterpretOptions options = {});

// A program whose tensors (every placeholder and compute, as the interpreter holds them) need more bytes than this
// machine's physical memory: "program 'P' needs 372.5 GB for its tensors (the largest, 'x' f32[100000, 100000]:
// 40.0 GB), this machine has 23.4 GB".
class MemoryNeedError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
// The bytes of every tensor of the program (as a double: absurd shapes overflow 64 bits).
double program_tensor_bytes(const Program& program);
// Throws MemoryNeedError when program_tensor_bytes exceeds `machine_bytes` (0: this machine's physical memory).
void check_program_fits_memory(const Program& program, double machine_bytes = 0);

// Value ranges of placeholders by name; a placeholder not named takes its dtype's default range.
using InputRanges = std::map<std::string, ValueRange>;

// A random tensor for each placeholder: placeholder number n (in Program::placeholders() order) gets
// random_tensor(dtype, shape, seed + n, its range). Throws MemoryNeedError first, as interpret does.
TensorMap random_inputs(const Program& program, uint64_t seed, const InputRanges& ranges = {});
// The range random_inputs uses for a placeholder.
ValueRange input_range(const Tensor& placeholder, const InputRanges& ranges);

}  // namespace ingot
