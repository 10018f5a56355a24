// Small built-in programs that exercise the compiler end to end: a fused GEMM epilogue, a softmax (reductions
// with elementwise stages between them), and a two-GEMM program whose stages need a barrier between them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/program.h"

namespace ingot {

// D[i, j] = relu(sum_k A[i, k] * B[k, j] + bias[j])
Program matmul_bias_relu(int64_t m, int64_t n, int64_t k);
// Y[i, j] = exp(X[i, j] - max_j X[i, :]) / sum_j exp(X[i, j] - max_j X[i, :]), over rows of X
Program softmax(int64_t rows, int64_t cols);
// Y = relu(X * W1) * W2: two GEMMs, the second reads the whole output of the first
Program two_gemm(int64_t m, int64_t hidden, int64_t k, int64_t n);
// C = A * B
Program matmul(int64_t m, int64_t n, int64_t k);

struct ExampleProgram {
  std::string name;
  std::string description;
  Program (*make_small)();
  Program (*make_default)();
};
// The examples by name: matmul, matmul_bias_relu, softmax, two_gemm.
const std::vector<ExampleProgram>& example_programs();
// Throws std::invalid_argument listing the known names.
const ExampleProgram& find_example(const std::string& name);

}  // namespace ingot
