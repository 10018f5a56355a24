// ONNX neural-network operators: MatMul, Gemm, Conv (1-D and 2-D), ConvTranspose (any spatial rank, in gather
// form), MaxPool / AveragePool (1-D and 2-D), GlobalAveragePool, GlobalMaxPool, BatchNormalization,
// LayerNormalization, InstanceNormalization, Softmax, LogSoftmax and the Reduce* family. 1-D convolutions and
// pools run as 2-D ones with a height of 1.
#include <cmath>

#include "ops/conv.h"
#include "ops/elementwise.h"
#include "ops/layout.h"
#include "ops/linear.h"
#include "ops/norm.h"
#include "ops/op_conventions.h"
#include "ops/pool.h"
#include "ops/reduce.h"
#include "ops/softmax.h"
#include "workloads/onnx_ops.h"

namespace ingot {

namespace {

void require_float(OnnxNode& node, size_t i) {
  if (!is_float(node.input_dtype(i)))
    node.unsupported(std::string("input of type ") + dtype_name(node.input_dtype(i)) +
                     " is not supported (floats only)");
}

// The window attributes shared by Conv and the pools, resolved against the input's spatial size: explicit pads
// from auto_pad, and every list one entry per spatial dimension (1 or 2).
struct Window {
  std::vector<int64_t> kernel, strides, dilations, pads_begin, pads_end;
};

Window read_window(OnnxNode& node, const std::vector<int64_t>& spatial, const std::vector<int64_t>& kernel,
                   bool ceil_mode) {
  const size_t r = spatial.size();
  Window w;
  w.kernel = kernel;
  w.strides = node.attr_ints("strides", std::vector<int64_t>(r, 1));
  w.dilations = node.attr_ints("dilations", std::vector<int64_t>(r, 1));
  std::vector<int64_t> pads = node.attr_ints("pads", std::vector<int64_t>(2 * r, 0));
  if (w.strides.size() != r || w.dilations.size() != r || pads.size() != 2 * r)
    node.fail("strides, dilations and pads must have one entry per spatial dimension (pads two)");
  std::string auto_pad = node.attr_string("auto_pad", "NOTSET");
  w.pads_begin.assign(pads.begin(), pads.begin() + long(r));
  w.pads_end.assign(pads.begin() + long(r), pads.end());
  if (auto_pad == "VALID") {
    w.pads_begin.assign(r, 0);
    w.pads_end.assign(r, 0);
  } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    if (ceil_mode) node.unsupported("auto_pad=" + auto_pad + " with ceil_mode=1 is not supported");
    for (size_t d = 0; d < r; ++d) {
      int64_t out = (spatial[d] + w.strides[d] - 1) / w.strides[d];
      int64_t total =
          std::max<int64_t>(0, (out - 1) * w.strides[d] + (kernel[d] - 1) * w.dilations[d] + 1 - spatial[d]);
      int64_t small = total / 2, large = total - small;
      w.pads_begin[d] = auto_pad == "SAME_UPPER" ? small : large;
      w.pads_end[d] = total - w.pads_begin[d];
    }
  } else if (auto_pad != "NOTSET") {
    node.unsupported("auto_pad=" + auto_pad + " is not supported");
  }
  return w;
}

// [N, C, L] -> [N, C, 1, L] so that 1-D windows run as 2-D ones.
Tensor as_2d(OnnxNode& node, const Tensor& x, const std::string& suffix) {
  std::vector<int64_t> s = x->shape;
  return reshape(node.temp_name(suffix), x, {s[0], s[1], 1, s[2]});
}

std::vector<int64_t> spatial_of(OnnxNode& node, const std::vector<int64_t>& shape) {
  if (shape.size() != 3 && shape.size() != 4)
    node.unsupported("only 1-D and 2-D spatial inputs are supported, the input is " + shape_to_string(shape));
  return std::vector<int64_t>(shape.begin() + 2, shape.end());
}

void convert_conv(OnnxNode& node) {
  require_float(node, 0);
  const std::vector<int64_t>& xs = node.input_shape(0);
  const std::vector<int64_t>& ws = node.input_shape(1);
  std::vector<int64_t> spatial = spatial_of(node, xs);
  if (ws.size() != xs.size())
    node.fail("weight " + shape_to_string(ws) + " and input " + shape_to_string(xs) + " differ in rank");
  std::vector<int64_t> kernel(ws.begin() + 2, ws.end());
  std::vector<int64_t> kernel_attr = node.attr_ints("kernel_shape", kernel);
  if (kernel_attr != kernel) node.fail("kernel_shape disagrees with the weight's shape " + shape_to_string(ws));
  Window w = read_window(node, spatial, kernel, false);
  Conv2dAttrs attrs;
  attrs.groups = node.attr_int("group", 1);
  bool one_d = spatial.size() == 1;
  attrs.stride = {one_d ? 1 : w.strides[0], w.strides[one_d ? 0 : 1]};
  attrs.dilation = {one_d ? 1 : w.dilations[0], w.dilations[one_d ? 0 : 1]};
  attrs.padding = {one_d ? 0 : w.pads_begin[0], w.pads_begin[one_d ? 0 : 1], one_d ? 0 : w.pads_end[0],
                   w.pads_end[one_d ? 0 : 1]};
  Tensor x = node.input(0), weight = node.input(1);
  Tensor bias = node.has_input(2) ? node.input(2) : Tensor();
  if (!one_d) return node.set_output(0, conv2d(node.output_name(0), x, weight, bias, attrs));
  Tensor y = conv2d(node.temp_name("_2d"), as_2d(node, x, "_x2d"), as_2d(node, weight, "_w2d"), bias, attrs);
  node.set_output(0, reshape(node.output_name(0), y, {y->shape[0], y->shape[1], y->shape[3]}));
}

// ConvTranspose over any number of spatial dimensions, in gather form: y[n, f, o...] sums x[n, c, i...] *
// w[c, f % (M / group), k...] over the input channels c of f's group and the kernel taps k for which
// o + pad_begin = i * stride + k * dilation with 0 <= i < input size, i.e. i = (o + pad_begin - k * dilation) /
// stride where that divides evenly. One reduction TE whose input read is guarded by a select (as conv2d guards its
// padding), plus a bias TE. Padding may come out negative (an output_shape larger than the plain output): those
// positions receive no taps.
void convert_conv_transpose(OnnxNode& node) {
  require_float(node, 0);
  const std::vector<int64_t>& xs = node.input_shape(0);
  const std::vector<int64_t>& ws = node.input_shape(1);
  if (xs.size() < 3) node.fail("input must have rank >= 3, not " + shape_to_string(xs));
  const size_t r = xs.size() - 2;
  if (ws.size() != xs.size())
    node.fail("weight " + shape_to_string(ws) + " and input " + shape_to_string(xs) + " differ in rank");
  const int64_t N = xs[0], C = xs[1], group = node.attr_int("group", 1);
  if (group <= 0 || C % group != 0 || ws[0] != C)
    node.fail("weight " + shape_to_string(ws) + " must be [" + std::to_string(C) + ", M/group, k...] with group=" +
              std::to_string(group) + " dividing the " + std::to_string(C) + " input channels");
  const int64_t Mg = ws[1], Cg = C / group, M = Mg * group;
  std::vector<int64_t> kernel(ws.begin() + 2, ws.end());
  if (node.attr_ints("kernel_shape", kernel) != kernel)
    node.fail("kernel_shape disagrees with the weight's shape " + shape_to_string(ws));
  std::vector<int64_t> strides = node.attr_ints("strides", std::vector<int64_t>(r, 1));
  std::vector<int64_t> dilations = node.attr_ints("dilations", std::vector<int64_t>(r, 1));
  std::vector<int64_t> output_padding = node.attr_ints("output_padding", std::vector<int64_t>(r, 0));
  std::vector<int64_t> pads = node.attr_ints("pads", std::vector<int64_t>(2 * r, 0));
  std::vector<int64_t> output_shape = node.attr_ints("output_shape");
  const std::string auto_pad = node.attr_string("auto_pad", "NOTSET");
  if (strides.size() != r || dilations.size() != r || output_padding.size() != r || pads.size() != 2 * r)
    node.fail("strides, dilations, output_padding and pads must have one entry per spatial dimension (pads two)");
  if (output_shape.size() == r + 2) output_shape.erase(output_shape.begin(), output_shape.begin() + 2);
  if (!output_shape.empty() && output_shape.size() != r)
    node.fail("output_shape must have one entry per spatial dimension");
  if (auto_pad != "NOTSET" && auto_pad != "VALID" && auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER")
    node.unsupported("auto_pad=" + auto_pad + " is not supported");
  for (size_t d = 0; d < r; ++d)
    if (strides[d] <= 0 || dilations[d] <= 0) node.fail("strides and dilations must be positive");

  // Per spatial dimension: the begin padding (all the gather needs) and the output size. ONNX: an output_shape, or
  // auto_pad SAME_* (output = input * stride), fixes the total padding, split with the odd unit at the end for
  // SAME_UPPER and at the begin otherwise (floor division: a negative total lengthens the output at its end).
  std::vector<int64_t> pad_begin(r), out(r);
  auto floor_half = [](int64_t v) { return v >= 0 ? v / 2 : -((-v + 1) / 2); };
  for (size_t d = 0; d < r; ++d) {
    const int64_t in = xs[2 + d], span = strides[d] * (in - 1) + output_padding[d] + (kernel[d] - 1) * dilations[d] + 1;
    if (!output_shape.empty() || auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      out[d] = output_shape.empty() ? in * strides[d] : output_shape[d];
      const int64_t total = span - out[d];
      pad_begin[d] = auto_pad == "SAME_UPPER" ? floor_half(total) : total - floor_half(total);
    } else {
      const bool valid = auto_pad == "VALID";
      pad_begin[d] = valid ? 0 : pads[d];
      out[d] = span - (valid ? 0 : pads[d] + pads[r + d]);
    }
    if (out[d] <= 0) node.unsupported("the output would be empty along spatial dimension " + std::to_string(d));
  }

  Tensor x = node.input(0), weight = node.input(1);
  Tensor bias = node.has_input(2) ? node.input(2) : Tensor();
  if (bias && bias->shape != std::vector<int64_t>{M})
    node.fail("bias " + shape_to_string(bias->shape) + " must be [" + std::to_string(M) + "]");
  std::vector<IterVar> axes;
  IterVar rc;
  if (Cg > 1) {
    rc = reduce_axis(Cg, "rc");
    axes.push_back(rc);
  }
  std::vector<IterVar> taps;
  for (size_t d = 0; d < r; ++d) {
    taps.push_back(reduce_axis(kernel[d], "rk" + std::to_string(d)));
    axes.push_back(taps.back());
  }
  std::vector<int64_t> y_shape = {N, M};
  y_shape.insert(y_shape.end(), out.begin(), out.end());
  const std::string name = node.output_name(0);
  Tensor y = compute(bias ? name + "_conv" : name, y_shape, [&](const std::vector<Expr>& i) {
    Expr c = Cg > 1 ? rc.var : Expr(int64_t(0));
    if (group > 1) c = i[1] / Mg * Cg + c;
    std::vector<Expr> at = {i[0], c}, w_at = {c, group > 1 ? i[1] % Mg : i[1]};
    Expr inside;
    auto require = [&](const Expr& cond) { inside = inside ? logical_and(inside, cond) : cond; };
    for (size_t d = 0; d < r; ++d) {
      const int64_t in = xs[2 + d], s = strides[d];
      Expr t = i[2 + d] + (pad_begin[d] - taps[d].var * dilations[d]);
      // Conditions that can fail for some output position and tap.
      const int64_t t_min = pad_begin[d] - (kernel[d] - 1) * dilations[d], t_max = out[d] - 1 + pad_begin[d];
      if (t_min < 0) require(ge(t, int64_t(0)));
      if (s > 1) require(eq(t % s, int64_t(0)));
      if (t_max > (in - 1) * s) require(lt(t, in * s - (s - 1)));
      at.push_back(s > 1 ? t / s : t);
      w_at.push_back(taps[d].var);
    }
    Expr value = read(x, at);
    if (inside) value = select(inside, value, float_imm(0.0, x->dtype));
    return sum(value * read(weight, w_at), axes);
  });
  if (!bias) return node.set_output(0, y);
  node.set_output(0, compute(name, y->shape, [&](const std::vector<Expr>& i) { return read(y, i) + bias(i[1]); }));
}

void convert_pool(OnnxNode& node, bool is_max) {
  require_float(node, 0);
  node.require_outputs_at_most(1, "(MaxPool's Indices) is not supported");
  std::vector<int64_t> spatial = spatial_of(node, node.input_shape(0));
  if (!node.has_attr("kernel_shape")) node.fail("kernel_shape is required");
  std::vector<int64_t> kernel = node.attr_ints("kernel_shape");
  if (kernel.size() != spatial.size()) node.fail("kernel_shape needs one entry per spatial dimension");
  bool ceil_mode = node.attr_int("ceil_mode", 0) != 0;
  Window w = read_window(node, spatial, kernel, ceil_mode);
  if (is_max) node.require_attr_int("storage_order", 0, "it only affects the Indices output");
  Pool2dAttrs attrs;
  bool one_d = spatial.size() == 1;
  auto pick = [&](const std::vector<int64_t>& v, int64_t unit) -> std::array<int64_t, 2> {
    return one_d ? std::array<int64_t, 2>{unit, v[0]} : std::array<int64_t, 2>{v[0], v[1]};
  };
  attrs.kernel = pick(w.kernel, 1);
  attrs.stride = pick(w.strides, 1);
  attrs.dilation = pick(w.dilations, 1);
  auto b = pick(w.pads_begin, 0), e = pick(w.pads_end, 0);
  attrs.padding = {b[0], b[1], e[0], e[1]};
  attrs.ceil_mode = ceil_mode;
  if (!is_max) attrs.count_include_pad = node.attr_int("count_include_pad", 0) != 0;
  Tensor x = node.input(0);
  auto pool = [&](const std::string& name, const Tensor& in) {
    return is_max ? max_pool2d(name, in, attrs) : avg_pool2d(name, in, attrs);
  };
  if (!one_d) return node.set_output(0, pool(node.output_name(0), x));
  Tensor y = pool(node.temp_name("_2d"), as_2d(node, x, "_x2d"));
  node.set_output(0, reshape(node.output_name(0), y, {y->shape[0], y->shape[1], y->shape[3]}));
}

void convert_global_pool(OnnxNode& node, bool is_max) {
  require_float(node, 0);
  const std::vector<int64_t>& s = node.input_shape(0);
  if (s.size() == 4) {
    Tensor x = node.input(0);
    return node.set_output(
        0, is_max ? global_max_pool2d(node.output_name(0), x) : global_avg_pool2d(node.output_name(0), x));
  }
  if (s.size() < 3) node.fail("input must have rank >= 3");
  std::vector<int64_t> axes;
  for (size_t d = 2; d < s.size(); ++d) axes.push_back(int64_t(d));
  Tensor x = node.input(0);
  node.set_output(
      0, is_max ? reduce_max(node.output_name(0), x, axes, true) : reduce_mean(node.output_name(0), x, axes, true));
}

void convert_matmul(OnnxNode& node) {
  if (node.input_dtype(0) != node.input_dtype(1)) node.fail("operands have different types");
  node.set_output(0, matmul(node.output_name(0), node.input(0), node.input(1)));
}

void convert_gemm(OnnxNode& node) {
  GemmAttrs attrs;
  attrs.alpha = node.attr_float("alpha", 1.0);
  attrs.beta = node.attr_float("beta", 1.0);
  attrs.transpose_a = node.attr_int("transA", 0) != 0;
  attrs.transpose_b = node.attr_int("transB", 0) != 0;
  Tensor c = node.has_input(2) ? node.input(2) : Tensor();
  node.set_output(0, gemm(node.output_name(0), node.input(0), node.input(1), c, attrs));
}

void convert_batch_norm(OnnxNode& node) {
  require_float(node, 0);
  node.require_attr_int("training_mode", 0, "ingot imports inference graphs");
  node.require_outputs_at_most(1, "(running statistics of training mode) is not supported");
  double epsilon = node.attr_float("epsilon", 1e-5);
  node.attr_float("momentum", 0.9);  // only used in training mode
  for (size_t i = 1; i < 5; ++i)
    if (node.input_dtype(i) != node.input_dtype(0))
      node.unsupported("mixed input types (opset 15's T1/T2) are not supported");
  node.set_output(0, batch_norm(node.output_name(0), node.input(0), node.input(1), node.input(2), node.input(3),
                                node.input(4), epsilon));
}

void convert_layer_norm(OnnxNode& node) {
  require_float(node, 0);
  node.require_attr_int("stash_type", 1, "statistics are computed in the input's type");
  int64_t axis = node.attr_int("axis", -1);
  double epsilon = node.attr_float("epsilon", 1e-5);
  Tensor bias = node.has_input(2) ? node.input(2) : Tensor();
  Tensor scale = node.input(1), x = node.input(0);
  int64_t rank = int64_t(x->shape.size());
  int64_t a = normalize_axis("LayerNormalization", node.output_name(0), axis, rank);
  std::vector<int64_t> normalized(x->shape.begin() + a, x->shape.end());
  if (!node.has_output(1) && !node.has_output(2)) {
    // ONNX lets scale and bias broadcast to the normalized shape; ops/ wants them exactly that shape.
    if (scale->shape != normalized) scale = expand(node.temp_name("_scale"), scale, normalized);
    if (bias && bias->shape != normalized) bias = expand(node.temp_name("_bias"), bias, normalized);
    return node.set_output(0, layer_norm(node.output_name(0), x, scale, bias, axis, epsilon));
  }
  // Mean and InvStdDev requested: the statistics are outputs of their own, shaped [x.shape[:axis], 1, ...].
  std::vector<int64_t> axes;
  for (int64_t d = a; d < rank; ++d) axes.push_back(d);
  Tensor mean = reduce_mean(node.has_output(1) ? node.output_name(1) : node.temp_name("_mu"), x, axes, true);
  Tensor centered = sub(node.temp_name("_centered"), x, mean);
  Tensor square = unary_map(node.temp_name("_square"), centered, [](const Expr& v) { return v * v; });
  Tensor var = reduce_mean(node.temp_name("_variance"), square, axes, true);
  Tensor inv_std = unary_map(node.has_output(2) ? node.output_name(2) : node.temp_name("_invstd"), var,
                             [&](const Expr& v) { return math::rsqrt(v + epsilon); });
  Tensor y = mul(node.temp_name("_normalized"), centered, inv_std);
  y = mul(bias ? node.temp_name("_scaled") : node.output_name(0), y, scale);
  if (bias) y = add(node.output_name(0), y, bias);
  node.set_output(0, y);
  node.set_output(1, mean);
  node.set_output(2, inv_std);
}

// ArgMax / ArgMin: the max (min) along the axis, then the first (or last) index holding it, as an int64
// min (max) reduction over select(x == extreme, k, sentinel).
void convert_arg_extreme(OnnxNode& node, bool is_max) {
  Tensor x = node.input(0);
  const int64_t rank = int64_t(x->shape.size());
  int64_t a = normalize_axis(node.op_type(), node.output_name(0), node.attr_int("axis", 0), rank);
  bool keepdims = node.attr_int("keepdims", 1) != 0, last = node.attr_int("select_last_index", 0) != 0;
  const int64_t dim = x->shape[size_t(a)];
  Tensor extreme = is_max ? reduce_max(node.temp_name("_extreme"), x, {a}, true)
                          : reduce_min(node.temp_name("_extreme"), x, {a}, true);
  std::vector<int64_t> shape;
  for (int64_t d = 0; d < rank; ++d)
    if (d != a || keepdims) shape.push_back(d == a ? 1 : x->shape[size_t(d)]);
  IterVar k = reduce_axis(dim, "k");
  node.set_output(0, compute(node.output_name(0), shape, [&](const std::vector<Expr>& i) {
                    std::vector<Expr> at, stat;
                    size_t next = 0;
                    for (int64_t d = 0; d < rank; ++d) {
                      if (d == a) {
                        at.push_back(k.var);
                        stat.push_back(int64_t(0));
                        if (keepdims) ++next;
                      } else {
                        at.push_back(i[next]);
                        stat.push_back(i[next]);
                        ++next;
                      }
                    }
                    Expr hit = eq(read(x, at), read(extreme, stat));
                    if (last) return max_reduce(select(hit, k.var, Expr(int64_t(-1))), {k});
                    return min_reduce(select(hit, k.var, Expr(dim)), {k});
                  }));
}

// y = scale[c] * (x - mean) / sqrt(var + epsilon) + bias[c], statistics over the spatial axes of each (n, c).
void convert_instance_norm(OnnxNode& node) {
  require_float(node, 0);
  double epsilon = node.attr_float("epsilon", 1e-5);
  Tensor x = node.input(0), scale = node.input(1), bias = node.input(2);
  const int64_t rank = int64_t(x->shape.size());
  if (rank < 3) node.fail("input must have rank >= 3");
  std::vector<int64_t> axes;
  for (int64_t d = 2; d < rank; ++d) axes.push_back(d);
  Tensor mean = reduce_mean(node.temp_name("_mean"), x, axes, true);
  Tensor centered = sub(node.temp_name("_centered"), x, mean);
  Tensor square = unary_map(node.temp_name("_square"), centered, [](const Expr& v) { return v * v; });
  Tensor var = reduce_mean(node.temp_name("_var"), square, axes, true);
  node.set_output(0, compute(node.output_name(0), x->shape, [&](const std::vector<Expr>& i) {
                    std::vector<Expr> stat(i.begin(), i.begin() + 2);
                    for (int64_t d = 2; d < rank; ++d) stat.push_back(int64_t(0));
                    return read(centered, i) * math::rsqrt(read(var, stat) + epsilon) * scale(i[1]) + bias(i[1]);
                  }));
}

// Softmax and LogSoftmax: one axis from opset 13, before that every axis from `axis` on (default 1).
void convert_softmax(OnnxNode& node, bool log) {
  require_float(node, 0);
  Tensor x = node.input(0);
  const int64_t rank = int64_t(x->shape.size());
  if (node.opset() >= 13) {
    int64_t axis = node.attr_int("axis", -1);
    return node.set_output(0, log ? log_softmax(node.output_name(0), x, axis) : softmax(node.output_name(0), x, axis));
  }
  int64_t axis = normalize_axis(node.op_type(), node.output_name(0), node.attr_int("axis", 1), rank);
  if (!log) {
    std::vector<int64_t> axes;
    for (int64_t d = axis; d < rank; ++d) axes.push_back(d);
    return node.set_output(0, softmax_over_axes(node.output_name(0), x, axes));
  }
  Tensor flat = flatten(node.temp_name("_flat"), x, axis);
  Tensor y = log_softmax(node.temp_name("_2d"), flat, 1);
  node.set_output(0, reshape(node.output_name(0), y, x->shape));
}

enum class ReduceKind { kSum, kMean, kMax, kMin, kSumSquare, kL1, kL2, kLogSum, kLogSumExp };

void convert_reduce(OnnxNode& node, ReduceKind kind) {
  // ReduceSum takes axes as an input from opset 13; the others only from opset 18.
  bool axes_from_input = node.op_type() == "ReduceSum" && node.opset() >= 13;
  std::vector<int64_t> axes;
  if (axes_from_input) {
    if (node.has_input(1)) axes = node.constant_ints(1, "axes");
  } else {
    axes = node.attr_ints("axes");
  }
  bool keepdims = node.attr_int("keepdims", 1) != 0;
  if (axes_from_input && axes.empty() && node.attr_int("noop_with_empty_axes", 0) != 0) return node.alias_output(0, 0);
  Tensor x = node.input(0);
  if (kind != ReduceKind::kMax && kind != ReduceKind::kMin && !is_float(x->dtype) && kind != ReduceKind::kSum)
    node.unsupported("integer inputs are supported by ReduceSum, ReduceMax and ReduceMin only");
  const std::string out = node.output_name(0);
  auto pre = [&](const std::function<Expr(const Expr&)>& fn) { return unary_map(node.temp_name("_src"), x, fn); };
  auto post = [&](const Tensor& t, const std::function<Expr(const Expr&)>& fn) { return unary_map(out, t, fn); };
  switch (kind) {
    case ReduceKind::kSum: return node.set_output(0, reduce_sum(out, x, axes, keepdims));
    case ReduceKind::kMean: return node.set_output(0, reduce_mean(out, x, axes, keepdims));
    case ReduceKind::kMax: return node.set_output(0, reduce_max(out, x, axes, keepdims));
    case ReduceKind::kMin: return node.set_output(0, reduce_min(out, x, axes, keepdims));
    case ReduceKind::kSumSquare:
      return node.set_output(0, reduce_sum(out, pre([](const Expr& v) { return v * v; }), axes, keepdims));
    case ReduceKind::kL1:
      return node.set_output(0, reduce_sum(out, pre([](const Expr& v) { return math::abs(v); }), axes, keepdims));
    case ReduceKind::kL2: {
      Tensor s = reduce_sum(node.temp_name("_sumsq"), pre([](const Expr& v) { return v * v; }), axes, keepdims);
      return node.set_output(0, post(s, [](const Expr& v) { return math::sqrt(v); }));
    }
    case ReduceKind::kLogSum: {
      Tensor s = reduce_sum(node.temp_name("_total"), x, axes, keepdims);
      return node.set_output(0, post(s, [](const Expr& v) { return math::log(v); }));
    }
    case ReduceKind::kLogSumExp: {
      // log(sum(exp(x - max))) + max keeps exp from overflowing.
      Tensor m = reduce_max(node.temp_name("_peak"), x, axes, true);
      Tensor shifted = sub(node.temp_name("_shifted"), x, m);
      Tensor s = reduce_sum(node.temp_name("_total"),
                            unary_map(node.temp_name("_e"), shifted, [](const Expr& v) { return math::exp(v); }), axes,
                            keepdims);
      Tensor peak = keepdims ? m : reduce_max(node.temp_name("_peak2"), x, axes, false);
      return node.set_output(
          0, broadcast_map(out, s, peak, [](const Expr& a, const Expr& b) { return math::log(a) + b; }));
    }
  }
}

}  // namespace

void add_onnx_nn_converters(OnnxConverterMap& m) {
  m["MatMul"] = convert_matmul;
  m["Gemm"] = convert_gemm;
  m["Conv"] = convert_conv;
  m["ConvTranspose"] = convert_conv_transpose;
  m["MaxPool"] = [](OnnxNode& node) { convert_pool(node, true); };
  m["AveragePool"] = [](OnnxNode& node) { convert_pool(node, false); };
  m["GlobalAveragePool"] = [](OnnxNode& node) { convert_global_pool(node, false); };
  m["GlobalMaxPool"] = [](OnnxNode& node) { convert_global_pool(node, true); };
  m["BatchNormalization"] = convert_batch_norm;
  m["LayerNormalization"] = convert_layer_norm;
  m["InstanceNormalization"] = convert_instance_norm;
  m["ArgMax"] = [](OnnxNode& node) { convert_arg_extreme(node, true); };
  m["ArgMin"] = [](OnnxNode& node) { convert_arg_extreme(node, false); };
  m["Softmax"] = [](OnnxNode& node) { convert_softmax(node, false); };
  m["LogSoftmax"] = [](OnnxNode& node) { convert_softmax(node, true); };
  const std::pair<const char*, ReduceKind> reductions[] = {{"ReduceSum", ReduceKind::kSum},
                                                           {"ReduceMean", ReduceKind::kMean},
                                                           {"ReduceMax", ReduceKind::kMax},
                                                           {"ReduceMin", ReduceKind::kMin},
                                                           {"ReduceSumSquare", ReduceKind::kSumSquare},
                                                           {"ReduceL1", ReduceKind::kL1},
                                                           {"ReduceL2", ReduceKind::kL2},
                                                           {"ReduceLogSum", ReduceKind::kLogSum},
                                                           {"ReduceLogSumExp", ReduceKind::kLogSumExp}};
  for (const auto& [name, kind] : reductions) m[name] = [kind = kind](OnnxNode& node) { convert_reduce(node, kind); };
}

}  // namespace ingot
