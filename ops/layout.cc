#include "ops/layout.h"

#include <algorithm>

#include "ops/op_conventions.h"

namespace ingot {

namespace {

using Axes = std::vector<Expr>;

void require_input(const char* op, const std::string& name, const Tensor& x) {
  if (!x) throw_op_error(op, name, "input is a null tensor");
}

// The input indices of a row-major reshape, as simple as the shapes allow: dimensions of size 1 are skipped
// (read at 0), and the remaining dimensions are cut into the shortest runs whose element counts agree on both
// sides, so unchanged dimensions read the output index itself and only merged or split runs linearize with
// div/mod.
std::vector<Expr> reshape_indices(const std::vector<int64_t>& in_shape, const std::vector<int64_t>& out_shape,
                                  const Axes& out_idx) {
  std::vector<Expr> in_idx(in_shape.size(), Expr(int64_t(0)));
  std::vector<size_t> in_dims, out_dims;  // the non-1 dimensions
  for (size_t d = 0; d < in_shape.size(); ++d)
    if (in_shape[d] != 1) in_dims.push_back(d);
  for (size_t d = 0; d < out_shape.size(); ++d)
    if (out_shape[d] != 1) out_dims.push_back(d);
  size_t a = 0, b = 0;
  while (a < in_dims.size() && b < out_dims.size()) {
    // Grow a run on each side until both hold the same number of elements.
    size_t a_end = a + 1, b_end = b + 1;
    int64_t in_count = in_shape[in_dims[a]], out_count = out_shape[out_dims[b]];
    while (in_count != out_count) {
      if (in_count < out_count)
        in_count *= in_shape[in_dims[a_end++]];
      else
        out_count *= out_shape[out_dims[b_end++]];
    }
    if (a_end - a == 1 && b_end - b == 1) {
      in_idx[in_dims[a]] = out_idx[out_dims[b]];
    } else {
      Expr flat;
      for (size_t o = b; o < b_end; ++o)
        flat = flat ? flat * out_shape[out_dims[o]] + out_idx[out_dims[o]] : out_idx[out_dims[o]];
      int64_t stride = in_count;
      for (size_t n = a; n < a_end; ++n) {
        const int64_t dim = in_shape[in_dims[n]];
        stride /= dim;
        Expr index = stride == 1 ? flat : flat / stride;
        // The first dimension of a run needs no modulo: flat < the run's count.
        in_idx[in_dims[n]] = n == a ? index : index % dim;
      }
    }
    a = a_end;
    b = b_end;
  }
  return in_idx;
}

Tensor reshape_to(const char* op, const std::string& name, const Tensor& x, const std::vector<int64_t>& shape) {
  if (shape_elements(shape) != x->num_elements())
    throw_op_error(op, name,
                   "input " + shape_to_string(x->shape) + " has " + std::to_string(x->num_elements()) +
                       " elements but shape " + shape_to_string(shape) + " has " +
                       std::to_string(shape_elements(shape)));
  return compute(name, shape, [&](const Axes& i) { return x(reshape_indices(x->shape, shape, i)); });
}

}  // namespace

Tensor reshape(const std::string& name, const Tensor& x, const std::vector<int64_t>& shape) {
  require_input("reshape", name, x);
  std::vector<int64_t> resolved = shape;
  int inferred = -1;
  int64_t known = 1;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 0) {
      if (d >= x->shape.size())
        throw_op_error("reshape", name,
                       "shape " + shape_to_string(shape) + " copies dimension " + std::to_string(d) +
                           " (0) that input " + shape_to_string(x->shape) + " does not have");
      resolved[d] = x->shape[d];
    } else if (shape[d] == -1) {
      if (inferred >= 0) throw_op_error("reshape", name, "shape " + shape_to_string(shape) + " has more than one -1");
      inferred = int(d);
      continue;
    } else if (shape[d] < -1) {
      throw_op_error("reshape", name, "shape " + shape_to_string(shape) + " has a negative dimension");
    }
    known *= resolved[d];
  }
  if (inferred >= 0) {
    if (known == 0 || x->num_elements() % known != 0)
      throw_op_error("reshape", name,
                     "input " + shape_to_string(x->shape) + " cannot be reshaped to " + shape_to_string(shape));
    resolved[size_t(inferred)] = x->num_elements() / known;
  }
  return reshape_to("reshape", name, x, resolved);
}

