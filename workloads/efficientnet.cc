#include "workloads/efficientnet.h"

#include <algorithm>
#include <stdexcept>

#include "ops/elementwise.h"
#include "ops/reduce.h"
#include "workloads/model_weights.h"

namespace ingot {

namespace {

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
    x = silu("stem_silu", weights_.conv_bn("stem_conv", x, channels(kStemChannels), 3, 2, 1));

    for (size_t stage = 0; stage < std::size(kB0Stages); ++stage) {
      const StageConfig& c = kB0Stages[stage];
      const int64_t blocks = std::min(c.blocks, s.max_stage_layers);
      for (int64_t b = 0; b < blocks; ++b) {
        const std::string p = "s" + std::to_string(stage) + "b" + std::to_string(b) + "_";
        x = mbconv(p, x, c.expand_ratio, c.kernel, b == 0 ? c.stride : 1, channels(c.out_channels));
      }
    }

    x = silu("head_silu", weights_.conv_bn("head_conv", x, channels(kHeadChannels), 1, 1, 1));
    Tensor pooled = reduce_mean("avgpool", x, {2, 3}, /*keepdims=*/false);
    Tensor logits = weights_.linear("logits", "fc", pooled, s.classes);
    return Program({logits}, "efficientnet");
  }

  const ModelWeights& weights() const { return weights_; }

 private:
  int64_t channels(int64_t b0_channels) const { return (b0_channels + s_.channel_divisor - 1) / s_.channel_divisor; }

  Tensor mbconv(const std::string& p, const Tensor& input, int64_t expand_ratio, int64_t kernel, int64_t stride,
                int64_t out_channels) {
    const int64_t in_channels = input->shape[1], expanded = in_channels * expand_ratio;
    Tensor x = input;
    if (expand_ratio != 1) x = efficientnet_expansion(weights_, p, x, expanded);
    x = efficientnet_depthwise(weights_, p, x, kernel, stride);
    x = efficientnet_squeeze_excitation(weights_, p, x, std::max<int64_t>(1, in_channels / 4));
    Tensor y = weights_.conv_bn(p + "project", x, out_channels, 1, 1, 1);
    if (stride == 1 && in_channels == out_channels) y = add(p + "add", y, input);
    return y;
  }

  const EfficientnetSizes s_;
  ModelWeights weights_;
};

}  // namespace

Tensor efficientnet_depthwise(ModelWeights& weights, const std::string& prefix, const Tensor& x, int64_t kernel,
                              int64_t stride) {
  const int64_t channels = x->shape[1];
  return silu(prefix + "dw_silu", weights.conv_bn(prefix + "dw", x, channels, kernel, stride, channels));
}

Tensor efficientnet_expansion(ModelWeights& weights, const std::string& prefix, const Tensor& x, int64_t expanded) {
  return silu(prefix + "expand_silu", weights.conv_bn(prefix + "expand", x, expanded, 1, 1, 1));
}

Tensor efficientnet_squeeze_excitation(ModelWeights& weights, const std::string& prefix, const Tensor& x,
                                       int64_t squeezed) {
  // Per-channel gates from the globally pooled features.
  const int64_t channels = x->shape[1];
  Tensor pooled = reduce_mean(prefix + "se_pool", x, {2, 3}, /*keepdims=*/false);
  Tensor reduced = silu(prefix + "se_silu", weights.linear(prefix + "se_reduce", pooled, squeezed));
  Tensor gate = sigmoid(prefix + "se_gate", weights.linear(prefix + "se_expand", reduced, channels));
  return compute(prefix + "se_scale", x->shape, [&](const std::vector<Expr>& i) { return x(i) * gate(i[0], i[1]); });
}

Program efficientnet(const EfficientnetSizes& sizes) { return EfficientnetBuilder(sizes).build(); }

std::vector<std::string> efficientnet_weight_names(const EfficientnetSizes& sizes) {
  return weights_of<EfficientnetBuilder>(sizes).names();
}

InputRanges efficientnet_input_ranges(const EfficientnetSizes& sizes) {
  return weights_of<EfficientnetBuilder>(sizes).ranges();
}

}  // namespace ingot
