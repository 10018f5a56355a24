// The weights of a model being built: creates each weight placeholder with the value range PyTorch's
// initialisation would give it and records names and ranges in build order, plus the layers several model builders
// share (Linear, LayerNorm, convolution with folded batch norm). Use it inside a workloads/ model builder.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "interp/interpreter.h"
#include "ir/tensor.h"

namespace ingot {

// PyTorch's default initialisation bound of a layer's weights and bias: uniform in +-1/sqrt(fan_in).
ValueRange fan_in_range(int64_t fan_in);

class ModelWeights {
 public:
  // A weight placeholder, recorded with its range.
  Tensor placeholder(const std::string& name, std::vector<int64_t> shape, ValueRange range);

  // Linear layer over the last axis of x: weight "<weights>_weight" [out, in] then, when `bias`, "<weights>_bias"
  // [out], both fan_in_range(in); the dense compute is named `name`.
  Tensor linear(const std::string& name, const std::string& weights, const Tensor& x, int64_t out, bool bias = true);
  // The same with the weights named after the compute.
  Tensor linear(const std::string& name, const Tensor& x, int64_t out, bool bias = true) {
    return linear(name, name, x, out, bias);
  }

  // Layer norm over the last axis with "<name>_gamma" in [0.9, 1.1) then "<name>_beta" in [-0.1, 0.1): a fresh
  // norm (gamma 1, beta 0) nudged so that random weights still exercise both.
  Tensor layer_norm(const std::string& name, const Tensor& x, double epsilon);

  // Convolution of NCHW x without bias (square kernel, padding kernel / 2 keeps the size at stride 1), weight
  // "<name>_weight" in fan_in_range, then batch norm in folded inference form: the compute "<name>_bn" is
  // y * scale[c] + shift[c], whose placeholders "<name>_bn_scale" [0.9, 1.1) and "<name>_bn_shift" [-0.1, 0.1)
  // stand for gamma and beta (scale and shift folded the running statistics in offline).
  Tensor conv_bn(const std::string& name, const Tensor& x, int64_t out_channels, int64_t kernel, int64_t stride,
                 int64_t groups);

  // Every weight placeholder created so far, in creation order.
  const std::vector<std::string>& names() const { return names_; }
  const InputRanges& ranges() const { return ranges_; }

 private:
  std::vector<std::string> names_;
  InputRanges ranges_;
};

// Builds a model once and returns the weights its builder recorded: what <model>_weight_names and
// <model>_input_ranges read. Builder is constructed from the sizes and has build() and weights().
template <class Builder, class Sizes>
ModelWeights weights_of(const Sizes& sizes) {
  Builder builder(sizes);
  builder.build();
  return builder.weights();
}

}  // namespace ingot
