#include "workloads/swin.h"

#include <cmath>
#include <stdexcept>

#include "ops/conv.h"
#include "ops/elementwise.h"
#include "ops/layout.h"
#include "ops/linear.h"
#include "ops/reduce.h"
#include "ops/softmax.h"
#include "ops/window.h"
#include "workloads/model_weights.h"

namespace ingot {

namespace {

using Axes = std::vector<Expr>;

constexpr double kLayerNormEpsilon = 1e-5;

// Builds the network and records each weight placeholder as it is created, so the names always match the
// program.
class SwinBuilder {
 public:
  explicit SwinBuilder(const SwinSizes& s) : s_(s) {}

  Program build() {
    const SwinSizes& s = s_;
    check_sizes();
    Tensor image = placeholder("image", {1, 3, s.image, s.image});
    Conv2dAttrs patchify;
    patchify.stride = {s.patch, s.patch};
    const ValueRange patch_range = fan_in_range(3 * s.patch * s.patch);
    Tensor patch_weight = weights_.placeholder("patch_embed_weight", {s.embed, 3, s.patch, s.patch}, patch_range);
    Tensor patch_bias = weights_.placeholder("patch_embed_bias", {s.embed}, patch_range);
    Tensor x = conv2d("patch_embed", image, patch_weight, patch_bias, patchify);
    x = transpose("patch_embed_nhwc", x, {0, 2, 3, 1});
    x = norm("patch_norm", x);

    for (int64_t stage = 0; stage < 4; ++stage) {
      const int64_t resolution = x->shape[1];
      // A map that is a single window has nothing to shift across (torchvision sets the shift to 0).
      const int64_t shift = s.window < resolution ? s.window / 2 : 0;
      Tensor mask =
          shift > 0 ? shifted_window_mask("s" + std::to_string(stage) + "_attn_mask", resolution, shift) : Tensor();
      for (int64_t b = 0; b < s.depths[size_t(stage)]; ++b) {
        const std::string p = "s" + std::to_string(stage) + "b" + std::to_string(b) + "_";
        const bool shifted = b % 2 == 1 && shift > 0;
        x = block(p, x, s.heads << stage, shifted ? shift : 0, shifted ? mask : Tensor());
      }
      if (stage < 3) x = patch_merging("s" + std::to_string(stage) + "_", x);
    }

    x = norm("norm", x);
    Tensor pooled = reduce_mean("avgpool", x, {1, 2}, /*keepdims=*/false);
    Tensor logits = weights_.linear("logits", "head", pooled, s.classes);
    return Program({logits}, "swin");
  }

  const ModelWeights& weights() const { return weights_; }

 private:
  void check_sizes() const {
    const SwinSizes& s = s_;
    if (s.image <= 0 || s.patch <= 0 || s.window <= 0 || s.embed <= 0 || s.heads <= 0 || s.mlp_ratio <= 0 ||
        s.classes <= 0)
      throw std::invalid_argument(
          "swin: every size (image, patch, window, embed, heads, mlp_ratio, classes) must be positive");
    for (int64_t d : s.depths)
      if (d <= 0) throw std::invalid_argument("swin: every stage needs at least one block");
    if (s.image % s.patch != 0)
      throw std::invalid_argument("swin: image " + std::to_string(s.image) + " is not a multiple of the patch " +
                                  std::to_string(s.patch));
    int64_t resolution = s.image / s.patch;
    for (int64_t stage = 0; stage < 4; ++stage) {
      if (resolution % s.window != 0)
        throw std::invalid_argument("swin: stage " + std::to_string(stage) + " map " + std::to_string(resolution) +
                                    " is not a multiple of the window " + std::to_string(s.window));
      if ((s.embed << stage) % (s.heads << stage) != 0)
        throw std::invalid_argument("swin: embed " + std::to_string(s.embed) + " does not divide among " +
                                    std::to_string(s.heads) + " heads");
      if (stage < 3 && resolution % 2 != 0)
        throw std::invalid_argument("swin: stage " + std::to_string(stage) + " map " + std::to_string(resolution) +
                                    " is odd and cannot be merged");
      resolution /= 2;
    }
  }

  Tensor norm(const std::string& name, const Tensor& x) { return weights_.layer_norm(name, x, kLayerNormEpsilon); }

  Tensor linear(const std::string& name, const Tensor& x, int64_t out, bool bias = true) {
    return weights_.linear(name, x, out, bias);
  }

  // Region label of a row (or column) of the shifted map: torchvision's slices [0, R - window),
  // [R - window, R - shift) and [R - shift, R).
  Expr region(const Expr& coordinate, int64_t resolution, int64_t shift) const {
    return select(lt(coordinate, resolution - s_.window), Expr(int64_t{0}),
                  select(lt(coordinate, resolution - shift), Expr(int64_t{1}), Expr(int64_t{2})));
  }

