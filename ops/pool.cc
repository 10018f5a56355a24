#include "ops/pool.h"

#include <vector>

#include "ops/conv.h"
#include "ops/op_conventions.h"

namespace ingot {

namespace {

using Axes = std::vector<Expr>;

struct PoolGeometry {
  int64_t out_h = 0, out_w = 0;
};

PoolGeometry check_pool(const char* op, const std::string& name, const Tensor& x, const Pool2dAttrs& a) {
  if (!x) throw_op_error(op, name, "input is a null tensor");
  if (x->shape.size() != 4) throw_op_error(op, name, "input " + shape_to_string(x->shape) + " must be 4-D NCHW");
  for (int d = 0; d < 2; ++d)
    if (a.kernel[d] <= 0 || a.stride[d] <= 0 || a.dilation[d] <= 0)
      throw_op_error(op, name,
                     "kernel {" + std::to_string(a.kernel[0]) + "," + std::to_string(a.kernel[1]) + "}, stride {" +
                         std::to_string(a.stride[0]) + "," + std::to_string(a.stride[1]) + "} and dilation {" +
                         std::to_string(a.dilation[0]) + "," + std::to_string(a.dilation[1]) + "} must be positive");
  for (int d = 0; d < 4; ++d)
    if (a.padding[d] < 0) throw_op_error(op, name, "padding must be non-negative");
  // ONNX and PyTorch: padding larger than the (dilated) window would give windows of padding only.
  for (int d = 0; d < 2; ++d)
    if (a.padding[d] >= (a.kernel[d] - 1) * a.dilation[d] + 1 ||
        a.padding[d + 2] >= (a.kernel[d] - 1) * a.dilation[d] + 1)
      throw_op_error(op, name,
                     "padding {" + std::to_string(a.padding[0]) + "," + std::to_string(a.padding[1]) + "," +
                         std::to_string(a.padding[2]) + "," + std::to_string(a.padding[3]) +
                         "} must be smaller than the kernel {" + std::to_string(a.kernel[0]) + "," +
                         std::to_string(a.kernel[1]) + "}");
  PoolGeometry g;
  g.out_h =
      window_output_size(x->shape[2], a.padding[0], a.padding[2], a.kernel[0], a.stride[0], a.dilation[0], a.ceil_mode);
  g.out_w =
      window_output_size(x->shape[3], a.padding[1], a.padding[3], a.kernel[1], a.stride[1], a.dilation[1], a.ceil_mode);
  if (g.out_h <= 0 || g.out_w <= 0)
    throw_op_error(op, name,
                   "kernel {" + std::to_string(a.kernel[0]) + "," + std::to_string(a.kernel[1]) +
                       "} does not fit input " + shape_to_string(x->shape) + ": the output would be empty");
  return g;
}

// The window's read of x, guarded (fill outside the input) when the window can leave it: with padding, or with
// ceil_mode, whose last window can run past the end.
Expr window_read(const Tensor& x, const Axes& i, const Expr& ry, const Expr& rx, const Pool2dAttrs& a,
                 const PoolGeometry& g, const Expr& fill) {
  Expr h = i[2] * a.stride[0] + ry * a.dilation[0] - a.padding[0];
  Expr w = i[3] * a.stride[1] + rx * a.dilation[1] - a.padding[1];
  Expr inside;
  auto require = [&](const Expr& cond) { inside = inside ? logical_and(inside, cond) : cond; };
  const int64_t last_h = (g.out_h - 1) * a.stride[0] + (a.kernel[0] - 1) * a.dilation[0] - a.padding[0];
  const int64_t last_w = (g.out_w - 1) * a.stride[1] + (a.kernel[1] - 1) * a.dilation[1] - a.padding[1];
  if (a.padding[0] > 0) require(ge(h, int64_t(0)));
  if (last_h >= x->shape[2]) require(lt(h, x->shape[2]));
  if (a.padding[1] > 0) require(ge(w, int64_t(0)));
  if (last_w >= x->shape[3]) require(lt(w, x->shape[3]));
  Expr value = x(i[0], i[1], h, w);
  return inside ? select(inside, value, fill) : value;
}

// Number of r in [0, kernel) with 0 <= start + r * dilation < limit (start may be negative): the window's
// positions that count, as an index expression of the output position.
Expr count_in_range(const Expr& start, int64_t kernel, int64_t dilation, int64_t limit) {
  // First r: ceil(-start / dilation) = -floor(start / dilation); last r: floor((limit - 1 - start) / dilation).
  Expr first = maximum(-(start / dilation), int64_t(0));
  Expr last = minimum((Expr(limit - 1) - start) / dilation, kernel - 1);
  return maximum(last - first + 1, int64_t(0));
}

}  // namespace

Tensor max_pool2d(const std::string& name, const Tensor& x, const Pool2dAttrs& attrs) {
  PoolGeometry g = check_pool("max_pool2d", name, x, attrs);
  IterVar ry = reduce_axis(attrs.kernel[0], "ry"), rx = reduce_axis(attrs.kernel[1], "rx");
  const Expr lowest = identity_element(ReduceOp::kMax, x->dtype);
  return compute(name, {x->shape[0], x->shape[1], g.out_h, g.out_w}, [&](const Axes& i) {
    return max_reduce(window_read(x, i, ry.var, rx.var, attrs, g, lowest), {ry, rx});
  });
}

Tensor avg_pool2d(const std::string& name, const Tensor& x, const Pool2dAttrs& attrs) {
  PoolGeometry g = check_pool("avg_pool2d", name, x, attrs);
  if (!is_float(x->dtype)) throw_op_error("avg_pool2d", name, "input must be floating-point");
  const auto& a = attrs;
  const int64_t H = x->shape[2], W = x->shape[3];
  const std::vector<int64_t> shape{x->shape[0], x->shape[1], g.out_h, g.out_w};
  IterVar ry = reduce_axis(a.kernel[0], "ry"), rx = reduce_axis(a.kernel[1], "rx");
  const Expr zero = float_imm(0.0, x->dtype);

  // Every window holds kernel_h * kernel_w counted positions when none leaves the input (or, counting padding,
  // none leaves the padded input): then 1/count folds into the sum and the op is one TE.
  const int64_t last_h = (g.out_h - 1) * a.stride[0] + (a.kernel[0] - 1) * a.dilation[0];
  const int64_t last_w = (g.out_w - 1) * a.stride[1] + (a.kernel[1] - 1) * a.dilation[1];
  const bool fits_padded = last_h < H + a.padding[0] + a.padding[2] && last_w < W + a.padding[1] + a.padding[3];
  const bool no_padding = a.padding == std::array<int64_t, 4>{0, 0, 0, 0};
  if (fits_padded && (no_padding || a.count_include_pad)) {
    const double scale = 1.0 / double(a.kernel[0] * a.kernel[1]);
    return compute(name, shape, [&](const Axes& i) {
      return sum(window_read(x, i, ry.var, rx.var, a, g, zero) * scale, {ry, rx});
    });
  }
  Tensor total = compute(name + "_sum", shape, [&](const Axes& i) {
    return sum(window_read(x, i, ry.var, rx.var, a, g, zero), {ry, rx});
  });
  return compute(name, shape, [&](const Axes& i) {
    Expr start_h = i[2] * a.stride[0] - a.padding[0], start_w = i[3] * a.stride[1] - a.padding[1];
    Expr count;
    if (a.count_include_pad) {
      // Positions in the padded input [-pad_begin, size + pad_end).
      count = count_in_range(start_h + a.padding[0], a.kernel[0], a.dilation[0], H + a.padding[0] + a.padding[2]) *
              count_in_range(start_w + a.padding[1], a.kernel[1], a.dilation[1], W + a.padding[1] + a.padding[3]);
    } else {
      count = count_in_range(start_h, a.kernel[0], a.dilation[0], H) *
              count_in_range(start_w, a.kernel[1], a.dilation[1], W);
    }
    return total(i) / cast(x->dtype, count);
  });
}

Tensor global_avg_pool2d(const std::string& name, const Tensor& x) {
  if (!x) throw_op_error("global_avg_pool2d", name, "input is a null tensor");
  if (x->shape.size() != 4)
    throw_op_error("global_avg_pool2d", name, "input " + shape_to_string(x->shape) + " must be 4-D NCHW");
  if (!is_float(x->dtype)) throw_op_error("global_avg_pool2d", name, "input must be floating-point");
  IterVar ry = reduce_axis(x->shape[2], "ry"), rx = reduce_axis(x->shape[3], "rx");
  const double scale = 1.0 / double(x->shape[2] * x->shape[3]);
  return compute(name, {x->shape[0], x->shape[1], 1, 1}, [&](const Axes& i) {
    return sum(x(i[0], i[1], ry.var, rx.var) * scale, {ry, rx});
  });
}

Tensor global_max_pool2d(const std::string& name, const Tensor& x) {
  if (!x) throw_op_error("global_max_pool2d", name, "input is a null tensor");
  if (x->shape.size() != 4)
    throw_op_error("global_max_pool2d", name, "input " + shape_to_string(x->shape) + " must be 4-D NCHW");
  IterVar ry = reduce_axis(x->shape[2], "ry"), rx = reduce_axis(x->shape[3], "rx");
  return compute(name, {x->shape[0], x->shape[1], 1, 1}, [&](const Axes& i) {
    return max_reduce(x(i[0], i[1], ry.var, rx.var), {ry, rx});
  });
}

}  // namespace ingot
