// Swin Transformer (torchvision swin_b layout: shifted windows, relative position bias, patch merging), batch 1,
// fp32, as tensor expressions built from ops/. Use it to build the Souffle paper's Swin-B at 224x224 or a smaller
// model of the same structure; the registry exposes it as "swin".
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "interp/interpreter.h"
#include "ir/program.h"
#include "workloads/model_weights.h"

namespace ingot {

struct SwinSizes {
  int64_t image = 224;                         // height and width of the input image
  int64_t patch = 4;                           // patch size of the embedding (a stride-`patch` convolution)
  int64_t window = 7;                          // attention window side; shifted blocks shift by window / 2
  int64_t embed = 128;                         // channels of stage 1, doubled by every patch merging
  std::array<int64_t, 4> depths{2, 2, 18, 2};  // transformer blocks per stage
  int64_t heads = 4;                           // attention heads of stage 1, doubled every stage
  int64_t mlp_ratio = 4;                       // hidden width of each block's MLP, in multiples of the channels
  int64_t classes = 1000;                      // outputs of the classifier
  // A size small enough for the interpreter in unit tests: windows of 2x2 over 16x16 .. 2x2 maps; the last
  // stage's map is one window, so it does not shift (as in torchvision).
  static SwinSizes small() { return SwinSizes{32, 2, 2, 16, {2, 2, 2, 2}, 2, 2, 10}; }
};

// torchvision's SwinTransformer (v1), inference form (dropout and stochastic depth are identities):
//   patch embedding: conv patch x patch / patch (3 -> embed, with bias) -> NHWC -> LayerNorm
//   stage s (channels C = embed * 2^s, heads = heads * 2^s, map R x R), block b:
//     x = x + reverse_shift(window_reverse(proj(attention(window_partition(shift(LayerNorm(x)))))))
//     x = x + fc2(GELU(fc1(LayerNorm(x))))
//   where odd blocks shift by window / 2 (torch.roll by -window/2, rolled back after) unless the map is a single
//   window, and attention per window and head is softmax(q k^T / sqrt(head_dim) + bias + mask) v, with
//     bias[head, i, j] = table[(ih - jh + window - 1) * (2 window - 1) + iw - jw + window - 1, head]: computed
//       from the per-block placeholder table[(2 window - 1)^2, heads] by indices made of i and j;
//     mask = -100 between tokens of different regions of the shifted map, else 0: a constant compute per stage.
//   patch merging after stages 0..2: concat of the 2x2 neighbours (x[0::2,0::2], x[1::2,0::2], x[0::2,1::2],
//     x[1::2,1::2]) -> LayerNorm(4C) -> Linear(4C, 2C, no bias)
//   head: LayerNorm -> mean over the map -> Linear(C, classes)
// Layer norms use epsilon 1e-5; GELU is the exact (erf) form.
//
// Placeholders: image[1, 3, image, image]; "patch_embed_weight", "patch_embed_bias", "patch_norm_{gamma,beta}";
// per block "s<s>b<b>_" + {"norm1_gamma", "norm1_beta", "qkv_weight", "qkv_bias", "rel_bias_table",
// "proj_weight", "proj_bias", "norm2_gamma", "norm2_beta", "fc1_weight", "fc1_bias", "fc2_weight", "fc2_bias"}
// (Linear weights [out, in]; qkv rows are q, k, v, each head-major); per merging "s<s>_merge_norm_{gamma,beta}",
// "s<s>_reduction_weight"; "norm_{gamma,beta}", "head_weight", "head_bias". Output "logits"[1, classes].
// Program name "swin". Throws std::invalid_argument when a size is not positive, a stage's map is not a
// multiple of the window (or odd before a merging), or the channels do not divide among the heads.
Program swin(const SwinSizes& sizes = {});

// The weight placeholders, in build order (what parameter counts add up).
std::vector<std::string> swin_weight_names(const SwinSizes& sizes);

// Weight ranges near PyTorch's initialisation: Linear and patch-embedding weights and biases +-1/sqrt(fan_in);
// layer-norm gammas [0.9, 1.1) and betas [-0.1, 0.1); bias tables [-0.04, 0.04) (torchvision draws them from a
// normal of std 0.02). The image keeps [-1, 1).
InputRanges swin_input_ranges(const SwinSizes& sizes);

// The attention inside the windows of one block as the model builds it, and as the task workloads
// (workloads/tasks.h) cut it out. q, k, v: [windows * heads, window^2 tokens, head_dim], head-major within a window;
// mask: [windows, tokens, tokens] for a shifted block, else null. Computes `<prefix>scores` (q k^T),
// `<prefix>rel_bias` (the gather from the new weight `<prefix>rel_bias_table`, [heads, tokens, tokens]),
// `<prefix>attn_logits`, the softmax `<prefix>attn` and `<prefix>context` = probabilities times v [windows * heads,
// tokens, head_dim].
Tensor swin_window_attention(ModelWeights& weights, const std::string& prefix, const Tensor& q, const Tensor& k,
                             const Tensor& v, int64_t heads, int64_t window, const Tensor& mask);

}  // namespace ingot
