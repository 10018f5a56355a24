// EfficientNet-B0 (torchvision efficientnet_b0 layout), batch 1, fp32, as tensor expressions built from ops/. Use
// it to build the Souffle paper's EfficientNet at 224x224 or a smaller model of the same structure; the registry
// exposes it as "efficientnet".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "interp/interpreter.h"
#include "ir/program.h"
#include "workloads/model_weights.h"

namespace ingot {

struct EfficientnetSizes {
  int64_t image = 224;           // height and width of the input image
  int64_t classes = 1000;        // outputs of the classifier
  int64_t channel_divisor = 1;   // every B0 channel count is divided by this (rounded up)
  int64_t max_stage_layers = 4;  // each stage keeps at most this many MBConv blocks (B0 has at most 4)
  // A size small enough for the interpreter in unit tests.
  static EfficientnetSizes small() { return EfficientnetSizes{32, 10, 8, 1}; }
};

// torchvision efficientnet_b0, inference form (dropout and stochastic depth are identities):
//   stem: conv 3x3/2 (3 -> 32) -> BN -> SiLU
//   7 stages of MBConv blocks (expand ratio, kernel, stride, out channels, blocks):
//     (1,3,1,16,1) (6,3,2,24,2) (6,5,2,40,2) (6,3,2,80,3) (6,5,1,112,3) (6,5,2,192,4) (6,3,1,320,1)
//   MBConv (in -> out, expanded = in * ratio, stride on the first block of a stage only):
//     [expand conv 1x1 -> BN -> SiLU, when ratio > 1] -> depthwise conv kxk/stride (padding k/2) -> BN -> SiLU
//     -> squeeze-and-excitation (global average pool -> Linear(expanded, max(1, in / 4)) -> SiLU -> Linear back
//        -> sigmoid -> channel-wise scale) -> project conv 1x1 -> BN, plus the input when stride 1 and in == out
//   head: conv 1x1 (320 -> 1280) -> BN -> SiLU -> global average pool -> Linear(1280, classes)
// Convolutions have no bias; the SE layers (1x1 convolutions on a 1x1 map, written as dense) have one. Batch norm
// is in folded inference form, one element-wise TE x * scale[c] + shift[c] whose two per-channel placeholders
// stand for gamma and beta (torchvision's parameters; running statistics are buffers), as in workloads/resnext.h.
//
// Placeholders: image[1, 3, image, image]; for each convolution <c> of "stem_conv", "head_conv" and, per block,
// "s<s>b<b>_{expand,dw,project}" (s, b from 0): "<c>_weight", "<c>_bn_scale", "<c>_bn_shift"; per block
// "s<s>b<b>_se_{reduce,expand}_{weight,bias}"; "fc_weight"[classes, 1280], "fc_bias". Output "logits"[1, classes].
// Program name "efficientnet". Throws std::invalid_argument when a size is not positive (padding keeps any image
// size valid).
Program efficientnet(const EfficientnetSizes& sizes = {});

// The weight placeholders, in build order (what parameter counts add up).
std::vector<std::string> efficientnet_weight_names(const EfficientnetSizes& sizes);

// Weight ranges near PyTorch's initialisation, as resnext_input_ranges: weights and biases +-1/sqrt(fan_in), BN
// scales [0.9, 1.1) and shifts [-0.1, 0.1); the image keeps [-1, 1).
InputRanges efficientnet_input_ranges(const EfficientnetSizes& sizes);

// Two layers of an MBConv block as the model builds them, and as the task workloads (workloads/tasks.h) cut them
// out. The depthwise convolution of x [1, C, H, W]: kernel x kernel, stride, padding kernel / 2, groups C, then
// folded batch norm and SiLU; computes `<prefix>dw`, `<prefix>dw_bn`, `<prefix>dw_silu`.
Tensor efficientnet_depthwise(ModelWeights& weights, const std::string& prefix, const Tensor& x, int64_t kernel,
                              int64_t stride);
// The expansion of x [1, C, H, W] to `expanded` channels: a 1 x 1 convolution `<prefix>expand`, folded batch norm and
// SiLU `<prefix>expand_silu`.
Tensor efficientnet_expansion(ModelWeights& weights, const std::string& prefix, const Tensor& x, int64_t expanded);
// Squeeze-and-excitation of x [1, C, H, W] with `squeezed` hidden units: global average pool `<prefix>se_pool`,
// Linear(C, squeezed) `<prefix>se_reduce`, SiLU `<prefix>se_silu`, Linear(squeezed, C) `<prefix>se_expand`, sigmoid
// `<prefix>se_gate`, and x scaled per channel by the gate, `<prefix>se_scale` [1, C, H, W].
Tensor efficientnet_squeeze_excitation(ModelWeights& weights, const std::string& prefix, const Tensor& x,
                                       int64_t squeezed);

}  // namespace ingot
