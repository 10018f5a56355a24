#include "workloads/bert.h"

#include <cmath>
#include <stdexcept>

#include "ops/elementwise.h"
#include "ops/linear.h"
#include "ops/softmax.h"
#include "workloads/model_weights.h"

namespace ingot {

namespace {

using Axes = std::vector<Expr>;

// Builds the encoder and records each weight placeholder as it is created, so the names always match the
// program.
class BertBuilder {
 public:
  explicit BertBuilder(const BertSizes& s) : s_(s) {}

  Program build() {
    const BertSizes& s = s_;
    if (s.layers <= 0 || s.hidden <= 0 || s.heads <= 0 || s.intermediate <= 0 || s.sequence <= 0)
      throw std::invalid_argument("bert: every size (layers, hidden, heads, intermediate, sequence) must be positive");
    if (s.hidden % s.heads != 0)
      throw std::invalid_argument("bert: hidden " + std::to_string(s.hidden) + " is not a multiple of heads " +
                                  std::to_string(s.heads));
    Tensor x = placeholder("embeddings", {s.sequence, s.hidden});
    for (int64_t l = 0; l < s.layers; ++l) x = layer("l" + std::to_string(l) + "_", x);
    return Program({x}, "bert");
  }

  const ModelWeights& weights() const { return weights_; }

 private:
  Tensor linear(const std::string& name, const Tensor& x, int64_t out) { return weights_.linear(name, x, out); }

  Tensor norm(const std::string& name, const Tensor& x) { return weights_.layer_norm(name, x, kBertLayerNormEpsilon); }

  Tensor layer(const std::string& p, const Tensor& x) {
    const int64_t seq = s_.sequence, hidden = s_.hidden, heads = s_.heads, head_dim = hidden / heads;
    // [sequence, hidden] -> [heads, sequence, head_dim]
    auto split_heads = [&](const std::string& name, const Tensor& t) {
      return compute(p + name, {heads, seq, head_dim}, [&](const Axes& i) { return t(i[1], i[0] * head_dim + i[2]); });
    };
    Tensor q = split_heads("q_heads", linear(p + "query", x, hidden));
    Tensor k = split_heads("k_heads", linear(p + "key", x, hidden));
    Tensor v = split_heads("v_heads", linear(p + "value", x, hidden));
    Tensor scores = batch_matmul(p + "scores", q, k, false, true);
    Tensor probs = bert_attention_probs(p, scores, head_dim);
    Tensor context = batch_matmul(p + "context", probs, v);  // [heads, sequence, head_dim]
    Tensor merged = compute(p + "merge_heads", {seq, hidden},
                            [&](const Axes& i) { return context(i[1] / head_dim, i[0], i[1] % head_dim); });
    Tensor attended = linear(p + "attn_out", merged, hidden);
    Tensor a = norm(p + "attn_norm", add(p + "attn_residual", x, attended));

    Tensor hidden_act = bert_ffn_expand(weights_, p, a, s_.intermediate);
    Tensor ffn = linear(p + "ffn_out", hidden_act, hidden);
    return norm(p + "ffn_norm", add(p + "ffn_residual", a, ffn));
  }

  const BertSizes s_;
  ModelWeights weights_;
};

}  // namespace

Tensor bert_attention_probs(const std::string& prefix, const Tensor& scores, int64_t head_dim) {
  Tensor scaled = mul_scalar(prefix + "scores_scaled", scores, 1.0 / std::sqrt(double(head_dim)));
  return softmax(prefix + "attn", scaled, -1);
}

Tensor bert_ffn_expand(ModelWeights& weights, const std::string& prefix, const Tensor& x, int64_t intermediate) {
  return gelu(prefix + "gelu", weights.linear(prefix + "ffn_in", x, intermediate));
}

Program bert(const BertSizes& sizes) { return BertBuilder(sizes).build(); }

std::vector<std::string> bert_weight_names(const BertSizes& sizes) { return weights_of<BertBuilder>(sizes).names(); }

InputRanges bert_input_ranges(const BertSizes& sizes) { return weights_of<BertBuilder>(sizes).ranges(); }

}  // namespace ingot
