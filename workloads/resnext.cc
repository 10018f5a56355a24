#include "workloads/resnext.h"

#include <stdexcept>

#include "ops/elementwise.h"
#include "ops/pool.h"
#include "ops/reduce.h"
#include "workloads/model_weights.h"

namespace ingot {

namespace {

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
    x = resnext_conv_bn_relu(weights_, "stem_conv", "stem_relu", x, s.base, 7, 2, 1);
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
        Tensor y = resnext_conv_bn_relu(weights_, p + "conv1", p + "relu1", x, width, 1, 1, 1);
        y = resnext_conv_bn_relu(weights_, p + "conv2", p + "relu2", y, width, 3, stride, s.groups);
        y = weights_.conv_bn(p + "conv3", y, out, 1, 1, 1);
        Tensor shortcut = b == 0 ? weights_.conv_bn(p + "down", x, out, 1, stride, 1) : x;
        x = relu(p + "relu3", add(p + "add", y, shortcut));
      }
    }
    Tensor pooled = reduce_mean("avgpool", x, {2, 3}, /*keepdims=*/false);
    Tensor logits = weights_.linear("logits", "fc", pooled, s.classes);
    return Program({logits}, "resnext");
  }

  const ModelWeights& weights() const { return weights_; }

 private:
  const ResnextSizes s_;
  ModelWeights weights_;
};

}  // namespace

Tensor resnext_conv_bn_relu(ModelWeights& weights, const std::string& conv, const std::string& relu, const Tensor& x,
                            int64_t out_channels, int64_t kernel, int64_t stride, int64_t groups) {
  return ingot::relu(relu, weights.conv_bn(conv, x, out_channels, kernel, stride, groups));
}

Program resnext(const ResnextSizes& sizes) { return ResnextBuilder(sizes).build(); }

std::vector<std::string> resnext_weight_names(const ResnextSizes& sizes) {
  return weights_of<ResnextBuilder>(sizes).names();
}

InputRanges resnext_input_ranges(const ResnextSizes& sizes) { return weights_of<ResnextBuilder>(sizes).ranges(); }

}  // namespace ingot
