#include "ops/softmax.h"

#include <set>

#include "ops/op_conventions.h"

namespace ingot {

namespace {

using Axes = std::vector<Expr>;

// The reduced axes of a softmax and the shape of its statistics (reduced axes kept as size 1).
struct SoftmaxAxes {
  std::vector<bool> reduced;  // per input axis
  std::vector<int64_t> stats_shape;
  std::vector<IterVar> ks;  // one reduce axis per reduced input axis, in axis order
};

SoftmaxAxes softmax_axes(const char* op, const std::string& name, const Tensor& x, const std::vector<int64_t>& axes) {
  if (!x) throw_op_error(op, name, "input is a null tensor");
  if (!is_float(x->dtype)) throw_op_error(op, name, "input must be floating-point");
  if (axes.empty()) throw_op_error(op, name, "needs at least one axis");
  const int64_t rank = int64_t(x->shape.size());
  SoftmaxAxes s;
  s.reduced.assign(size_t(rank), false);
  for (int64_t a : axes) {
    int64_t d = normalize_axis(op, name, a, rank);
    if (s.reduced[size_t(d)]) throw_op_error(op, name, "axis " + std::to_string(a) + " is listed twice");
    s.reduced[size_t(d)] = true;
  }
  s.stats_shape = x->shape;
  for (int64_t d = 0; d < rank; ++d)
    if (s.reduced[size_t(d)]) {
      s.stats_shape[size_t(d)] = 1;
      s.ks.push_back(reduce_axis(x->shape[size_t(d)], "k" + std::to_string(s.ks.size())));
    }
  return s;
}

// Indices of an input-shaped tensor with the reduced axes replaced by the reduce variables.
std::vector<Expr> over_reduced(const SoftmaxAxes& s, const Axes& i) {
  std::vector<Expr> idx = i;
  size_t k = 0;
  for (size_t d = 0; d < idx.size(); ++d)
    if (s.reduced[d]) idx[d] = s.ks[k++].var;
  return idx;
}

// Indices of a statistics tensor (reduced axes are 0) for an input-shaped position.
std::vector<Expr> stats_index(const SoftmaxAxes& s, const Axes& i) {
  std::vector<Expr> idx = i;
  for (size_t d = 0; d < idx.size(); ++d)
    if (s.reduced[d]) idx[d] = int64_t(0);
  return idx;
}

Tensor softmax_impl(const char* op, const std::string& name, const Tensor& x, const std::vector<int64_t>& axes) {
  SoftmaxAxes s = softmax_axes(op, name, x, axes);
  Tensor max =
      compute(name + "_max", s.stats_shape, [&](const Axes& i) { return max_reduce(x(over_reduced(s, i)), s.ks); });
  Tensor ex = compute(name + "_exp", x->shape, [&](const Axes& i) { return math::exp(x(i) - max(stats_index(s, i))); });
  Tensor total =
      compute(name + "_sum", s.stats_shape, [&](const Axes& i) { return sum(ex(over_reduced(s, i)), s.ks); });
  return compute(name, x->shape, [&](const Axes& i) { return ex(i) / total(stats_index(s, i)); });
}

}  // namespace

Tensor softmax(const std::string& name, const Tensor& x, int64_t axis) {
  return softmax_impl("softmax", name, x, {axis});
}

Tensor softmax_over_axes(const std::string& name, const Tensor& x, const std::vector<int64_t>& axes) {
  return softmax_impl("softmax_over_axes", name, x, axes);
}

Tensor log_softmax(const std::string& name, const Tensor& x, int64_t axis) {
  SoftmaxAxes s = softmax_axes("log_softmax", name, x, {axis});
  Tensor max =
      compute(name + "_max", s.stats_shape, [&](const Axes& i) { return max_reduce(x(over_reduced(s, i)), s.ks); });
  Tensor total = compute(name + "_sum", s.stats_shape, [&](const Axes& i) {
    return sum(math::exp(x(over_reduced(s, i)) - max(stats_index(s, i))), s.ks);
  });
  return compute(name, x->shape, [&](const Axes& i) {
    std::vector<Expr> si = stats_index(s, i);
    return x(i) - max(si) - math::log(total(si));
  });
}

}  // namespace ingot