  // mask[w, i, j] = -100 where tokens i and j of window w come from different regions of the rolled map, else 0.
  Tensor shifted_window_mask(const std::string& name, int64_t resolution, int64_t shift) const {
    const int64_t ws = s_.window, per_side = resolution / ws, tokens = ws * ws;
    auto label = [&](const Expr& w, const Expr& token) {
      Expr row = (w / per_side) * ws + token / ws, col = (w % per_side) * ws + token % ws;
      return region(row, resolution, shift) * 3 + region(col, resolution, shift);
    };
    return compute(name, {per_side * per_side, tokens, tokens}, [&](const Axes& i) {
      return select(ne(label(i[0], i[1]), label(i[0], i[2])), Expr(-100.0), Expr(0.0));
    });
  }

  Tensor block(const std::string& p, const Tensor& input, int64_t heads, int64_t shift, const Tensor& mask) {
    const int64_t resolution = input->shape[1], channels = input->shape[3], ws = s_.window, tokens = ws * ws;
    const int64_t windows = (resolution / ws) * (resolution / ws), head_dim = channels / heads;

    Tensor x = norm(p + "norm1", input);
    if (shift > 0) x = roll(p + "shift", x, {-shift, -shift}, {1, 2});
    x = window_partition(p + "windows", x, ws);  // [windows, ws, ws, C]
    Tensor qkv = linear(p + "qkv", x, 3 * channels);

    // Head-major [windows * heads, tokens, head_dim] views of q, k and v.
    auto split_heads = [&](const std::string& name, int64_t part) {
      return compute(p + name, {windows * heads, tokens, head_dim}, [&](const Axes& i) {
        return qkv(i[0] / heads, i[1] / ws, i[1] % ws, part * channels + (i[0] % heads) * head_dim + i[2]);
      });
    };
    Tensor q = split_heads("q", 0), k = split_heads("k", 1), v = split_heads("v", 2);
    Tensor context = swin_window_attention(weights_, p, q, k, v, heads, ws, mask);
    Tensor merged = compute(p + "merge_heads", {windows, ws, ws, channels}, [&](const Axes& i) {
      return context(i[0] * heads + i[3] / head_dim, i[1] * ws + i[2], i[3] % head_dim);
    });
    Tensor attended = linear(p + "proj", merged, channels);
    attended = window_reverse(p + "unwindow", attended, ws, resolution, resolution);
    if (shift > 0) attended = roll(p + "unshift", attended, {shift, shift}, {1, 2});
    x = add(p + "add1", input, attended);

    Tensor hidden = gelu(p + "gelu", linear(p + "fc1", norm(p + "norm2", x), s_.mlp_ratio * channels));
    return add(p + "add2", x, linear(p + "fc2", hidden, channels));
  }

  // [1, R, R, C] -> [1, R/2, R/2, 2C]: the 2x2 neighbourhood concatenated on channels, normalized, reduced.
  Tensor patch_merging(const std::string& p, const Tensor& x) {
    const int64_t half = x->shape[1] / 2, c = x->shape[3];
    Tensor gathered = compute(p + "merge", {1, half, half, 4 * c}, [&](const Axes& i) {
      Expr part = i[3] / c;
      return x(i[0], 2 * i[1] + part % 2, 2 * i[2] + part / 2, i[3] % c);
    });
    return linear(p + "reduction", norm(p + "merge_norm", gathered), 2 * c, /*bias=*/false);
  }

  const SwinSizes s_;
  ModelWeights weights_;
};

}  // namespace

Tensor swin_window_attention(ModelWeights& weights, const std::string& prefix, const Tensor& q, const Tensor& k,
                             const Tensor& v, int64_t heads, int64_t window, const Tensor& mask) {
  const int64_t ws = window, tokens = ws * ws, head_dim = q->shape[2];
  Tensor scores = batch_matmul(prefix + "scores", q, k, false, true);

  Tensor table = weights.placeholder(prefix + "rel_bias_table", {(2 * ws - 1) * (2 * ws - 1), heads}, {-0.04, 0.04});
  // [heads, tokens, tokens], as torchvision permutes it, so that the logits read it along their last axis. Gathered as
  // [tokens, tokens, heads], each key's bias lay `heads` floats from the next: the third stage's logits and softmax
  // took 244 us a block against 199 head-major (the generated stage alone, 2 threads, Zen 4).
  Tensor bias = compute(prefix + "rel_bias", {heads, tokens, tokens}, [&](const Axes& i) {
    return table((i[1] / ws - i[2] / ws + (ws - 1)) * (2 * ws - 1) + i[1] % ws - i[2] % ws + (ws - 1), i[0]);
  });
  const double scale = 1.0 / std::sqrt(double(head_dim));
  Tensor logits = compute(prefix + "attn_logits", scores->shape, [&](const Axes& i) {
    Expr l = scores(i) * scale + bias(i[0] % heads, i[1], i[2]);
    return mask ? l + mask(i[0] / heads, i[1], i[2]) : l;
  });
  Tensor probs = softmax(prefix + "attn", logits, -1);
  return batch_matmul(prefix + "context", probs, v);  // [windows * heads, tokens, head_dim]
}

Program swin(const SwinSizes& sizes) { return SwinBuilder(sizes).build(); }

std::vector<std::string> swin_weight_names(const SwinSizes& sizes) { return weights_of<SwinBuilder>(sizes).names(); }

InputRanges swin_input_ranges(const SwinSizes& sizes) { return weights_of<SwinBuilder>(sizes).ranges(); }

}  // namespace ingot
