// The BERT encoder (BERT-base by default: 12 layers, hidden 768, 12 heads, intermediate 3072, sequence 128),
// batch 1, fp32, as tensor expressions built from ops/. Use it to build the Souffle paper's BERT or a smaller
// encoder of the same structure; the registry exposes it as "bert".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "interp/interpreter.h"
#include "ir/program.h"
#include "workloads/model_weights.h"

namespace ingot {

struct BertSizes {
  int64_t layers = 12;
  int64_t hidden = 768;
  int64_t heads = 12;
  int64_t intermediate = 3072;
  int64_t sequence = 128;
  // A size small enough for the interpreter in unit tests.
  static BertSizes small() { return BertSizes{2, 16, 2, 32, 8}; }
};

// The encoder stack only: the input is the embeddings' output (after the embedding layer norm), a placeholder
// "embeddings"[sequence, hidden], so the embedding tables are not part of the program and the parameter count is
// the encoder's, 12 x 7,087,872 = 85,054,464 for BERT-base (HuggingFace BertModel without its embeddings and
// pooler). Every token attends to every token (no padding mask). Layer l (HuggingFace BertLayer, post-norm):
//   q, k, v = Linear(hidden, hidden)(x), split into heads [heads, sequence, hidden / heads]
//   context = softmax(q k^T / sqrt(hidden / heads)) v, heads merged back to [sequence, hidden]
//   a = LayerNorm(x + Linear(hidden, hidden)(context))
//   out = LayerNorm(a + Linear(intermediate, hidden)(GELU(Linear(hidden, intermediate)(a))))
// Layer norms use epsilon 1e-12 (BERT's); GELU is the exact (erf) form.
//
// Placeholders: embeddings; per layer "l<l>_" + {"query", "key", "value", "attn_out", "ffn_in", "ffn_out"} +
// {"_weight" [out, in], "_bias"} and "l<l>_" + {"attn_norm", "ffn_norm"} + {"_gamma", "_beta"}. The output of
// layer l is the compute "l<l>_ffn_norm" [sequence, hidden]; the program's output is the last layer's.
// Program name "bert". Throws std::invalid_argument when a size is not positive or hidden is not a multiple of
// heads.
Program bert(const BertSizes& sizes = {});

// The weight placeholders, in build order (what parameter counts add up).
std::vector<std::string> bert_weight_names(const BertSizes& sizes);

// Weight ranges near PyTorch's initialisation: Linear weights and biases +-1/sqrt(fan_in); layer-norm gammas
// [0.9, 1.1) and betas [-0.1, 0.1). The embeddings keep [-1, 1).
InputRanges bert_input_ranges(const BertSizes& sizes);

// The pieces of a layer that the task workloads (workloads/tasks.h) cut out of it, as the encoder builds them.
// BERT's layer-norm epsilon.
constexpr double kBertLayerNormEpsilon = 1e-12;
// The attention probabilities of raw scores [heads, sequence, sequence] (q k^T): `<prefix>scores_scaled` (scores /
// sqrt(head_dim)), then softmax over the last axis, `<prefix>attn` and its statistics (ops/softmax.h).
Tensor bert_attention_probs(const std::string& prefix, const Tensor& scores, int64_t head_dim);
// The feed-forward layer's first half: GELU(Linear(hidden, intermediate)(x)), computes `<prefix>ffn_in` and
// `<prefix>gelu`, weights `<prefix>ffn_in_{weight,bias}`.
Tensor bert_ffn_expand(ModelWeights& weights, const std::string& prefix, const Tensor& x, int64_t intermediate);

}  // namespace ingot
