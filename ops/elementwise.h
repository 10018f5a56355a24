// Element-wise operators: activations, unary math, broadcasting binary arithmetic and comparisons, scalar
// variants, clip, where, cast and constant fill. Each is one TE whose body reads its operands at the output's
// indices (broadcast operands at the broadcast indices). Naming and error conventions: ops/op_conventions.h.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "ir/tensor.h"

namespace ingot {

// ---- Unary ----------------------------------------------------------------------------------------------
// Any element-wise function of one tensor: out[i] = fn(x[i]); the output dtype is fn's result dtype.
Tensor unary_map(const std::string& name, const Tensor& x, const std::function<Expr(const Expr&)>& fn);

Tensor relu(const std::string& name, const Tensor& x);
Tensor leaky_relu(const std::string& name, const Tensor& x, double alpha = 0.01);
Tensor sigmoid(const std::string& name, const Tensor& x);
Tensor tanh(const std::string& name, const Tensor& x);
// Exact GELU: x * 0.5 * (1 + erf(x / sqrt(2))), as workloads/mlp.cc and torch.nn.GELU().
Tensor gelu(const std::string& name, const Tensor& x);
// Tanh approximation: 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3))), torch GELU(approximate="tanh").
Tensor gelu_tanh(const std::string& name, const Tensor& x);
// SiLU = swish: x * sigmoid(x).
Tensor silu(const std::string& name, const Tensor& x);
// hard_sigmoid: max(0, min(1, alpha * x + beta)) (ONNX defaults alpha = 0.2, beta = 0.5; torch uses 1/6, 0.5).
Tensor hard_sigmoid(const std::string& name, const Tensor& x, double alpha = 0.2, double beta = 0.5);
// hard_swish: x * max(0, min(1, x / 6 + 0.5)) (torch.nn.Hardswish, ONNX HardSwish).
Tensor hard_swish(const std::string& name, const Tensor& x);
Tensor exp(const std::string& name, const Tensor& x);
Tensor log(const std::string& name, const Tensor& x);
Tensor sqrt(const std::string& name, const Tensor& x);
Tensor rsqrt(const std::string& name, const Tensor& x);
Tensor erf(const std::string& name, const Tensor& x);
Tensor abs(const std::string& name, const Tensor& x);
Tensor neg(const std::string& name, const Tensor& x);
Tensor reciprocal(const std::string& name, const Tensor& x);
// x ^ exponent with a constant exponent; 2 and 0.5 become x * x and sqrt(x), 1 a copy.
Tensor pow_scalar(const std::string& name, const Tensor& x, double exponent);
// min(max(x, lo), hi); ONNX Clip with constant bounds (relu6 = clip(x, 0, 6)).
Tensor clip(const std::string& name, const Tensor& x, double lo, double hi);
// Element-wise conversion to dtype (ONNX Cast).
Tensor cast_to(const std::string& name, const Tensor& x, DType dtype);

// ---- Binary with broadcasting ---------------------------------------------------------------------------
// Any element-wise function of two tensors under numpy / ONNX multidirectional broadcasting; the output
// shape is broadcast_shapes(a, b). Throws naming both operand shapes when they do not broadcast.
Tensor broadcast_map(const std::string& name, const Tensor& a, const Tensor& b,
                     const std::function<Expr(const Expr&, const Expr&)>& fn);

Tensor add(const std::string& name, const Tensor& a, const Tensor& b);
Tensor sub(const std::string& name, const Tensor& a, const Tensor& b);
Tensor mul(const std::string& name, const Tensor& a, const Tensor& b);
Tensor div(const std::string& name, const Tensor& a, const Tensor& b);
Tensor maximum(const std::string& name, const Tensor& a, const Tensor& b);
Tensor minimum(const std::string& name, const Tensor& a, const Tensor& b);
// a ^ b element-wise (floats).
Tensor pow(const std::string& name, const Tensor& a, const Tensor& b);
// Comparisons give bool tensors.
Tensor equal(const std::string& name, const Tensor& a, const Tensor& b);
Tensor less(const std::string& name, const Tensor& a, const Tensor& b);
Tensor greater(const std::string& name, const Tensor& a, const Tensor& b);
// cond ? a : b with all three broadcast together (ONNX Where); cond must be bool.
Tensor where(const std::string& name, const Tensor& cond, const Tensor& a, const Tensor& b);

// ---- Tensor and constant ----------------------------------------------------------------------------------
Tensor add_scalar(const std::string& name, const Tensor& x, double c);   // x + c
Tensor mul_scalar(const std::string& name, const Tensor& x, double c);   // x * c
Tensor sub_scalar(const std::string& name, const Tensor& x, double c);   // x - c
Tensor rsub_scalar(const std::string& name, double c, const Tensor& x);  // c - x
Tensor div_scalar(const std::string& name, const Tensor& x, double c);   // x / c
Tensor rdiv_scalar(const std::string& name, double c, const Tensor& x);  // c / x

// A tensor whose every element is value (ONNX ConstantOfShape; zero initial states).
Tensor fill(const std::string& name, const std::vector<int64_t>& shape, double value, DType dtype = DType::kFloat32);

}  // namespace ingot
