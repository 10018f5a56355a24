#include "workloads/bert.h"

#include <cmath>
#include <stdexcept>

#include "ops/elementwise.h"
#include "ops/linear.h"
#include "ops/norm.h"
#include "ops/softmax.h"

namespace ingot {

namespace {

using Axes = std::vector<Expr>;

// PyTorch's default initialisation bound of a layer's weights and bias.
ValueRange fan_in_range(int64_t fan_in) {
  const double bound = 1.0 / std::sqrt(double(fan_in));
  return {-bound, bound};
}

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

  const std::vector<std::string>& weight_names() const { return weight_names_; }
  const InputRanges& input_ranges() const { return ranges_; }

 private:
  Tensor weight(const std::string& name, std::vector<int64_t> shape, ValueRange range) {
    weight_names_.push_back(name);
    ranges_[name] = range;
    return placeholder(name, std::move(shape));
  }

  Tensor linear(const std::string& name, const Tensor& x, int64_t out) {
    const int64_t in = x->shape.back();
    return dense(name, x, weight(name + "_weight", {out, in}, fan_in_range(in)),
                 weight(name + "_bias", {out}, fan_in_range(in)));
  }

  Tensor norm(const std::string& name, const Tensor& x) {
    const int64_t c = x->shape.back();
    return layer_norm(name, x, weight(name + "_gamma", {c}, {0.9, 1.1}), weight(name + "_beta", {c}, {-0.1, 0.1}), -1,
                      1e-12);
  }

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
    Tensor scaled = mul_scalar(p + "scores_scaled", scores, 1.0 / std::sqrt(double(head_dim)));
    Tensor probs = softmax(p + "attn", scaled, -1);
    Tensor context = batch_matmul(p + "context", probs, v);  // [heads, sequence, head_dim]
    Tensor merged = compute(p + "merge_heads", {seq, hidden},
                            [&](const Axes& i) { return context(i[1] / head_dim, i[0], i[1] % head_dim); });
    Tensor attended = linear(p + "attn_out", merged, hidden);
    Tensor a = norm(p + "attn_norm", add(p + "attn_residual", x, attended));

    Tensor hidden_act = gelu(p + "gelu", linear(p + "ffn_in", a, s_.intermediate));
    Tensor ffn = linear(p + "ffn_out", hidden_act, hidden);
    return norm(p + "ffn_norm", add(p + "ffn_residual", a, ffn));
  }

  const BertSizes s_;
  std::vector<std::string> weight_names_;
  InputRanges ranges_;
};

}  // namespace

Program bert(const BertSizes& sizes) { return BertBuilder(sizes).build(); }

std::vector<std::string> bert_weight_names(const BertSizes& sizes) {
  BertBuilder builder(sizes);
  builder.build();
  return builder.weight_names();
}

InputRanges bert_input_ranges(const BertSizes& sizes) {
  BertBuilder builder(sizes);
  builder.build();
  return builder.input_ranges();
}

}  // namespace ingot
