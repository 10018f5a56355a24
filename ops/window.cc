#include "ops/window.h"

#include "ops/op_conventions.h"

namespace ingot {

namespace {

using Axes = std::vector<Expr>;

}  // namespace

Tensor roll(const std::string& name, const Tensor& x, const std::vector<int64_t>& shifts,
            const std::vector<int64_t>& axes) {
  if (!x) throw_op_error("roll", name, "input is a null tensor");
  if (shifts.size() != axes.size())
    throw_op_error(
        "roll", name,
        "shifts " + shape_to_string(shifts) + " and axes " + shape_to_string(axes) + " must have equal lengths");
  const int64_t rank = int64_t(x->shape.size());
  std::vector<int64_t> shift(size_t(rank), 0);  // per axis, in [0, dim); repeated axes add up as in torch.roll
  for (size_t n = 0; n < axes.size(); ++n) {
    const int64_t d = normalize_axis("roll", name, axes[n], rank), dim = x->shape[size_t(d)];
    shift[size_t(d)] = ((shift[size_t(d)] + shifts[n]) % dim + dim) % dim;
  }
  return compute(name, x->shape, [&](const Axes& i) {
    std::vector<Expr> idx = i;
    for (size_t d = 0; d < size_t(rank); ++d)
      if (shift[d]) idx[d] = (i[d] + (x->shape[d] - shift[d])) % x->shape[d];
    return x(idx);
  });
}

Tensor window_partition(const std::string& name, const Tensor& x, int64_t window) {
  if (!x) throw_op_error("window_partition", name, "input is a null tensor");
  if (x->shape.size() != 4)
    throw_op_error("window_partition", name, "input " + shape_to_string(x->shape) + " must be 4-D [B, H, W, C]");
  if (window <= 0 || x->shape[1] % window != 0 || x->shape[2] % window != 0)
    throw_op_error("window_partition", name,
                   "input " + shape_to_string(x->shape) + " height and width must be multiples of window " +
                       std::to_string(window));
  const int64_t nh = x->shape[1] / window, nw = x->shape[2] / window;
  return compute(name, {x->shape[0] * nh * nw, window, window, x->shape[3]}, [&](const Axes& i) {
    const Expr& w = i[0];
    return x(w / (nh * nw), w / nw % nh * window + i[1], w % nw * window + i[2], i[3]);
  });
}

Tensor window_reverse(const std::string& name, const Tensor& windows, int64_t window, int64_t height, int64_t width) {
  if (!windows) throw_op_error("window_reverse", name, "input is a null tensor");
  const auto& s = windows->shape;
  if (window <= 0 || height <= 0 || width <= 0 || height % window != 0 || width % window != 0)
    throw_op_error("window_reverse", name,
                   "height " + std::to_string(height) + " and width " + std::to_string(width) +
                       " must be positive multiples of window " + std::to_string(window));
  const int64_t nh = height / window, nw = width / window;
  if (s.size() != 4 || s[1] != window || s[2] != window || s[0] % (nh * nw) != 0)
    throw_op_error("window_reverse", name,
                   "windows " + shape_to_string(s) + " must be [B * " + std::to_string(nh * nw) + ", " +
                       std::to_string(window) + ", " + std::to_string(window) + ", C] for a " + std::to_string(height) +
                       "x" + std::to_string(width) + " map");
  return compute(name, {s[0] / (nh * nw), height, width, s[3]}, [&](const Axes& i) {
    return windows(i[0] * (nh * nw) + i[1] / window * nw + i[2] / window, i[1] % window, i[2] % window, i[3]);
  });
}

}  // namespace ingot
