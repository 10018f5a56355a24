// Tensors of the TE language: a placeholder (an input or a weight) or a compute, whose element at the
// indices of its spatial axes is given by an expression (a reduction at the top, if any).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "ir/expr.h"

namespace ingot {

struct TensorNode {
  std::string name;
  std::vector<int64_t> shape;
  DType dtype;
  std::vector<IterVar> axes;  // compute only: one spatial axis per dimension, extent = shape[d]
  Expr body;                  // compute only; null for a placeholder

  bool is_placeholder() const { return !body; }
  const ReduceNode* reduction() const { return body ? body.as<ReduceNode>() : nullptr; }
  // Tensors read by the body, in first-read order, without repeats.
  std::vector<Tensor> inputs() const;
  int64_t num_elements() const;
};

Tensor placeholder(std::string name, std::vector<int64_t> shape, DType dtype = DType::kFloat32);

// compute("C", {M, N}, [&](const std::vector<Expr>& i) { return sum(A(i[0], k.var) * B(k.var, i[1]), {k}); })
// Axis names default to i, j, l, m, n, p, q ... (k is left for reductions); they name loops in schedules.
// Throws std::invalid_argument when a reduction is not the whole body, names clash, or shapes are bad.
Tensor compute(std::string name, std::vector<int64_t> shape, const std::function<Expr(const std::vector<Expr>&)>& fn,
               std::vector<std::string> axis_names = {});

// Default name of spatial axis d.
std::string default_axis_name(size_t d, size_t rank);

}  // namespace ingot
