// Linear algebra operators: dense (PyTorch Linear), matmul (ONNX MatMul with batch broadcasting and optional
// transposes), batch_matmul and gemm (ONNX Gemm). The product is one reduction TE; a bias or C epilogue is a
// second, element-wise TE (suffix "_matmul" on the product; see ops/op_conventions.h).
#pragma once

#include <string>

#include "ir/tensor.h"

namespace ingot {

// y[..., n] = sum_k x[..., k] * weight[n, k] (+ bias[n]): PyTorch Linear's weight layout [out, in]. x has rank
// >= 1. Without bias: one TE `name`; with bias: `name_matmul` then `name`.
Tensor dense(const std::string& name, const Tensor& x, const Tensor& weight, const Tensor& bias = Tensor());

// ONNX MatMul (numpy matmul) semantics: a rank-1 operand is promoted to a matrix (a: [1, K], b: [K, 1]) and the
// promoted dimension dropped from the result; for rank > 2 the leading (batch) dimensions broadcast. transpose_a
// / transpose_b swap the last two dimensions of a rank >= 2 operand before multiplying. One TE.
Tensor matmul(const std::string& name, const Tensor& a, const Tensor& b, bool transpose_a = false,
              bool transpose_b = false);

// a: [B, M, K] (or [B, K, M] with transpose_a), b: [B, K, N] (or [B, N, K] with transpose_b) -> [B, M, N]; a batch
// of 1 on either side broadcasts. Attention's Q K^T is batch_matmul(name, q, k, false, true). One TE.
Tensor batch_matmul(const std::string& name, const Tensor& a, const Tensor& b, bool transpose_a = false,
                    bool transpose_b = false);

struct GemmAttrs {
  double alpha = 1.0;
  double beta = 1.0;
  bool transpose_a = false;
  bool transpose_b = false;
};
// ONNX Gemm: alpha * A' B' + beta * C with A' = transpose_a ? A^T : A (2-D), C optional and unidirectionally
// broadcast to [M, N]. Without C one TE (alpha folded into the reduction); with C `name_matmul` then `name`.
Tensor gemm(const std::string& name, const Tensor& a, const Tensor& b, const Tensor& c = Tensor(),
            const GemmAttrs& attrs = {});

}  // namespace ingot
