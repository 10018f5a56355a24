// ONNX element-wise operators: activations, unary math, broadcasting arithmetic, comparisons and logic, Clip,
// Cast, Where, and the variadic Max / Min / Sum / Mean.
#include <cmath>
#include <limits>

#include "ops/elementwise.h"
#include "ops/op_conventions.h"
#include "workloads/onnx_ops.h"
#include "workloads/onnx_tensor.h"

namespace ingot {

namespace {

using Fn1 = std::function<Expr(const Expr&)>;
using Fn2 = std::function<Expr(const Expr&, const Expr&)>;

void require_float_input(OnnxNode& node, size_t i) {
  if (!is_float(node.input_dtype(i)))
    node.unsupported(std::string("input of type ") + dtype_name(node.input_dtype(i)) +
                     " is not supported (floats only)");
}

// A unary op whose attributes (if any) the builder reads from the node.
void add_unary(OnnxConverterMap& m, const std::string& op, std::function<Fn1(OnnxNode&)> make_fn,
               bool float_only = true) {
  m[op] = [make_fn, float_only](OnnxNode& node) {
    if (float_only) require_float_input(node, 0);
    Fn1 fn = make_fn(node);
    node.set_output(0, unary_map(node.output_name(0), node.input(0), fn));
  };
}

void add_unary(OnnxConverterMap& m, const std::string& op, Fn1 fn, bool float_only = true) {
  add_unary(
      m, op, [fn](OnnxNode&) { return fn; }, float_only);
}

void add_binary(OnnxConverterMap& m, const std::string& op, std::function<Fn2(OnnxNode&)> make_fn) {
  m[op] = [make_fn](OnnxNode& node) {
    if (node.input_dtype(0) != node.input_dtype(1))
      node.fail(std::string("operands have different types ") + dtype_name(node.input_dtype(0)) + " and " +
                dtype_name(node.input_dtype(1)));
    Fn2 fn = make_fn(node);
    node.set_output(0, broadcast_map(node.output_name(0), node.input(0), node.input(1), fn));
  };
}

void add_binary(OnnxConverterMap& m, const std::string& op, Fn2 fn) {
  add_binary(m, op, [fn](OnnxNode&) { return fn; });
}

Expr typed_constant(double value, DType dtype) {
  return is_float(dtype) ? float_imm(value, dtype) : int_imm(int64_t(value), dtype);
}

// ONNX integer division truncates toward zero; the IR's integer division floors.
Expr truncating_divide(const Expr& a, const Expr& b) {
  Expr q = a / b;
  Expr zero = typed_constant(0, a.dtype());
  Expr inexact = ne(a % b, zero);
  Expr signs_differ = ne(lt(a, zero), lt(b, zero));
  return select(logical_and(inexact, signs_differ), q + typed_constant(1, a.dtype()), q);
}

// Max, Min, Sum, Mean: a left fold of the broadcasting binary op over every input.
void add_variadic(OnnxConverterMap& m, const std::string& op, Fn2 combine, bool mean) {
  m[op] = [combine, mean](OnnxNode& node) {
    if (node.num_inputs() == 0) node.fail("needs at least one input");
    const size_t n = node.num_inputs();
    if (n == 1 && !mean) {
      node.alias_output(0, 0);
      return;
    }
    Tensor acc = node.input(0);
    for (size_t i = 1; i < n; ++i) {
      bool last = i + 1 == n && !mean;
      acc = broadcast_map(last ? node.output_name(0) : node.temp_name("_" + std::to_string(i)), acc, node.input(i),
                          combine);
    }
    if (mean) acc = div_scalar(node.output_name(0), acc, double(n));
    node.set_output(0, acc);
  };
}

}  // namespace

void add_onnx_elementwise_converters(OnnxConverterMap& m) {
  // ---- Unary ----
  m["Relu"] = [](OnnxNode& node) { node.set_output(0, relu(node.output_name(0), node.input(0))); };
  add_unary(m, "Sigmoid", [](const Expr& x) { return math::sigmoid(x); });
  add_unary(m, "Tanh", [](const Expr& x) { return math::tanh(x); });
  add_unary(m, "Erf", [](const Expr& x) { return math::erf(x); });
  add_unary(m, "Exp", [](const Expr& x) { return math::exp(x); });
  add_unary(m, "Log", [](const Expr& x) { return math::log(x); });
  add_unary(m, "Sqrt", [](const Expr& x) { return math::sqrt(x); });
  add_unary(m, "Reciprocal", [](const Expr& x) { return typed_constant(1, x.dtype()) / x; });
  add_unary(
      m, "Neg", [](const Expr& x) { return -x; }, false);
  add_unary(
      m, "Abs",
      [](const Expr& x) {
        return is_float(x.dtype()) ? math::abs(x) : select(lt(x, typed_constant(0, x.dtype())), -x, x);
      },
      false);
  add_unary(
      m, "Sign",
      [](const Expr& x) {
        Expr zero = typed_constant(0, x.dtype());
        return select(gt(x, zero), typed_constant(1, x.dtype()),
                      select(lt(x, zero), typed_constant(-1, x.dtype()), zero));
      },
      false);
  add_unary(m, "Softsign", [](const Expr& x) { return x / (1.0 + math::abs(x)); });
  // log(1 + exp(x)) overflows for large x, where it equals x.
  add_unary(m, "Softplus", [](const Expr& x) { return select(gt(x, 20.0), x, math::log(1.0 + math::exp(x))); });
  add_unary(m, "HardSwish", [](const Expr& x) { return x * maximum(Expr(0.0), minimum(Expr(1.0), x / 6.0 + 0.5)); });
  add_unary(m, "LeakyRelu", [](OnnxNode& node) -> Fn1 {
    double alpha = node.attr_float("alpha", 0.01);
    return [alpha](const Expr& x) { return select(lt(x, 0.0), x * alpha, x); };
  });
  add_unary(m, "HardSigmoid", [](OnnxNode& node) -> Fn1 {
    double alpha = node.attr_float("alpha", 0.2), beta = node.attr_float("beta", 0.5);
    return [alpha, beta](const Expr& x) { return maximum(Expr(0.0), minimum(Expr(1.0), x * alpha + beta)); };
  });
  add_unary(m, "Elu", [](OnnxNode& node) -> Fn1 {
    double alpha = node.attr_float("alpha", 1.0);
    return [alpha](const Expr& x) { return select(lt(x, 0.0), (math::exp(x) - 1.0) * alpha, x); };
  });
  add_unary(m, "Celu", [](OnnxNode& node) -> Fn1 {
    double alpha = node.attr_float("alpha", 1.0);
    return [alpha](const Expr& x) {
      return maximum(Expr(0.0), x) + minimum(Expr(0.0), (math::exp(x / alpha) - 1.0) * alpha);
    };
  });
  add_unary(m, "Selu", [](OnnxNode& node) -> Fn1 {
    double alpha = node.attr_float("alpha", 1.67326319217681884765625);
    double gamma = node.attr_float("gamma", 1.05070102214813232421875);
    return
        [alpha, gamma](const Expr& x) { return select(gt(x, 0.0), x * gamma, (math::exp(x) * alpha - alpha) * gamma); };
  });
  add_unary(m, "ThresholdedRelu", [](OnnxNode& node) -> Fn1 {
    double alpha = node.attr_float("alpha", 1.0);
    return [alpha](const Expr& x) { return select(gt(x, alpha), x, Expr(0.0)); };
  });
  // floor and ceil through a round trip to int64 (exact for |x| < 2^63, the range ONNX models use).
  add_unary(m, "Floor", [](const Expr& x) {
    Expr t = cast(x.dtype(), cast(DType::kInt64, x));
    return select(gt(t, x), t - 1.0, t);
  });
  add_unary(m, "Ceil", [](const Expr& x) {
    Expr t = cast(x.dtype(), cast(DType::kInt64, x));
    return select(lt(t, x), t + 1.0, t);
  });
  add_unary(m, "IsNaN", [](const Expr& x) { return ne(x, x); });
  add_unary(m, "IsInf", [](OnnxNode& node) -> Fn1 {
    bool negative = node.attr_int("detect_negative", 1) != 0, positive = node.attr_int("detect_positive", 1) != 0;
    return [negative, positive](const Expr& x) {
      const double inf = std::numeric_limits<double>::infinity();
      Expr pos = eq(x, float_imm(inf, x.dtype())), neg = eq(x, float_imm(-inf, x.dtype()));
      if (negative && positive) return logical_or(pos, neg);
      if (positive) return pos;
      if (negative) return neg;
      return logical_and(pos, neg);  // neither: never true
    };
  });
  m["Not"] = [](OnnxNode& node) {
    if (node.input_dtype(0) != DType::kBool) node.fail("input must be bool");
    node.set_output(0, unary_map(node.output_name(0), node.input(0), [](const Expr& x) { return logical_not(x); }));
  };

  m["Clip"] = [](OnnxNode& node) {
    DType t = node.input_dtype(0);
    Tensor x = node.input(0);
    // Each bound is a constant folded into the expression, or a scalar tensor read at [].
    Expr bound[2];
    for (size_t b = 0; b < 2; ++b) {
      if (!node.has_input(b + 1)) continue;
      if (shape_elements(node.input_shape(b + 1)) != 1) node.fail(b ? "max must be a scalar" : "min must be a scalar");
      if (node.input_is_constant(b + 1)) {
        bound[b] = typed_constant(node.constant_scalar(b + 1, b ? "max" : "min"), t);
      } else {
        Tensor bt = node.input(b + 1);
        bound[b] = read(bt, std::vector<Expr>(bt->shape.size(), Expr(int64_t(0))));
      }
    }
    node.set_output(0, unary_map(node.output_name(0), x, [&](const Expr& v) {
                      Expr r = v;
                      if (bound[0]) r = maximum(r, bound[0]);
                      if (bound[1]) r = minimum(r, bound[1]);
                      return r;
                    }));
  };

  m["Cast"] = [](OnnxNode& node) {
    DType to = dtype_from_onnx(int32_t(node.attr_int("to", 0)), node.describe() + ": target type");
    node.attr_int("saturate", 1);  // opset 19 only; float8 targets are rejected above
    if (to == node.input_dtype(0)) return node.alias_output(0, 0);
    node.set_output(0, cast_to(node.output_name(0), node.input(0), to));
  };
  m["CastLike"] = [](OnnxNode& node) {
    DType to = node.input_dtype(1);
    if (to == node.input_dtype(0)) return node.alias_output(0, 0);
    node.set_output(0, cast_to(node.output_name(0), node.input(0), to));
  };

  // ---- Binary, broadcasting ----
  add_binary(m, "Add", [](const Expr& a, const Expr& b) { return a + b; });
  add_binary(m, "Sub", [](const Expr& a, const Expr& b) { return a - b; });
  add_binary(m, "Mul", [](const Expr& a, const Expr& b) { return a * b; });
  add_binary(m, "Div",
             [](const Expr& a, const Expr& b) { return is_float(a.dtype()) ? a / b : truncating_divide(a, b); });
  add_binary(m, "Mod", [](OnnxNode& node) -> Fn2 {
    bool fmod = node.attr_int("fmod", 0) != 0;
    if (is_float(node.input_dtype(0))) node.unsupported("Mod on floating-point values is not supported");
    // fmod = 0 takes the divisor's sign (the IR's floor modulo); fmod = 1 the dividend's (truncation).
    if (!fmod) return [](const Expr& a, const Expr& b) { return a % b; };
    return [](const Expr& a, const Expr& b) { return a - b * truncating_divide(a, b); };
  });
  add_binary(m, "Equal", [](const Expr& a, const Expr& b) { return eq(a, b); });
  add_binary(m, "Less", [](const Expr& a, const Expr& b) { return lt(a, b); });
  add_binary(m, "LessOrEqual", [](const Expr& a, const Expr& b) { return le(a, b); });
  add_binary(m, "Greater", [](const Expr& a, const Expr& b) { return gt(a, b); });
  add_binary(m, "GreaterOrEqual", [](const Expr& a, const Expr& b) { return ge(a, b); });
  add_binary(m, "And", [](const Expr& a, const Expr& b) { return logical_and(a, b); });
  add_binary(m, "Or", [](const Expr& a, const Expr& b) { return logical_or(a, b); });
  add_binary(m, "Xor", [](const Expr& a, const Expr& b) { return ne(a, b); });
  add_binary(m, "PRelu", [](const Expr& x, const Expr& slope) { return select(lt(x, 0.0), x * slope, x); });

  m["Pow"] = [](OnnxNode& node) {
    require_float_input(node, 0);
    if (node.input_is_constant(1) && shape_elements(node.input_shape(1)) == 1 &&
        node.input_shape(1).size() <= node.input_shape(0).size()) {
      double exponent = node.constant_scalar(1, "exponent");
      node.set_output(0, pow_scalar(node.output_name(0), node.input(0), exponent));
      return;
    }
    Tensor exponent = node.input(1);
    if (node.input_dtype(1) != node.input_dtype(0))
      exponent = cast_to(node.temp_name("_exponent"), exponent, node.input_dtype(0));
    node.set_output(0, pow(node.output_name(0), node.input(0), exponent));
  };

  m["Where"] = [](OnnxNode& node) {
    if (node.input_dtype(0) != DType::kBool) node.fail("condition must be bool");
    node.set_output(0, where(node.output_name(0), node.input(0), node.input(1), node.input(2)));
  };

  add_variadic(
      m, "Max", [](const Expr& a, const Expr& b) { return maximum(a, b); }, false);
  add_variadic(
      m, "Min", [](const Expr& a, const Expr& b) { return minimum(a, b); }, false);
  add_variadic(
      m, "Sum", [](const Expr& a, const Expr& b) { return a + b; }, false);
  add_variadic(
      m, "Mean", [](const Expr& a, const Expr& b) { return a + b; }, true);
}

}  // namespace ingot