Tensor transpose(const std::string& name, const Tensor& x, const std::vector<int64_t>& perm) {
  require_input("transpose", name, x);
  const size_t rank = x->shape.size();
  std::vector<int64_t> p = perm;
  if (p.empty())
    for (size_t d = 0; d < rank; ++d) p.push_back(int64_t(rank - 1 - d));
  std::vector<int64_t> sorted = p;
  std::sort(sorted.begin(), sorted.end());
  bool valid = p.size() == rank;
  for (size_t d = 0; valid && d < rank; ++d) valid = sorted[d] == int64_t(d);
  if (!valid)
    throw_op_error(
        "transpose", name,
        "perm " + shape_to_string(p) + " is not a permutation of the axes of input " + shape_to_string(x->shape));
  std::vector<int64_t> shape(rank);
  for (size_t d = 0; d < rank; ++d) shape[d] = x->shape[size_t(p[d])];
  return compute(name, shape, [&](const Axes& i) {
    std::vector<Expr> idx(rank);
    for (size_t d = 0; d < rank; ++d) idx[size_t(p[d])] = i[d];
    return x(idx);
  });
}

Tensor flatten(const std::string& name, const Tensor& x, int64_t axis) {
  require_input("flatten", name, x);
  const int64_t rank = int64_t(x->shape.size());
  if (axis < -rank || axis > rank)
    throw_op_error("flatten", name,
                   "axis " + std::to_string(axis) + " is out of range for input " + shape_to_string(x->shape) +
                       " (valid: [" + std::to_string(-rank) + ", " + std::to_string(rank) + "])");
  if (axis < 0) axis += rank;
  const std::vector<int64_t> outer(x->shape.begin(), x->shape.begin() + axis);
  const std::vector<int64_t> inner(x->shape.begin() + axis, x->shape.end());
  return reshape_to("flatten", name, x, {shape_elements(outer), shape_elements(inner)});
}

Tensor squeeze(const std::string& name, const Tensor& x, const std::vector<int64_t>& axes) {
  require_input("squeeze", name, x);
  const int64_t rank = int64_t(x->shape.size());
  std::vector<bool> drop(size_t(rank), false);
  for (int64_t a : axes) {
    int64_t d = normalize_axis("squeeze", name, a, rank);
    if (x->shape[size_t(d)] != 1)
      throw_op_error("squeeze", name,
                     "axis " + std::to_string(a) + " of input " + shape_to_string(x->shape) + " has size " +
                         std::to_string(x->shape[size_t(d)]) + ", not 1");
    drop[size_t(d)] = true;
  }
  std::vector<int64_t> shape;
  for (int64_t d = 0; d < rank; ++d)
    if (!(axes.empty() ? x->shape[size_t(d)] == 1 : drop[size_t(d)])) shape.push_back(x->shape[size_t(d)]);
  return reshape_to("squeeze", name, x, shape);
}

Tensor unsqueeze(const std::string& name, const Tensor& x, const std::vector<int64_t>& axes) {
  require_input("unsqueeze", name, x);
  const int64_t out_rank = int64_t(x->shape.size() + axes.size());
  std::vector<bool> inserted(size_t(out_rank), false);
  for (int64_t a : axes) {
    int64_t d = normalize_axis("unsqueeze", name, a, out_rank);
    if (inserted[size_t(d)]) throw_op_error("unsqueeze", name, "axis " + std::to_string(a) + " is listed twice");
    inserted[size_t(d)] = true;
  }
  std::vector<int64_t> shape;
  size_t next = 0;
  for (int64_t d = 0; d < out_rank; ++d) shape.push_back(inserted[size_t(d)] ? 1 : x->shape[next++]);
  return reshape_to("unsqueeze", name, x, shape);
}

Tensor expand(const std::string& name, const Tensor& x, const std::vector<int64_t>& shape) {
  require_input("expand", name, x);
  std::vector<int64_t> out = broadcast_shapes("expand", name, x->shape, shape);
  return compute(name, out, [&](const Axes& i) { return x(broadcast_indices(x->shape, i)); });
}

}  // namespace ingot
