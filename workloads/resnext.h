// ResNeXt (torchvision resnext101_64x4d layout), batch 1, fp32, as tensor expressions built from ops/. Use it to
// build the Souffle paper's ResNeXt-101 64x4d at 224x224 or a smaller model of the same structure; the registry
// exposes it as "resnext".
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "interp/interpreter.h"
#include "ir/program.h"
#include "workloads/model_weights.h"

namespace ingot {

struct ResnextSizes {
  int64_t image = 224;                         // height and width of the input image
  std::array<int64_t, 4> blocks{3, 4, 23, 3};  // bottleneck blocks per stage
  int64_t groups = 64;                         // groups of every 3x3 convolution (cardinality)
  int64_t width_per_group = 4;                 // channels per group in stage 1, doubled every stage
  int64_t base = 64;                           // stem channels; stage s outputs 4 * base * 2^s channels
  int64_t classes = 1000;                      // outputs of the classifier
  // A size small enough for the interpreter in unit tests.
  static ResnextSizes small() { return ResnextSizes{32, {1, 2, 1, 1}, 2, 2, 8, 10}; }
};

// torchvision's ResNet v1.5 bottleneck layout (stride on the 3x3 convolution):
//   stem: conv 7x7/2 (3 -> base) -> BN -> ReLU -> max pool 3x3/2
//   stage s (strides 1, 2, 2, 2), block b: width = width_per_group * 2^s * groups, out = 4 * base * 2^s;
//     conv 1x1 -> BN -> ReLU -> grouped conv 3x3/stride -> BN -> ReLU -> conv 1x1 -> BN, plus the shortcut
//     (conv 1x1/stride -> BN on the first block of a stage, else the identity), then ReLU
//   head: global average pool -> Linear(4 * base * 8, classes)
// Convolutions have no bias. Batch norm is in folded inference form: one element-wise TE per BN computing
// x * scale[c] + shift[c], where scale = gamma / sqrt(var + eps) and shift = beta - mean * scale were folded
// offline. Its two per-channel placeholders stand for gamma and beta, so the parameter count is torchvision's
// (running statistics are buffers, not parameters), and random weights are always a valid BN.
//
// Placeholders: image[1, 3, image, image]; for each convolution <c> of "stem_conv" and
// "s<s>b<b>_{conv1,conv2,conv3,down}" (s, b from 0): "<c>_weight", "<c>_bn_scale", "<c>_bn_shift"; then
// "fc_weight"[classes, C], "fc_bias". Output "logits"[1, classes]. Program name "resnext".
// Throws std::invalid_argument when a size is not positive (padding keeps any image size valid).
Program resnext(const ResnextSizes& sizes = {});

// The weight placeholders, in build order (what parameter counts add up).
std::vector<std::string> resnext_weight_names(const ResnextSizes& sizes);

// Weight ranges near PyTorch's initialisation: convolution and Linear weights (and the Linear bias) uniform in
// +-1/sqrt(fan_in); BN scales in [0.9, 1.1) and shifts in [-0.1, 0.1) (fresh BN: gamma 1, beta 0, unit variance).
// The image keeps [-1, 1). With every weight in [-1, 1) activations grow by about sqrt(fan_in / 3) per layer.
InputRanges resnext_input_ranges(const ResnextSizes& sizes);

// A convolution of the stem or of a bottleneck's first two layers as the model builds it, and as the task
// workloads (workloads/tasks.h) cut it out: computes `<conv>` (conv2d without bias, padding kernel / 2), `<conv>_bn`
// (folded batch norm) and `<relu>`; weights as ModelWeights::conv_bn names them.
Tensor resnext_conv_bn_relu(ModelWeights& weights, const std::string& conv, const std::string& relu, const Tensor& x,
                            int64_t out_channels, int64_t kernel, int64_t stride, int64_t groups);

}  // namespace ingot
