#include "ops/elementwise.h"

#include <cmath>

#include "ops/op_conventions.h"

namespace ingot {

namespace {

using Axes = std::vector<Expr>;

void require_tensor(const char* op, const std::string& name, const Tensor& t, const char* operand) {
  if (!t) throw_op_error(op, name, std::string(operand) + " is a null tensor");
}

void require_float(const char* op, const std::string& name, const Tensor& t, const char* operand) {
  require_tensor(op, name, t, operand);
  if (!is_float(t->dtype))
    throw_op_error(op, name,
                   std::string(operand) + " '" + t->name + "' must be floating-point, not " + dtype_name(t->dtype));
}

// One-TE unary op that needs a float input (math functions are defined on floats only).
Tensor float_unary(const char* op, const std::string& name, const Tensor& x,
                   const std::function<Expr(const Expr&)>& fn) {
  require_float(op, name, x, "input");
  return unary_map(name, x, fn);
}

Tensor broadcast_op(const char* op, const std::string& name, const Tensor& a, const Tensor& b,
                    const std::function<Expr(const Expr&, const Expr&)>& fn) {
  require_tensor(op, name, a, "first operand");
  require_tensor(op, name, b, "second operand");
  if (a->dtype != b->dtype)
    throw_op_error(op, name,
                   std::string("operands '") + a->name + "' (" + dtype_name(a->dtype) + ") and '" + b->name + "' (" +
                       dtype_name(b->dtype) + ") have different dtypes");
  std::vector<int64_t> shape = broadcast_shapes(op, name, a->shape, b->shape);
  return compute(name, shape, [&](const Axes& i) {
    return fn(a(broadcast_indices(a->shape, i)), b(broadcast_indices(b->shape, i)));
  });
}

}  // namespace

Tensor unary_map(const std::string& name, const Tensor& x, const std::function<Expr(const Expr&)>& fn) {
  require_tensor("unary_map", name, x, "input");
  return compute(name, x->shape, [&](const Axes& i) { return fn(x(i)); });
}

Tensor relu(const std::string& name, const Tensor& x) {
  require_tensor("relu", name, x, "input");
  const Expr zero = is_float(x->dtype) ? float_imm(0.0, x->dtype) : int_imm(0, x->dtype);
  return unary_map(name, x, [&](const Expr& v) { return maximum(v, zero); });
}

Tensor leaky_relu(const std::string& name, const Tensor& x, double alpha) {
  return float_unary("leaky_relu", name, x, [&](const Expr& v) { return select(ge(v, 0.0), v, v * alpha); });
}

Tensor sigmoid(const std::string& name, const Tensor& x) {
  return float_unary("sigmoid", name, x, [](const Expr& v) { return math::sigmoid(v); });
}

Tensor tanh(const std::string& name, const Tensor& x) {
  return float_unary("tanh", name, x, [](const Expr& v) { return math::tanh(v); });
}

Tensor gelu(const std::string& name, const Tensor& x) {
  const double sqrt2 = std::sqrt(2.0);
  return float_unary("gelu", name, x, [&](const Expr& v) { return v * 0.5 * (1.0 + math::erf(v / sqrt2)); });
}

Tensor gelu_tanh(const std::string& name, const Tensor& x) {
  const double c = std::sqrt(2.0 / M_PI);
  return float_unary("gelu_tanh", name, x,
                     [&](const Expr& v) { return v * 0.5 * (1.0 + math::tanh(c * (v + 0.044715 * v * v * v))); });
}

Tensor silu(const std::string& name, const Tensor& x) {
  return float_unary("silu", name, x, [](const Expr& v) { return v * math::sigmoid(v); });
}

Tensor hard_sigmoid(const std::string& name, const Tensor& x, double alpha, double beta) {
  return float_unary("hard_sigmoid", name, x,
                     [&](const Expr& v) { return maximum(minimum(v * alpha + beta, 1.0), 0.0); });
}

Tensor hard_swish(const std::string& name, const Tensor& x) {
  return float_unary("hard_swish", name, x,
                     [](const Expr& v) { return v * maximum(minimum(v * (1.0 / 6.0) + 0.5, 1.0), 0.0); });
}

Tensor exp(const std::string& name, const Tensor& x) {
  return float_unary("exp", name, x, [](const Expr& v) { return math::exp(v); });
}

Tensor log(const std::string& name, const Tensor& x) {
  return float_unary("log", name, x, [](const Expr& v) { return math::log(v); });
}

Tensor sqrt(const std::string& name, const Tensor& x) {
  return float_unary("sqrt", name, x, [](const Expr& v) { return math::sqrt(v); });
}

Tensor rsqrt(const std::string& name, const Tensor& x) {
  return float_unary("rsqrt", name, x, [](const Expr& v) { return math::rsqrt(v); });
}

Tensor erf(const std::string& name, const Tensor& x) {
  return float_unary("erf", name, x, [](const Expr& v) { return math::erf(v); });
}

Tensor abs(const std::string& name, const Tensor& x) {
  require_tensor("abs", name, x, "input");
  return unary_map(name, x, [](const Expr& v) { return math::abs(v); });
}

Tensor neg(const std::string& name, const Tensor& x) {
  require_tensor("neg", name, x, "input");
  return unary_map(name, x, [](const Expr& v) { return -v; });
}

Tensor reciprocal(const std::string& name, const Tensor& x) {
  return float_unary("reciprocal", name, x, [](const Expr& v) { return 1.0 / v; });
}

Tensor pow_scalar(const std::string& name, const Tensor& x, double exponent) {
  return float_unary("pow_scalar", name, x, [&](const Expr& v) {
    if (exponent == 1.0) return v;
    if (exponent == 2.0) return v * v;
    if (exponent == 0.5) return math::sqrt(v);
    return math::pow(v, exponent);
  });
}

Tensor clip(const std::string& name, const Tensor& x, double lo, double hi) {
  require_tensor("clip", name, x, "input");
  if (lo > hi)
    throw_op_error("clip", name, "lower bound " + format_double(lo) + " exceeds upper bound " + format_double(hi));
  const bool integer = is_int(x->dtype);
  auto bound = [&](double v) { return integer ? int_imm(int64_t(v), x->dtype) : float_imm(v, x->dtype); };
  return unary_map(name, x, [&](const Expr& v) { return minimum(maximum(v, bound(lo)), bound(hi)); });
}

Tensor cast_to(const std::string& name, const Tensor& x, DType dtype) {
  require_tensor("cast_to", name, x, "input");
  return unary_map(name, x, [&](const Expr& v) { return cast(dtype, v); });
}

Tensor broadcast_map(const std::string& name, const Tensor& a, const Tensor& b,
                     const std::function<Expr(const Expr&, const Expr&)>& fn) {
  return broadcast_op("broadcast_map", name, a, b, fn);
}

Tensor add(const std::string& name, const Tensor& a, const Tensor& b) {
  return broadcast_op("add", name, a, b, [](const Expr& x, const Expr& y) { return x + y; });
}

Tensor sub(const std::string& name, const Tensor& a, const Tensor& b) {
  return broadcast_op("sub", name, a, b, [](const Expr& x, const Expr& y) { return x - y; });
}

Tensor mul(const std::string& name, const Tensor& a, const Tensor& b) {
  return broadcast_op("mul", name, a, b, [](const Expr& x, const Expr& y) { return x * y; });
}

Tensor div(const std::string& name, const Tensor& a, const Tensor& b) {
  return broadcast_op("div", name, a, b, [](const Expr& x, const Expr& y) { return x / y; });
}

Tensor maximum(const std::string& name, const Tensor& a, const Tensor& b) {
  return broadcast_op("maximum", name, a, b, [](const Expr& x, const Expr& y) { return maximum(x, y); });
}

Tensor minimum(const std::string& name, const Tensor& a, const Tensor& b) {
  return broadcast_op("minimum", name, a, b, [](const Expr& x, const Expr& y) { return minimum(x, y); });
}

Tensor pow(const std::string& name, const Tensor& a, const Tensor& b) {
  require_float("pow", name, a, "base");
  return broadcast_op("pow", name, a, b, [](const Expr& x, const Expr& y) { return math::pow(x, y); });
}

Tensor equal(const std::string& name, const Tensor& a, const Tensor& b) {
  return broadcast_op("equal", name, a, b, [](const Expr& x, const Expr& y) { return eq(x, y); });
}

Tensor less(const std::string& name, const Tensor& a, const Tensor& b) {
  return broadcast_op("less", name, a, b, [](const Expr& x, const Expr& y) { return lt(x, y); });
}

Tensor greater(const std::string& name, const Tensor& a, const Tensor& b) {
  return broadcast_op("greater", name, a, b, [](const Expr& x, const Expr& y) { return gt(x, y); });
}

Tensor where(const std::string& name, const Tensor& cond, const Tensor& a, const Tensor& b) {
  require_tensor("where", name, cond, "condition");
  require_tensor("where", name, a, "first value");
  require_tensor("where", name, b, "second value");
  if (cond->dtype != DType::kBool)
    throw_op_error("where", name,
                   "condition '" + cond->name + "' must be bool, not " + std::string(dtype_name(cond->dtype)));
  if (a->dtype != b->dtype)
    throw_op_error("where", name,
                   std::string("values '") + a->name + "' (" + dtype_name(a->dtype) + ") and '" + b->name + "' (" +
                       dtype_name(b->dtype) + ") have different dtypes");
  std::vector<int64_t> shape =
      broadcast_shapes("where", name, broadcast_shapes("where", name, cond->shape, a->shape), b->shape);
  return compute(name, shape, [&](const Axes& i) {
    return select(cond(broadcast_indices(cond->shape, i)), a(broadcast_indices(a->shape, i)),
                  b(broadcast_indices(b->shape, i)));
  });
}

Tensor add_scalar(const std::string& name, const Tensor& x, double c) {
  return float_unary("add_scalar", name, x, [&](const Expr& v) { return v + c; });
}

Tensor mul_scalar(const std::string& name, const Tensor& x, double c) {
  return float_unary("mul_scalar", name, x, [&](const Expr& v) { return v * c; });
}

Tensor sub_scalar(const std::string& name, const Tensor& x, double c) {
  return float_unary("sub_scalar", name, x, [&](const Expr& v) { return v - c; });
}

Tensor rsub_scalar(const std::string& name, double c, const Tensor& x) {
  return float_unary("rsub_scalar", name, x, [&](const Expr& v) { return Expr(c) - v; });
}

Tensor div_scalar(const std::string& name, const Tensor& x, double c) {
  return float_unary("div_scalar", name, x, [&](const Expr& v) { return v / c; });
}

Tensor rdiv_scalar(const std::string& name, double c, const Tensor& x) {
  return float_unary("rdiv_scalar", name, x, [&](const Expr& v) { return Expr(c) / v; });
}

Tensor fill(const std::string& name, const std::vector<int64_t>& shape, double value, DType dtype) {
  Expr constant = is_float(dtype) ? float_imm(value, dtype) : int_imm(int64_t(value), dtype);
  if (dtype == DType::kBool) constant = ne(int_imm(int64_t(value)), int64_t(0));
  return compute(name, shape, [&](const Axes&) { return constant; });
}

}  // namespace ingot
