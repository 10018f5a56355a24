#include "ops/conv.h"

#include <vector>

#include "ops/op_conventions.h"

namespace ingot {

namespace {

using Axes = std::vector<Expr>;

std::string described(const char* operand, const Tensor& t) {
  return std::string(operand) + " " + shape_to_string(t->shape);
}

// x[n, c, h, w] read at a window position, guarded on the sides where padding can put it outside the input:
// select(in bounds, x[...], 0). Without padding the window always fits, so the read stays a plain affine read.
Expr guarded_read(const Tensor& x, const Expr& n, const Expr& c, const Expr& h, const Expr& w,
                  const std::array<int64_t, 4>& padding, const Expr& fill) {
  Expr inside;
  auto require = [&](const Expr& cond) { inside = inside ? logical_and(inside, cond) : cond; };
  if (padding[0] > 0) require(ge(h, int64_t(0)));
  if (padding[2] > 0) require(lt(h, x->shape[2]));
  if (padding[1] > 0) require(ge(w, int64_t(0)));
  if (padding[3] > 0) require(lt(w, x->shape[3]));
  Expr value = x(n, c, h, w);
  return inside ? select(inside, value, fill) : value;
}

}  // namespace

int64_t window_output_size(int64_t input, int64_t pad_begin, int64_t pad_end, int64_t kernel, int64_t stride,
                           int64_t dilation, bool ceil_mode) {
  const int64_t span = input + pad_begin + pad_end - dilation * (kernel - 1) - 1;
  if (span < 0) return 0;
  int64_t out = (ceil_mode ? (span + stride - 1) / stride : span / stride) + 1;
  // PyTorch / ONNX (since opset 19 documented, always in practice): the last window must start inside the input
  // or its begin padding.
  if (ceil_mode && (out - 1) * stride >= input + pad_begin) --out;
  return out;
}

Tensor conv2d(const std::string& name, const Tensor& x, const Tensor& weight, const Tensor& bias,
              const Conv2dAttrs& attrs) {
  const char* op = "conv2d";
  if (!x || !weight) throw_op_error(op, name, "input and weight must be non-null tensors");
  if (x->shape.size() != 4) throw_op_error(op, name, "input " + shape_to_string(x->shape) + " must be 4-D NCHW");
  if (weight->shape.size() != 4)
    throw_op_error(op, name, described("weight", weight) + " must be 4-D [out_channels, in_channels/groups, kh, kw]");
  if (x->dtype != weight->dtype)
    throw_op_error(op, name,
                   std::string("input is ") + dtype_name(x->dtype) + " but weight is " + dtype_name(weight->dtype));
  for (int d = 0; d < 2; ++d)
    if (attrs.stride[d] <= 0 || attrs.dilation[d] <= 0)
      throw_op_error(op, name,
                     "stride {" + std::to_string(attrs.stride[0]) + "," + std::to_string(attrs.stride[1]) +
                         "} and dilation {" + std::to_string(attrs.dilation[0]) + "," +
                         std::to_string(attrs.dilation[1]) + "} must be positive");
  for (int64_t p : attrs.padding)
    if (p < 0) throw_op_error(op, name, "padding must be non-negative");
  const int64_t groups = attrs.groups;
  const int64_t N = x->shape[0], C = x->shape[1], F = weight->shape[0], CG = weight->shape[1];
  const int64_t KH = weight->shape[2], KW = weight->shape[3];
  if (groups <= 0) throw_op_error(op, name, "groups=" + std::to_string(groups) + " must be positive");
  if (C % groups != 0)
    throw_op_error(op, name,
                   "input " + shape_to_string(x->shape) + " has " + std::to_string(C) +
                       " channels, not divisible by groups=" + std::to_string(groups));
  if (F % groups != 0)
    throw_op_error(op, name,
                   described("weight", weight) + " has " + std::to_string(F) +
                       " output channels, not divisible by groups=" + std::to_string(groups));
  if (CG * groups != C)
    throw_op_error(op, name,
                   described("weight", weight) + " has " + std::to_string(CG) + " input channels per group, input " +
                       shape_to_string(x->shape) + " has " + std::to_string(C) + " (groups=" + std::to_string(groups) +
                       ")");
  const auto& pad = attrs.padding;
  const int64_t OH = window_output_size(x->shape[2], pad[0], pad[2], KH, attrs.stride[0], attrs.dilation[0]);
  const int64_t OW = window_output_size(x->shape[3], pad[1], pad[3], KW, attrs.stride[1], attrs.dilation[1]);
  if (OH <= 0 || OW <= 0)
    throw_op_error(op, name,
                   described("weight", weight) + " with dilation does not fit input " + shape_to_string(x->shape) +
                       " plus padding: the output would be empty");
  if (bias) {
    if (bias->shape != std::vector<int64_t>{F})
      throw_op_error(op, name, described("bias", bias) + " must be [" + std::to_string(F) + "]");
    if (bias->dtype != x->dtype) throw_op_error(op, name, "bias dtype differs from the input's");
  }

  const int64_t out_per_group = F / groups;
  // A depthwise conv has one input channel per group: no channel reduction axis.
  std::vector<IterVar> axes;
  IterVar rc;
  if (CG > 1) {
    rc = reduce_axis(CG, "rc");
    axes.push_back(rc);
  }
  // A 1 x 1 kernel with a 1 x 1 output (a squeeze-excitation layer) is a GEMV over the channels: without reduction
  // axes of one iteration after them, the channels' axis is the innermost one, which the schedule vectorizes (behind
  // them, EfficientNet's 1152 -> 48 layer reduced one scalar at a time: 0.019 ms, Zen 5).
  const bool gemv = CG > 1 && KH == 1 && KW == 1 && OH == 1 && OW == 1;
  IterVar ry = reduce_axis(KH, "ry"), rx = reduce_axis(KW, "rx");
  if (!gemv) {
    axes.push_back(ry);
    axes.push_back(rx);
  }
  const Expr ky = gemv ? Expr(int64_t(0)) : Expr(ry.var), kx = gemv ? Expr(int64_t(0)) : Expr(rx.var);
  const Expr zero = float_imm(0.0, x->dtype);
  Tensor conv = compute(bias ? name + "_conv" : name, {N, F, OH, OW}, [&](const Axes& i) {
    Expr c_in = CG > 1 ? rc.var : Expr(int64_t(0));
    if (groups > 1) c_in = i[1] / out_per_group * CG + c_in;
    Expr h = i[2] * attrs.stride[0] + ky * attrs.dilation[0] - pad[0];
    Expr w = i[3] * attrs.stride[1] + kx * attrs.dilation[1] - pad[1];
    Expr c_w = CG > 1 ? rc.var : Expr(int64_t(0));
    return sum(guarded_read(x, i[0], c_in, h, w, pad, zero) * weight(i[1], c_w, ky, kx), axes);
  });
  if (!bias) return conv;
  return compute(name, conv->shape, [&](const Axes& i) { return conv(i) + bias(i[1]); });
}

}  // namespace ingot
