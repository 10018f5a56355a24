// Normalization operators in inference form: batch_norm (per channel, running statistics) and layer_norm
// (statistics over the trailing axes, computed as reduction TEs followed by an element-wise TE).
#pragma once

#include <cstdint>
#include <string>

#include "ir/tensor.h"

namespace ingot {

// x: [N, C, ...] (rank >= 2, channel axis 1); gamma, beta, mean, var: [C].
// y = (x - mean[c]) * gamma[c] / sqrt(var[c] + epsilon) + beta[c]. One element-wise TE.
Tensor batch_norm(const std::string& name, const Tensor& x, const Tensor& gamma, const Tensor& beta, const Tensor& mean,
                  const Tensor& var, double epsilon = 1e-5);

// Normalizes over axes [axis, rank) (ONNX LayerNormalization; axis = -1 is PyTorch LayerNorm(last dim)).
// gamma and beta have shape x.shape[axis:] and are optional (null). Three TEs: `name_mean` (sum of x / D),
// `name_var` (sum of (x - mean)^2 / D, the biased variance) and `name` ((x - mean) * rsqrt(var + epsilon) *
// gamma + beta); the statistics keep the normalized axes out of their shape: [x.shape[:axis]].
Tensor layer_norm(const std::string& name, const Tensor& x, const Tensor& gamma, const Tensor& beta, int64_t axis = -1,
                  double epsilon = 1e-5);

}  // namespace ingot
