// The 2-layer MLP workload: Y = gelu(X * W1 + b1) * W2 + b2 with the exact (erf) GELU. Use it to build the
// MLP program at any size; the registry (workloads/registry.h) exposes it to configs as "mlp".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "interp/interpreter.h"
#include "ir/program.h"

namespace ingot {

struct MlpSizes {
  int64_t batch = 128;    // rows of X and Y
  int64_t in = 512;       // features of X
  int64_t hidden = 1024;  // width of the GELU layer
  int64_t out = 512;      // features of Y
  // A size small enough for the interpreter in unit tests.
  static MlpSizes small() { return MlpSizes{4, 16, 32, 8}; }
};

// Placeholders X[batch, in], W1[in, hidden], b1[hidden], W2[hidden, out], b2[out]; computes, in order:
//   mm1 = X * W1, z1 = mm1 + b1, a1 = z1 * 0.5 * (1 + erf(z1 / sqrt(2))), mm2 = a1 * W2, Y = mm2 + b2.
// The bias adds are computes of their own so that GELU reads its argument once (the FLOP count stays exact
// and no compute repeats work); the tuner inlines them where that pays. Program name "mlp"; output Y.
// Throws std::invalid_argument when a size is not positive.
Program mlp(const MlpSizes& sizes = {});

// The weight placeholders (what parameter counts add up): W1, b1, W2, b2.
std::vector<std::string> mlp_weight_names();
// Weight ranges as PyTorch's nn.Linear initialises them: each layer's weight and bias uniform in
// +-1/sqrt(fan_in) (fan_in = in for W1, b1 and hidden for W2, b2); X keeps [-1, 1).
InputRanges mlp_input_ranges(const MlpSizes& sizes);

}  // namespace ingot
