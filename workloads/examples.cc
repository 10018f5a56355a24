#include "workloads/examples.h"

#include <stdexcept>

namespace ingot {

Program matmul(int64_t m, int64_t n, int64_t k) {
  Tensor A = placeholder("A", {m, k}), B = placeholder("B", {k, n});
  IterVar r = reduce_axis(k, "k");
  Tensor C = compute("C", {m, n}, [&](const std::vector<Expr>& i) { return sum(A(i[0], r.var) * B(r.var, i[1]), {r}); });
  return Program({C}, "matmul");
}

Program matmul_bias_relu(int64_t m, int64_t n, int64_t k) {
  Tensor A = placeholder("A", {m, k}), B = placeholder("B", {k, n}), bias = placeholder("bias", {n});
  IterVar r = reduce_axis(k, "k");
  Tensor C = compute("C", {m, n}, [&](const std::vector<Expr>& i) { return sum(A(i[0], r.var) * B(r.var, i[1]), {r}); });
  Tensor D = compute("D", {m, n}, [&](const std::vector<Expr>& i) { return maximum(C(i[0], i[1]) + bias(i[1]), 0.0); });
  return Program({D}, "matmul_bias_relu");
}

Program softmax(int64_t rows, int64_t cols) {
  Tensor X = placeholder("X", {rows, cols});
  IterVar c1 = reduce_axis(cols, "k");
  Tensor row_max = compute("row_max", {rows}, [&](const std::vector<Expr>& i) { return max_reduce(X(i[0], c1.var), {c1}); });
  Tensor e = compute("e", {rows, cols}, [&](const std::vector<Expr>& i) { return math::exp(X(i[0], i[1]) - row_max(i[0])); });
  IterVar c2 = reduce_axis(cols, "k");
  Tensor row_sum = compute("row_sum", {rows}, [&](const std::vector<Expr>& i) { return sum(e(i[0], c2.var), {c2}); });
  Tensor Y = compute("Y", {rows, cols}, [&](const std::vector<Expr>& i) { return e(i[0], i[1]) / row_sum(i[0]); });
  return Program({Y}, "softmax");
}

Program two_gemm(int64_t m, int64_t hidden, int64_t k, int64_t n) {
  Tensor X = placeholder("X", {m, k}), W1 = placeholder("W1", {k, hidden}), W2 = placeholder("W2", {hidden, n});
  IterVar r1 = reduce_axis(k, "k");
  Tensor H = compute("H", {m, hidden}, [&](const std::vector<Expr>& i) { return sum(X(i[0], r1.var) * W1(r1.var, i[1]), {r1}); });
  Tensor R = compute("R", {m, hidden}, [&](const std::vector<Expr>& i) { return maximum(H(i[0], i[1]), 0.0); });
  IterVar r2 = reduce_axis(hidden, "k");
  Tensor Y = compute("Y", {m, n}, [&](const std::vector<Expr>& i) { return sum(R(i[0], r2.var) * W2(r2.var, i[1]), {r2}); });
  return Program({Y}, "two_gemm");
}

const std::vector<ExampleProgram>& example_programs() {
  static const std::vector<ExampleProgram> examples = {
      {"matmul", "C = A * B", [] { return matmul(24, 20, 16); }, [] { return matmul(512, 512, 512); }},
      {"matmul_bias_relu", "D = relu(A * B + bias)", [] { return matmul_bias_relu(24, 20, 16); },
       [] { return matmul_bias_relu(512, 512, 512); }},
      {"softmax", "row-wise softmax", [] { return softmax(6, 20); }, [] { return softmax(1024, 1024); }},
      {"two_gemm", "Y = relu(X * W1) * W2", [] { return two_gemm(8, 24, 16, 12); },
       [] { return two_gemm(128, 1024, 512, 512); }},
  };
  return examples;
}

const ExampleProgram& find_example(const std::string& name) {
  std::string known;
  for (const ExampleProgram& e : example_programs()) {
    if (e.name == name) return e;
    known += (known.empty() ? "" : ", ") + e.name;
  }
  throw std::invalid_argument("unknown example program '" + name + "' (known: " + known + ")");
}

}  // namespace ingot
