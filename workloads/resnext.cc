#include "workloads/resnext.h"

#include <cmath>
#include <stdexcept>

#include "ops/conv.h"
#include "ops/elementwise.h"
#include "ops/linear.h"
#include "ops/pool.h"
#include "ops/reduce.h"

namespace ingot {

namespace {

// PyTorch's default initialisation bound of a layer's weights and bias.
ValueRange fan_in_range(int64_t fan_in) {
  const double bound = 1.0 / std::sqrt(double(fan_in));
  return {-bound, bound};
}

// Builds the network and records each weight placeholder as it is created, so the names always match the
// program.
class ResnextBuilder {
 public:
  explicit ResnextBuilder(const ResnextSizes& s) : s_(s) {}

  Program build() {
    const ResnextSizes& s = s_;
    if (s.image <= 0 || s.groups <= 0 || s.width_per_group <= 0 || s.base <= 0 || s.classes <= 0)
      throw std::invalid_argument(
          "resnext: every size (image, groups, width_per_group, base, classes) must be positive");
    for (int64_t n : s.blocks)
      if (n <= 0) throw std::invalid_argument("resnext: every stage needs at least one block");

    Tensor x = placeholder("image", {1, 3, s.image, s.image});
    x = conv_bn("stem_conv", x, s.base, 7, 2, 1);
    x = relu("stem_relu", x);
    Pool2dAttrs pool;
    pool.kernel = {3, 3};
    pool.stride = {2, 2};
    pool.padding = {1, 1, 1, 1};
    x = max_pool2d("stem_pool", x, pool);

    for (int64_t stage = 0; stage < 4; ++stage) {
      const int64_t width = (s.width_per_group << stage) * s.groups, out = 4 * (s.base << stage);
      for (int64_t b = 0; b < s.blocks[size_t(stage)]; ++b) {
        const std::string p = "s" + std::to_string(stage) + "b" + std::to_string(b) + "_";
        const int64_t stride = stage > 0 && b == 0 ? 2 : 1;
        Tensor y = relu(p + "relu1", conv_bn(p + "conv1", x, width, 1, 1, 1));
        y = relu(p + "relu2", conv_bn(p + "conv2", y, width, 3, stride, s.groups));
        y = conv_bn(p + "conv3", y, out, 1, 1, 1);
        Tensor shortcut = b == 0 ? conv_bn(p + "down", x, out, 1, stride, 1) : x;
        x = relu(p + "relu3", add(p + "add", y, shortcut));
      }
    }
    Tensor pooled = reduce_mean("avgpool", x, {2, 3}, /*keepdims=*/false);
    const int64_t features = pooled->shape[1];
    Tensor logits = dense("logits", pooled, weight("fc_weight", {s.classes, features}, fan_in_range(features)),
                          weight("fc_bias", {s.classes}, fan_in_range(features)));
    return Program({logits}, "resnext");
  }

  const std::vector<std::string>& weight_names() const { return weight_names_; }
  const InputRanges& input_ranges() const { return ranges_; }

 private:
  Tensor weight(const std::string& name, std::vector<int64_t> shape, ValueRange range) {
    weight_names_.push_back(name);
    ranges_[name] = range;
    return placeholder(name, std::move(shape));
  }

  // Convolution without bias (padding k / 2 keeps the size at stride 1) followed by folded batch norm.
  Tensor conv_bn(const std::string& name, const Tensor& x, int64_t out_channels, int64_t kernel, int64_t stride,
                 int64_t groups) {
    const int64_t in_channels = x->shape[1];
    Tensor w = weight(name + "_weight", {out_channels, in_channels / groups, kernel, kernel},
                      fan_in_range(in_channels / groups * kernel * kernel));
    Conv2dAttrs attrs;
    attrs.stride = {stride, stride};
    const int64_t pad = kernel / 2;
    attrs.padding = {pad, pad, pad, pad};
    attrs.groups = groups;
    Tensor y = conv2d(name, x, w, Tensor(), attrs);
    Tensor scale = weight(name + "_bn_scale", {out_channels}, {0.9, 1.1});
    Tensor shift = weight(name + "_bn_shift", {out_channels}, {-0.1, 0.1});
    return compute(name + "_bn", y->shape,
                   [&](const std::vector<Expr>& i) { return y(i) * scale(i[1]) + shift(i[1]); });
  }

  const ResnextSizes s_;
  std::vector<std::string> weight_names_;
  InputRanges ranges_;
};

}  // namespace

Program resnext(const ResnextSizes& sizes) { return ResnextBuilder(sizes).build(); }

std::vector<std::string> resnext_weight_names(const ResnextSizes& sizes) {
  ResnextBuilder builder(sizes);
  builder.build();
  return builder.weight_names();
}

InputRanges resnext_input_ranges(const ResnextSizes& sizes) {
  ResnextBuilder builder(sizes);
  builder.build();
  return builder.input_ranges();
}

}  // namespace ingot
