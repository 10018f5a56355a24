#include "ops/reduce.h"

#include "ops/op_conventions.h"

namespace ingot {

namespace {

using Axes = std::vector<Expr>;

// One reduction TE over the given axes; scale (if not 1) multiplies the source.
Tensor reduce_impl(const char* op, ReduceOp kind, const std::string& name, const Tensor& x,
                   const std::vector<int64_t>& axes, bool keepdims, bool mean) {
  if (!x) throw_op_error(op, name, "input is a null tensor");
  const int64_t rank = int64_t(x->shape.size());
  if (rank == 0) throw_op_error(op, name, "input is a scalar; there is nothing to reduce");
  std::vector<bool> reduced(size_t(rank), axes.empty());
  for (int64_t a : axes) {
    const int64_t d = normalize_axis(op, name, a, rank);
    if (reduced[size_t(d)]) throw_op_error(op, name, "axis " + std::to_string(a) + " is listed twice");
    reduced[size_t(d)] = true;
  }
  if (mean && !is_float(x->dtype)) throw_op_error(op, name, "input must be floating-point");
  std::vector<int64_t> shape;
  std::vector<IterVar> ks;
  int64_t count = 1;
  for (int64_t d = 0; d < rank; ++d) {
    if (reduced[size_t(d)]) {
      ks.push_back(reduce_axis(x->shape[size_t(d)], "k" + std::to_string(ks.size())));
      count *= x->shape[size_t(d)];
      if (keepdims) shape.push_back(1);
    } else {
      shape.push_back(x->shape[size_t(d)]);
    }
  }
  return compute(name, shape, [&](const Axes& i) {
    std::vector<Expr> idx;
    size_t next = 0, k = 0;
    for (int64_t d = 0; d < rank; ++d) {
      if (reduced[size_t(d)]) {
        idx.push_back(ks[k++].var);
        if (keepdims) ++next;
      } else {
        idx.push_back(i[next++]);
      }
    }
    Expr source = x(idx);
    if (mean) source = source * (1.0 / double(count));
    return reduce(kind, source, ks);
  });
}

}  // namespace

Tensor reduce_sum(const std::string& name, const Tensor& x, const std::vector<int64_t>& axes, bool keepdims) {
  return reduce_impl("reduce_sum", ReduceOp::kSum, name, x, axes, keepdims, false);
}

Tensor reduce_mean(const std::string& name, const Tensor& x, const std::vector<int64_t>& axes, bool keepdims) {
  return reduce_impl("reduce_mean", ReduceOp::kSum, name, x, axes, keepdims, true);
}

Tensor reduce_max(const std::string& name, const Tensor& x, const std::vector<int64_t>& axes, bool keepdims) {
  return reduce_impl("reduce_max", ReduceOp::kMax, name, x, axes, keepdims, false);
}

Tensor reduce_min(const std::string& name, const Tensor& x, const std::vector<int64_t>& axes, bool keepdims) {
  return reduce_impl("reduce_min", ReduceOp::kMin, name, x, axes, keepdims, false);
}

}  // namespace ingot
