#include "workloads/efficientnet.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "ops/conv.h"
#include "ops/elementwise.h"
#include "ops/linear.h"
#include "ops/reduce.h"

namespace ingot {

namespace {

// PyTorch's default initialisation bound of a layer's weights and bias.
ValueRange fan_in_range(int64_t fan_in) {
  const double bound = 1.0 / std::sqrt(double(fan_in));
  return {-bound, bound};
}

struct StageConfig {
  int64_t expand_ratio, kernel, stride, out_channels, blocks;
};
// torchvision's efficientnet_b0 (width and depth multipliers 1.0).
constexpr StageConfig kB0Stages[] = {{1, 3, 1, 16, 1},  {6, 3, 2, 24, 2},  {6, 5, 2, 40, 2}, {6, 3, 2, 80, 3},
                                     {6, 5, 1, 112, 3}, {6, 5, 2, 192, 4}, {6, 3, 1, 320, 1}};
constexpr int64_t kStemChannels = 32, kHeadChannels = 1280;

// Builds the network and records each weight placeholder as it is created, so the names always match the
// program.
class EfficientnetBuilder {
 public:
  explicit EfficientnetBuilder(const EfficientnetSizes& s) : s_(s) {}

  Program build() {
    const EfficientnetSizes& s = s_;
    if (s.image <= 0 || s.classes <= 0 || s.channel_divisor <= 0 || s.max_stage_layers <= 0)
      throw std::invalid_argument(
          "efficientnet: every size (image, classes, channel_divisor, max_stage_layers) must be positive");
    Tensor x = placeholder("image", {1, 3, s.image, s.image});
    x = silu("stem_silu", conv_bn("stem_conv", x, channels(kStemChannels), 3, 2, 1));

    for (size_t stage = 0; stage < std::size(kB0Stages); ++stage) {
      const StageConfig& c = kB0Stages[stage];
      const int64_t blocks = std::min(c.blocks, s.max_stage_layers);
      for (int64_t b = 0; b < blocks; ++b) {
        const std::string p = "s" + std::to_string(stage) + "b" + std::to_string(b) + "_";
        x = mbconv(p, x, c.expand_ratio, c.kernel, b == 0 ? c.stride : 1, channels(c.out_channels));
      }
    }

    x = silu("head_silu", conv_bn("head_conv", x, channels(kHeadChannels), 1, 1, 1));
    Tensor pooled = reduce_mean("avgpool", x, {2, 3}, /*keepdims=*/false);
    Tensor logits =
        dense("logits", pooled, weight("fc_weight", {s.classes, pooled->shape[1]}, fan_in_range(pooled->shape[1])),
              weight("fc_bias", {s.classes}, fan_in_range(pooled->shape[1])));
    return Program({logits}, "efficientnet");
  }

  const std::vector<std::string>& weight_names() const { return weight_names_; }
  const InputRanges& input_ranges() const { return ranges_; }

 private:
  int64_t channels(int64_t b0_channels) const { return (b0_channels + s_.channel_divisor - 1) / s_.channel_divisor; }

  Tensor weight(const std::string& name, std::vector<int64_t> shape, ValueRange range) {
    weight_names_.push_back(name);
    ranges_[name] = range;
    return placeholder(name, std::move(shape));
  }

  Tensor mbconv(const std::string& p, const Tensor& input, int64_t expand_ratio, int64_t kernel, int64_t stride,
                int64_t out_channels) {
    const int64_t in_channels = input->shape[1], expanded = in_channels * expand_ratio;
    Tensor x = input;
    if (expand_ratio != 1) x = silu(p + "expand_silu", conv_bn(p + "expand", x, expanded, 1, 1, 1));
    x = silu(p + "dw_silu", conv_bn(p + "dw", x, expanded, kernel, stride, expanded));

    // Squeeze-and-excitation: per-channel gates from the globally pooled features.
    const int64_t squeezed = std::max<int64_t>(1, in_channels / 4);
    Tensor pooled = reduce_mean(p + "se_pool", x, {2, 3}, /*keepdims=*/false);
    Tensor reduced =
        silu(p + "se_silu", dense(p + "se_reduce", pooled,
                                  weight(p + "se_reduce_weight", {squeezed, expanded}, fan_in_range(expanded)),
                                  weight(p + "se_reduce_bias", {squeezed}, fan_in_range(expanded))));
    Tensor gate =
        sigmoid(p + "se_gate", dense(p + "se_expand", reduced,
                                     weight(p + "se_expand_weight", {expanded, squeezed}, fan_in_range(squeezed)),
                                     weight(p + "se_expand_bias", {expanded}, fan_in_range(squeezed))));
    Tensor features = x;
    x = compute(p + "se_scale", features->shape,
                [&](const std::vector<Expr>& i) { return features(i) * gate(i[0], i[1]); });

    Tensor y = conv_bn(p + "project", x, out_channels, 1, 1, 1);
    if (stride == 1 && in_channels == out_channels) y = add(p + "add", y, input);
    return y;
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

  const EfficientnetSizes s_;
  std::vector<std::string> weight_names_;
  InputRanges ranges_;
};

}  // namespace

Program efficientnet(const EfficientnetSizes& sizes) { return EfficientnetBuilder(sizes).build(); }

std::vector<std::string> efficientnet_weight_names(const EfficientnetSizes& sizes) {
  EfficientnetBuilder builder(sizes);
  builder.build();
  return builder.weight_names();
}

InputRanges efficientnet_input_ranges(const EfficientnetSizes& sizes) {
  EfficientnetBuilder builder(sizes);
  builder.build();
  return builder.input_ranges();
}

}  // namespace ingot
