#include "workloads/bert.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "interp/interpreter.h"
#include "workloads/registry.h"

namespace ingot {
namespace {

using Matrix = std::vector<std::vector<double>>;  // [rows][columns]

// y = x W^T + b with W [out, in] as a placeholder tensor.
Matrix linear(const Matrix& x, const HostTensor& w, const HostTensor& b) {
  const int64_t out = w.shape()[0], in = w.shape()[1];
  Matrix y(x.size(), std::vector<double>(size_t(out)));
  for (size_t r = 0; r < x.size(); ++r)
    for (int64_t o = 0; o < out; ++o) {
      double v = b.get(o);
      for (int64_t k = 0; k < in; ++k) v += x[r][size_t(k)] * w.get(o * in + k);
      y[r][size_t(o)] = v;
    }
  return y;
}

Matrix layer_norm(const Matrix& x, const HostTensor& gamma, const HostTensor& beta) {
  Matrix y = x;
  for (size_t r = 0; r < x.size(); ++r) {
    const double n = double(x[r].size());
    double mean = 0, var = 0;
    for (double v : x[r]) mean += v / n;
    for (double v : x[r]) var += (v - mean) * (v - mean) / n;
    for (size_t c = 0; c < x[r].size(); ++c)
      y[r][c] = (x[r][c] - mean) / std::sqrt(var + 1e-12) * gamma.get(int64_t(c)) + beta.get(int64_t(c));
  }
  return y;
}

// One BERT layer in double with plain loops, straight from the placeholders: independent of the TE builders.
Matrix reference_layer(const BertSizes& s, const TensorMap& in, int64_t layer, const Matrix& x) {
  const std::string p = "l" + std::to_string(layer) + "_";
  auto w = [&](const std::string& name) -> const HostTensor& { return in.at(p + name); };
  const int64_t d = s.hidden / s.heads;
  Matrix q = linear(x, w("query_weight"), w("query_bias"));
  Matrix k = linear(x, w("key_weight"), w("key_bias"));
  Matrix v = linear(x, w("value_weight"), w("value_bias"));
  Matrix context(size_t(s.sequence), std::vector<double>(size_t(s.hidden), 0.0));
  for (int64_t h = 0; h < s.heads; ++h)
    for (int64_t i = 0; i < s.sequence; ++i) {
      std::vector<double> score(size_t(s.sequence));
      double max_score = -1e300, total = 0;
      for (int64_t j = 0; j < s.sequence; ++j) {
        double dot = 0;
        for (int64_t e = 0; e < d; ++e) dot += q[size_t(i)][size_t(h * d + e)] * k[size_t(j)][size_t(h * d + e)];
        score[size_t(j)] = dot / std::sqrt(double(d));
        max_score = std::max(max_score, score[size_t(j)]);
      }
      for (double& sc : score) total += (sc = std::exp(sc - max_score));
      for (int64_t j = 0; j < s.sequence; ++j)
        for (int64_t e = 0; e < d; ++e)
          context[size_t(i)][size_t(h * d + e)] += score[size_t(j)] / total * v[size_t(j)][size_t(h * d + e)];
    }
  Matrix attended = linear(context, w("attn_out_weight"), w("attn_out_bias"));
  for (size_t r = 0; r < x.size(); ++r)
    for (size_t c = 0; c < x[r].size(); ++c) attended[r][c] += x[r][c];
  Matrix a = layer_norm(attended, w("attn_norm_gamma"), w("attn_norm_beta"));
  Matrix hidden = linear(a, w("ffn_in_weight"), w("ffn_in_bias"));
  for (auto& row : hidden)
    for (double& z : row) z = 0.5 * z * (1.0 + std::erf(z / std::sqrt(2.0)));
  Matrix out = linear(hidden, w("ffn_out_weight"), w("ffn_out_bias"));
  for (size_t r = 0; r < x.size(); ++r)
    for (size_t c = 0; c < x[r].size(); ++c) out[r][c] += a[r][c];
  return layer_norm(out, w("ffn_norm_gamma"), w("ffn_norm_beta"));
}

void expect_matches_reference(const BertSizes& s, uint64_t seed) {
  Program p = bert(s);
  TensorMap in = random_inputs(p, seed);
  TensorMap out = interpret(p, in);
  Matrix x(size_t(s.sequence), std::vector<double>(size_t(s.hidden)));
  for (int64_t r = 0; r < s.sequence; ++r)
    for (int64_t c = 0; c < s.hidden; ++c) x[size_t(r)][size_t(c)] = in.at("embeddings").get(r * s.hidden + c);
  for (int64_t l = 0; l < s.layers; ++l) {
    // Each layer starts from the interpreter's previous output, so a mismatch points at its own layer.
    Matrix expected_rows = reference_layer(s, in, l, x);
    HostTensor expected(DType::kFloat32, {s.sequence, s.hidden});
    for (int64_t r = 0; r < s.sequence; ++r)
      for (int64_t c = 0; c < s.hidden; ++c) expected.set(r * s.hidden + c, expected_rows[size_t(r)][size_t(c)]);
    const HostTensor& actual = out.at("l" + std::to_string(l) + "_ffn_norm");
    Comparison c = compare(actual, expected, 1e-3, 1e-4);
    EXPECT_TRUE(c.ok) << "layer " << l << ": " << c.message;
    for (int64_t r = 0; r < s.sequence; ++r)
      for (int64_t col = 0; col < s.hidden; ++col) x[size_t(r)][size_t(col)] = actual.get(r * s.hidden + col);
  }
}

TEST(Bert, SmallLayersMatchPlainLoops) {
  for (uint64_t seed : {1u, 6u}) expect_matches_reference(BertSizes::small(), seed);
  // One head and an intermediate narrower than hidden: head splitting and the FFN shapes are not symmetric.
  expect_matches_reference(BertSizes{1, 12, 1, 8, 5}, 3);
  expect_matches_reference(BertSizes{1, 24, 4, 40, 6}, 8);
}

TEST(Bert, PaperSizeStructureAndParameters) {
  Program p = bert();
  EXPECT_EQ(p.name(), "bert");
  ASSERT_EQ(p.outputs().size(), 1u);
  EXPECT_EQ(p.outputs()[0]->name, "l11_ffn_norm");
  EXPECT_EQ(p.outputs()[0]->shape, (std::vector<int64_t>{128, 768}));
  EXPECT_EQ(p.find("l0_scores")->shape, (std::vector<int64_t>{12, 128, 128}));
  EXPECT_EQ(p.find("l0_q_heads")->shape, (std::vector<int64_t>{12, 128, 64}));
  EXPECT_EQ(p.find("l3_ffn_in_weight")->shape, (std::vector<int64_t>{3072, 768}));
  // The only non-weight placeholder is the embeddings' output.
  const std::vector<std::string> weights = bert_weight_names(BertSizes{});
  EXPECT_EQ(weights.size(), 12u * 16);
  EXPECT_EQ(p.placeholders().size(), weights.size() + 1);
  for (const std::string& w : weights) EXPECT_TRUE(p.find(w)->is_placeholder()) << w;
}

TEST(Bert, RejectsBadSizes) {
  EXPECT_THROW(bert(BertSizes{0, 768, 12, 3072, 128}), std::invalid_argument);
  EXPECT_THROW(bert(BertSizes{12, 768, 10, 3072, 128}), std::invalid_argument);  // 768 heads of 76.8
}

}  // namespace
}  // namespace ingot
