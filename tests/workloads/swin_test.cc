#include "workloads/swin.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "interp/interpreter.h"
#include "workloads/registry.h"

namespace ingot {
namespace {

// torchvision's attention mask for shifted windows, with its slice-assignment algorithm: label the regions of the
// padded map, partition the labels into windows, and mask (-100) pairs of tokens whose labels differ.
std::vector<double> reference_mask(int64_t resolution, int64_t window, int64_t shift) {
  std::vector<std::vector<int64_t>> label(size_t(resolution), std::vector<int64_t>(size_t(resolution), 0));
  const int64_t R = resolution;
  const int64_t starts[3] = {0, R - window, R - shift}, ends[3] = {R - window, R - shift, R};
  int64_t count = 0;
  for (int h = 0; h < 3; ++h)
    for (int w = 0; w < 3; ++w, ++count)
      for (int64_t r = starts[h]; r < ends[h]; ++r)
        for (int64_t c = starts[w]; c < ends[w]; ++c) label[size_t(r)][size_t(c)] = count;
  const int64_t per_side = R / window, tokens = window * window;
  std::vector<double> mask;
  for (int64_t wr = 0; wr < per_side; ++wr)
    for (int64_t wc = 0; wc < per_side; ++wc)
      for (int64_t i = 0; i < tokens; ++i)
        for (int64_t j = 0; j < tokens; ++j) {
          int64_t li = label[size_t(wr * window + i / window)][size_t(wc * window + i % window)];
          int64_t lj = label[size_t(wr * window + j / window)][size_t(wc * window + j % window)];
          mask.push_back(li != lj ? -100.0 : 0.0);
        }
  return mask;
}

// torchvision's relative_position_index: coordinates differences shifted to be non-negative, flattened.
int64_t reference_relative_index(int64_t i, int64_t j, int64_t window) {
  int64_t dh = i / window - j / window + window - 1, dw = i % window - j % window + window - 1;
  return dh * (2 * window - 1) + dw;
}

using Grid = std::vector<std::vector<std::vector<double>>>;  // [row][column][channel]

Grid layer_norm(const Grid& x, const HostTensor& gamma, const HostTensor& beta) {
  Grid y = x;
  for (auto& row : y)
    for (auto& v : row) {
      const double n = double(v.size());
      double mean = 0, var = 0;
      for (double e : v) mean += e / n;
      for (double e : v) var += (e - mean) * (e - mean) / n;
      for (size_t c = 0; c < v.size(); ++c)
        v[c] = (v[c] - mean) / std::sqrt(var + 1e-5) * gamma.get(int64_t(c)) + beta.get(int64_t(c));
    }
  return y;
}

// w [out, in] times v plus b.
std::vector<double> linear(const std::vector<double>& v, const HostTensor& w, const HostTensor& b) {
  const int64_t out = w.shape()[0], in = w.shape()[1];
  std::vector<double> y(static_cast<size_t>(out));
  for (int64_t o = 0; o < out; ++o) {
    double acc = b.get(o);
    for (int64_t k = 0; k < in; ++k) acc += w.get(o * in + k) * v[size_t(k)];
    y[size_t(o)] = acc;
  }
  return y;
}

// One Swin block (torchvision's SwinTransformerBlock) in double with plain loops, on an R x R x C map, straight
// from the placeholders: roll by -shift, attention inside each window with the relative position bias and (when
// shifted) the region mask, roll back, residual, then the MLP with its residual.
Grid reference_block(const Grid& x, const TensorMap& in, const std::string& p, int64_t heads, int64_t window,
                     int64_t shift) {
  auto w = [&](const std::string& name) -> const HostTensor& { return in.at(p + name); };
  const int64_t R = int64_t(x.size()), C = int64_t(x[0][0].size()), d = C / heads, tokens = window * window;
  const Grid normed = layer_norm(x, w("norm1_gamma"), w("norm1_beta"));
  Grid shifted = normed;
  for (int64_t r = 0; r < R; ++r)
    for (int64_t c = 0; c < R; ++c)
      shifted[size_t(r)][size_t(c)] = normed[size_t((r + shift) % R)][size_t((c + shift) % R)];
  auto region = [&](int64_t coordinate) { return coordinate < R - window ? 0 : coordinate < R - shift ? 1 : 2; };
  Grid attended = shifted;
  for (int64_t wr = 0; wr < R / window; ++wr)
    for (int64_t wc = 0; wc < R / window; ++wc) {
      std::vector<std::vector<double>> qkv;
      std::vector<int64_t> label;
      for (int64_t t = 0; t < tokens; ++t) {
        const int64_t r = wr * window + t / window, c = wc * window + t % window;
        qkv.push_back(linear(shifted[size_t(r)][size_t(c)], w("qkv_weight"), w("qkv_bias")));
        label.push_back(region(r) * 3 + region(c));
      }
      for (int64_t i = 0; i < tokens; ++i) {
        std::vector<double> context(size_t(C), 0.0);
        for (int64_t h = 0; h < heads; ++h) {
          std::vector<double> logit(static_cast<size_t>(tokens));
          double max_logit = -1e300, total = 0;
          for (int64_t j = 0; j < tokens; ++j) {
            double dot = 0;
            for (int64_t e = 0; e < d; ++e)
              dot += qkv[size_t(i)][size_t(h * d + e)] * qkv[size_t(j)][size_t(C + h * d + e)];
            logit[size_t(j)] = dot / std::sqrt(double(d)) +
                               w("rel_bias_table").get(reference_relative_index(i, j, window) * heads + h) +
                               (shift > 0 && label[size_t(i)] != label[size_t(j)] ? -100.0 : 0.0);
            max_logit = std::max(max_logit, logit[size_t(j)]);
          }
          for (double& l : logit) total += (l = std::exp(l - max_logit));
          for (int64_t j = 0; j < tokens; ++j)
            for (int64_t e = 0; e < d; ++e)
              context[size_t(h * d + e)] += logit[size_t(j)] / total * qkv[size_t(j)][size_t(2 * C + h * d + e)];
        }
        attended[size_t(wr * window + i / window)][size_t(wc * window + i % window)] =
            linear(context, w("proj_weight"), w("proj_bias"));
      }
    }
  Grid y = x;
  for (int64_t r = 0; r < R; ++r)
    for (int64_t c = 0; c < R; ++c)
      for (int64_t ch = 0; ch < C; ++ch)
        y[size_t(r)][size_t(c)][size_t(ch)] +=
            attended[size_t((r - shift + R) % R)][size_t((c - shift + R) % R)][size_t(ch)];
  const Grid normed2 = layer_norm(y, w("norm2_gamma"), w("norm2_beta"));
  for (int64_t r = 0; r < R; ++r)
    for (int64_t c = 0; c < R; ++c) {
      std::vector<double> hidden = linear(normed2[size_t(r)][size_t(c)], w("fc1_weight"), w("fc1_bias"));
      for (double& z : hidden) z = 0.5 * z * (1.0 + std::erf(z / std::sqrt(2.0)));
      std::vector<double> out = linear(hidden, w("fc2_weight"), w("fc2_bias"));
      for (int64_t ch = 0; ch < C; ++ch) y[size_t(r)][size_t(c)][size_t(ch)] += out[size_t(ch)];
    }
  return y;
}

Grid to_grid(const HostTensor& t) {  // [1, R, R, C]
  const int64_t R = t.shape()[1], C = t.shape()[3];
  Grid g(static_cast<size_t>(R),
         std::vector<std::vector<double>>(static_cast<size_t>(R), std::vector<double>(static_cast<size_t>(C))));
  for (int64_t r = 0; r < R; ++r)
    for (int64_t c = 0; c < R; ++c)
      for (int64_t ch = 0; ch < C; ++ch) g[size_t(r)][size_t(c)][size_t(ch)] = t.get((r * R + c) * C + ch);
  return g;
}

TEST(Swin, BlocksMatchPlainLoops) {
  // Window 4 over an 8 x 8 map (shift 2) in stage 0, and the small model's 2 x 2 windows; each block starts from
  // the interpreter's input to it, so a mismatch points at that block.
  for (const SwinSizes& s : {SwinSizes::small(), SwinSizes{64, 2, 4, 8, {2, 2, 2, 2}, 2, 2, 3}}) {
    Program p = swin(s);
    for (uint64_t seed : {1u, 2u}) {
      TensorMap in = random_inputs(p, seed);
      TensorMap out = interpret(p, in);
      for (const auto& [block, input, heads, shift] :
           {std::tuple<std::string, std::string, int64_t, int64_t>{"s0b0_", "patch_norm", s.heads, 0},
            {"s0b1_", "s0b0_add2", s.heads, s.window / 2},
            {"s1b1_", "s1b0_add2", 2 * s.heads, s.window / 2}}) {
        Grid expected = reference_block(to_grid(out.at(input)), in, block, heads, s.window, shift);
        const HostTensor& actual = out.at(block + "add2");
        HostTensor expected_tensor(DType::kFloat32, actual.shape());
        const int64_t R = actual.shape()[1], C = actual.shape()[3];
        for (int64_t r = 0; r < R; ++r)
          for (int64_t c = 0; c < R; ++c)
            for (int64_t ch = 0; ch < C; ++ch)
              expected_tensor.set((r * R + c) * C + ch, expected[size_t(r)][size_t(c)][size_t(ch)]);
        Comparison cmp = compare(actual, expected_tensor, 1e-3, 1e-4);
        EXPECT_TRUE(cmp.ok) << "window " << s.window << " block " << block << " seed " << seed << ": " << cmp.message;
      }
    }
  }
}

TEST(Swin, ShiftedWindowMaskIsTorchvisions) {
  // The small model's masks (2 x 2 windows shifted by 1) and 6 x 6 windows shifted by 3 on a 48 x 48 map.
  for (const auto& [sizes, stage, resolution] :
       {std::tuple{SwinSizes::small(), 0, 16}, std::tuple{SwinSizes::small(), 1, 8},
        std::tuple{SwinSizes::small(), 2, 4}, std::tuple{SwinSizes{96, 2, 6, 6, {2, 2, 2, 2}, 1, 1, 2}, 0, 48}}) {
    Program p = swin(sizes);
    TensorMap out = interpret(p, random_inputs(p, 1));
    const HostTensor& mask = out.at("s" + std::to_string(stage) + "_attn_mask");
    std::vector<double> expected = reference_mask(resolution, sizes.window, sizes.window / 2);
    ASSERT_EQ(mask.num_elements(), int64_t(expected.size())) << stage;
    int64_t masked = 0;
    for (int64_t e = 0; e < mask.num_elements(); ++e) {
      ASSERT_EQ(mask.get(e), expected[size_t(e)]) << "stage " << stage << " element " << e;
      masked += mask.get(e) != 0;
    }
    EXPECT_GT(masked, 0);
  }
}

TEST(Swin, RelativePositionBiasIsGatheredByTorchvisionsIndex) {
  const SwinSizes s{96, 2, 6, 6, {2, 2, 2, 2}, 1, 1, 2};  // window 6: 36 tokens, a table of 121 rows
  Program p = swin(s);
  TensorMap in = random_inputs(p, 2);
  TensorMap out = interpret(p, in);
  for (const char* block : {"s0b0_", "s1b1_", "s3b0_"}) {
    const HostTensor& table = in.at(std::string(block) + "rel_bias_table");
    const HostTensor& bias = out.at(std::string(block) + "rel_bias");
    const int64_t heads = table.shape()[1], tokens = 36;
    ASSERT_EQ(table.shape()[0], 121);
    ASSERT_EQ(bias.shape(), (std::vector<int64_t>{heads, tokens, tokens}));
    for (int64_t i = 0; i < tokens; ++i)
      for (int64_t j = 0; j < tokens; ++j)
        for (int64_t h = 0; h < heads; ++h)
          ASSERT_EQ(bias.get((h * tokens + i) * tokens + j), table.get(reference_relative_index(i, j, 6) * heads + h))
              << block << " " << i << " " << j << " " << h;
  }
}

TEST(Swin, OddBlocksShiftUnlessTheMapIsOneWindow) {
  Program p = swin();
  for (int64_t b = 0; b < 18; ++b) {
    const std::string block = "s2b" + std::to_string(b) + "_";
    EXPECT_EQ(bool(p.find(block + "shift")), b % 2 == 1) << block;
    EXPECT_EQ(bool(p.find(block + "unshift")), b % 2 == 1) << block;
  }
  EXPECT_TRUE(p.find("s0b1_shift") && p.find("s1b1_shift"));
  // Stage 4's 7 x 7 map is a single window: torchvision sets its shift to 0, so no roll and no mask.
  EXPECT_FALSE(p.find("s3b1_shift"));
  EXPECT_FALSE(p.find("s3_attn_mask"));
  EXPECT_EQ(p.find("s0_attn_mask")->shape, (std::vector<int64_t>{64, 49, 49}));
  EXPECT_EQ(p.find("s2_attn_mask")->shape, (std::vector<int64_t>{4, 49, 49}));
}

TEST(Swin, PaperSizeShapes) {
  Program p = swin();
  EXPECT_EQ(p.name(), "swin");
  ASSERT_EQ(p.outputs().size(), 1u);
  EXPECT_EQ(p.outputs()[0]->name, "logits");
  EXPECT_EQ(p.outputs()[0]->shape, (std::vector<int64_t>{1, 1000}));
  EXPECT_EQ(p.find("patch_norm")->shape, (std::vector<int64_t>{1, 56, 56, 128}));
  EXPECT_EQ(p.find("s0b0_windows")->shape, (std::vector<int64_t>{64, 7, 7, 128}));
  // 64 windows x 4 heads, 49 tokens, head dim 32; stage 3: 4 windows x 16 heads.
  EXPECT_EQ(p.find("s0b0_q")->shape, (std::vector<int64_t>{256, 49, 32}));
  EXPECT_EQ(p.find("s2b5_scores")->shape, (std::vector<int64_t>{64, 49, 49}));
  EXPECT_EQ(p.find("s3b1_rel_bias_table")->shape, (std::vector<int64_t>{169, 32}));
  EXPECT_EQ(p.find("s0_reduction_weight")->shape, (std::vector<int64_t>{256, 512}));
  EXPECT_EQ(p.find("s2_merge")->shape, (std::vector<int64_t>{1, 7, 7, 2048}));
  EXPECT_EQ(p.find("s3b1_fc1_weight")->shape, (std::vector<int64_t>{4096, 1024}));
  const std::vector<std::string> weights = swin_weight_names(SwinSizes{});
  EXPECT_EQ(p.placeholders().size(), weights.size() + 1);  // the image
  for (const std::string& w : weights) EXPECT_TRUE(p.find(w)->is_placeholder()) << w;
}

TEST(Swin, PatchMergingTakesTorchvisionsNeighbourOrder) {
  Program p = swin(SwinSizes::small());
  TensorMap out = interpret(p, random_inputs(p, 4));
  // The input of stage 0's merging is the last block's output s0b1_add2 [1, 16, 16, C].
  const HostTensor &x = out.at("s0b1_add2"), &merged = out.at("s0_merge");
  const int64_t R = 16, C = 16, half = 8;
  const int64_t offsets[4][2] = {{0, 0}, {1, 0}, {0, 1}, {1, 1}};  // x0, x1, x2, x3 as (row, column)
  for (int64_t h = 0; h < half; ++h)
    for (int64_t w = 0; w < half; ++w)
      for (int64_t part = 0; part < 4; ++part)
        for (int64_t c = 0; c < C; ++c) {
          int64_t r = 2 * h + offsets[part][0], col = 2 * w + offsets[part][1];
          ASSERT_EQ(merged.get((h * half + w) * 4 * C + part * C + c), x.get((r * R + col) * C + c));
        }
}

TEST(Swin, RejectsBadSizes) {
  SwinSizes s;
  s.window = 8;  // 56 is not a multiple of 8
  EXPECT_THROW(swin(s), std::invalid_argument);
  s = SwinSizes{};
  s.heads = 3;  // 128 channels over 3 heads
  EXPECT_THROW(swin(s), std::invalid_argument);
  s = SwinSizes{};
  s.depths[2] = 0;
  EXPECT_THROW(swin(s), std::invalid_argument);
}

}  // namespace
}  // namespace ingot
