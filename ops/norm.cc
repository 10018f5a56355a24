#include "ops/norm.h"

#include <vector>

#include "ops/op_conventions.h"

namespace ingot {

namespace {

using Axes = std::vector<Expr>;

void require_param(const char* op, const std::string& name, const Tensor& x, const Tensor& p, const char* operand,
                   const std::vector<int64_t>& shape) {
  if (!p) throw_op_error(op, name, std::string(operand) + " is a null tensor");
  if (p->shape != shape)
    throw_op_error(op, name,
                   std::string(operand) + " '" + p->name + "' " + shape_to_string(p->shape) + " must be " +
                       shape_to_string(shape) + " for input " + shape_to_string(x->shape));
  if (p->dtype != x->dtype)
    throw_op_error(op, name,
                   std::string(operand) + " '" + p->name + "' is " + dtype_name(p->dtype) + " but the input is " +
                       dtype_name(x->dtype));
}

}  // namespace

Tensor batch_norm(const std::string& name, const Tensor& x, const Tensor& gamma, const Tensor& beta, const Tensor& mean,
                  const Tensor& var, double epsilon) {
  const char* op = "batch_norm";
  if (!x) throw_op_error(op, name, "input is a null tensor");
  if (x->shape.size() < 2)
    throw_op_error(op, name, "input " + shape_to_string(x->shape) + " must have rank >= 2 (N, C, ...)");
  if (!is_float(x->dtype)) throw_op_error(op, name, "input must be floating-point");
  const std::vector<int64_t> channels{x->shape[1]};
  require_param(op, name, x, gamma, "gamma", channels);
  require_param(op, name, x, beta, "beta", channels);
  require_param(op, name, x, mean, "mean", channels);
  require_param(op, name, x, var, "var", channels);
  return compute(name, x->shape, [&](const Axes& i) {
    const Expr& c = i[1];
    return (x(i) - mean(c)) * (gamma(c) * math::rsqrt(var(c) + epsilon)) + beta(c);
  });
}

Tensor layer_norm(const std::string& name, const Tensor& x, const Tensor& gamma, const Tensor& beta, int64_t axis,
                  double epsilon) {
  const char* op = "layer_norm";
  if (!x) throw_op_error(op, name, "input is a null tensor");
  if (!is_float(x->dtype)) throw_op_error(op, name, "input must be floating-point");
  const int64_t rank = int64_t(x->shape.size());
  const int64_t first = normalize_axis(op, name, axis, rank);
  const std::vector<int64_t> outer(x->shape.begin(), x->shape.begin() + first);
  const std::vector<int64_t> normalized(x->shape.begin() + first, x->shape.end());
  if (gamma) require_param(op, name, x, gamma, "gamma", normalized);
  if (beta) require_param(op, name, x, beta, "beta", normalized);
  const double inv_count = 1.0 / double(shape_elements(normalized));

  std::vector<IterVar> ks;
  for (size_t d = 0; d < normalized.size(); ++d) ks.push_back(reduce_axis(normalized[d], "k" + std::to_string(d)));
  // x at the statistics' indices followed by the reduce axes.
  auto x_over_k = [&](const Axes& i) {
    std::vector<Expr> idx = i;
    for (const IterVar& k : ks) idx.push_back(k.var);
    return x(idx);
  };
  Tensor mean = compute(name + "_mean", outer, [&](const Axes& i) { return sum(x_over_k(i) * inv_count, ks); });
  Tensor var = compute(name + "_var", outer, [&](const Axes& i) {
    Expr centered = x_over_k(i) - mean(i);
    return sum(centered * centered * inv_count, ks);
  });
  return compute(name, x->shape, [&](const Axes& i) {
    std::vector<Expr> o(i.begin(), i.begin() + first), inner(i.begin() + first, i.end());
    Expr y = (x(i) - mean(o)) * math::rsqrt(var(o) + epsilon);
    if (gamma) y = y * gamma(inner);
    if (beta) y = y + beta(inner);
    return y;
  });
}

}  // namespace ingot
