#include "workloads/model_weights.h"

#include <cmath>

#include "ops/conv.h"
#include "ops/linear.h"
#include "ops/norm.h"

namespace ingot {

ValueRange fan_in_range(int64_t fan_in) {
  const double bound = 1.0 / std::sqrt(double(fan_in));
  return {-bound, bound};
}

Tensor ModelWeights::placeholder(const std::string& name, std::vector<int64_t> shape, ValueRange range) {
  names_.push_back(name);
  ranges_[name] = range;
  return ingot::placeholder(name, std::move(shape));
}

Tensor ModelWeights::linear(const std::string& name, const std::string& weights, const Tensor& x, int64_t out,
                            bool bias) {
  const int64_t in = x->shape.back();
  Tensor w = placeholder(weights + "_weight", {out, in}, fan_in_range(in));
  Tensor b = bias ? placeholder(weights + "_bias", {out}, fan_in_range(in)) : Tensor();
  return dense(name, x, w, b);
}

Tensor ModelWeights::layer_norm(const std::string& name, const Tensor& x, double epsilon) {
  const int64_t c = x->shape.back();
  Tensor gamma = placeholder(name + "_gamma", {c}, {0.9, 1.1});
  Tensor beta = placeholder(name + "_beta", {c}, {-0.1, 0.1});
  return ingot::layer_norm(name, x, gamma, beta, -1, epsilon);
}

Tensor ModelWeights::conv_bn(const std::string& name, const Tensor& x, int64_t out_channels, int64_t kernel,
                             int64_t stride, int64_t groups) {
  const int64_t in_channels = x->shape[1];
  Tensor w = placeholder(name + "_weight", {out_channels, in_channels / groups, kernel, kernel},
                         fan_in_range(in_channels / groups * kernel * kernel));
  Conv2dAttrs attrs;
  attrs.stride = {stride, stride};
  const int64_t pad = kernel / 2;
  attrs.padding = {pad, pad, pad, pad};
  attrs.groups = groups;
  Tensor y = conv2d(name, x, w, Tensor(), attrs);
  Tensor scale = placeholder(name + "_bn_scale", {out_channels}, {0.9, 1.1});
  Tensor shift = placeholder(name + "_bn_shift", {out_channels}, {-0.1, 0.1});
  return compute(name + "_bn", y->shape, [&](const std::vector<Expr>& i) { return y(i) * scale(i[1]) + shift(i[1]); });
}

}  // namespace ingot
